package ledger

import (
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// PlainText returns s unchanged when both stores and a reviewer's terminal
// can take it as it is: valid UTF-8, only printable characters (no NUL or
// other control or format characters) and at most max bytes. Otherwise it
// returns s in Go's quoted, escaped form ("ab\x00cd", "\u202e…"), cut to
// max bytes of the original first: what a sender sent stays readable and
// storable, and can never pass for structure in a log or a listing.
func PlainText(s string, max int) string {
	if isPlain(s, max) {
		return s
	}
	if len(s) <= max {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:max]), len(s))
}

func isPlain(s string, max int) bool {
	if len(s) > max || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}
