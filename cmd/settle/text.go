package main

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// shown is how every CLI command prints text that a tenant, a provider or
// an older row supplied (references, reasons, event ids, remote ids,
// evidence, names): unchanged when every character is graphic, otherwise
// quoted with Go escapes ("ref\n", "\x1b[31m", "\u200b", "\xff"), so that
// no newline, tab, terminal escape, bidi override or invalid byte reaches
// an operator's screen or breaks a table. Text that itself begins with a
// quote is quoted too, so a quoted value is never ambiguous.
func shown(s string) string {
	if strings.HasPrefix(s, `"`) || strings.IndexFunc(s, notShowable) >= 0 || !utf8.ValidString(s) {
		return strconv.QuoteToGraphic(s)
	}
	return s
}

func notShowable(r rune) bool { return !unicode.IsGraphic(r) }

// dash is shown(s), or "-" for an empty value.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return shown(s)
}
