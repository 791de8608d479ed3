package web_test

// figureCases are the authorization matrix's cases for these routes.
var figureCases = map[string]matrixCase{}
