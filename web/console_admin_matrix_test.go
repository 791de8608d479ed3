package web_test

// adminCases are the authorization matrix's cases for these routes.
var adminCases = map[string]matrixCase{}
