package web_test

// escalationCases are the authorization matrix's cases for these routes.
var escalationCases = map[string]matrixCase{}
