package web_test

import (
	"net/http"

	"settle/ledger"
)

// figureCases are the authorization matrix's cases for these routes: the
// tenant is the operation's, so "other" asks for globex's figures.
var figureCases = map[string]matrixCase{
	"GET /figures": {url: func(_ *console, op ledger.Operation) string { return "/figures?tenant=" + op.Tenant }, ok: http.StatusOK},
	"GET /figures.csv": {url: func(_ *console, op ledger.Operation) string { return "/figures.csv?tenant=" + op.Tenant + "&window=7d" },
		ok: http.StatusOK},
	"GET /figures/overview": {url: func(*console, ledger.Operation) string { return "/figures/overview?sort=started&dir=desc" },
		ok: http.StatusOK},
	"GET /figures/overview.csv": {url: func(*console, ledger.Operation) string { return "/figures/overview.csv?window=7d" },
		ok: http.StatusOK},
}
