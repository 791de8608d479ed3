package web

// escalationRoutes are the console's pages for the escalation queue, proposals and their decisions (owners).
var escalationRoutes = []ConsoleRoute{}
