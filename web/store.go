package web

import (
	"settle/ledger"
	"settle/resolve"
)

// Store is every part of the ledger the server reads and writes: the API,
// the webhook inbox and every console page. Both ledger/postgres.Store and
// ledger/sqlite.Store implement it (checked at compile time in
// cmd/settle), so no page is switched on or off by what a store happens to
// implement.
type Store interface {
	ledger.Store
	ledger.TokenStore
	ledger.InboxStore
	ledger.Browser
	ledger.ReviewStore
	ledger.CallbackStore
	ledger.ActionStore
	ledger.TenantParamLister
	ledger.FigureSource
	ledger.TenantLister
	ledger.TenantStore
	ledger.DrillStore
	resolve.Store
}
