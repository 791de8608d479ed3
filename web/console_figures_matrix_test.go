package web_test

import (
	"net/http"

	"settle/ledger"
)

// figureCases are the authorization matrix's cases for these routes: the
// tenant is the operation's, so "other" asks for globex's figures.
var figureCases = map[string]matrixCase{
	"GET /figures": {func(_ *console, op ledger.Operation) string { return "/figures?tenant=" + op.Tenant }, http.StatusOK},
	"GET /figures.csv": {func(_ *console, op ledger.Operation) string { return "/figures.csv?tenant=" + op.Tenant + "&window=7d" },
		http.StatusOK},
	"GET /figures/overview": {func(*console, ledger.Operation) string { return "/figures/overview?sort=unknown&dir=desc" },
		http.StatusOK},
}
