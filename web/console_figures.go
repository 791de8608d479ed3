package web

// figureRoutes are the console's pages for the per-tenant figures, charts and CSV export (managers).
var figureRoutes = []ConsoleRoute{}
