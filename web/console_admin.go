package web

// adminRoutes are the console's pages for targets, API tokens and callbacks (admins).
var adminRoutes = []ConsoleRoute{}
