package web_test

// inboxCases are the authorization matrix's cases for these routes.
var inboxCases = map[string]matrixCase{}
