package web

// inboxRoutes are the console's pages for quarantine and audit findings review (owners).
var inboxRoutes = []ConsoleRoute{}
