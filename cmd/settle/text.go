package main

import "settle/ledger"

// shown is how every CLI command prints text that a tenant, a provider or
// an older row supplied (references, reasons, event ids, remote ids,
// evidence, names): ledger.ShowText, the rule the console shares, so no
// newline, tab, terminal escape, bidi override or invalid byte reaches an
// operator's screen or breaks a table.
func shown(s string) string {
	text, _ := ledger.ShowText(s)
	return text
}

// dash is shown(s), or "-" for an empty value.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return shown(s)
}
