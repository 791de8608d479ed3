package ledger_test

import (
	"strings"
	"testing"

	"settle/ledger"
)

func TestPlainText(t *testing.T) {
	for in, want := range map[string]string{
		"":                       "",
		"order-1":                "order-1",
		"zählung 1":              "zählung 1",
		"ab\x00cd":               `"ab\x00cd"`,
		"a\nb":                   `"a\nb"`,
		"a\xffb":                 `"a\xffb"`,
		"abc\u202edef":           `"abc\u202edef"`,
		strings.Repeat("x", 10):  strings.Repeat("x", 10),
		strings.Repeat("y", 11):  `"yyyyyyyyyy"… (11 bytes)`,
		"\x00" + "123456789abcd": `"\x00123456789"… (14 bytes)`,
	} {
		if got := ledger.PlainText(in, 10); got != want {
			t.Errorf("PlainText(%q) = %s, want %s", in, got, want)
		}
	}
}
