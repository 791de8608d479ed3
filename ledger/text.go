package ledger

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Length limits of the references a client supplies, in characters
// (Unicode code points), not bytes.
const (
	MaxIntentRef     = 256
	MaxOperationType = 128
)

// CheckText validates a reference that people read in the console, the CLI
// and logs: valid UTF-8, in Unicode normalization form C (so that one
// reference has one spelling and one byte form in the unique index), with
// no control (Cc), format (Cf) or line/paragraph separator (Zl, Zp)
// characters — no newline, terminal escape, NUL, zero-width or bidi
// override — and 1 to max characters. The error is EInvalid naming field.
func CheckText(field, s string, max int) error {
	switch {
	case s == "":
		return Errorf(EInvalid, "%s must be 1-%d characters", field, max)
	case !utf8.ValidString(s):
		return Errorf(EInvalid, "%s must be valid UTF-8 text", field)
	case utf8.RuneCountInString(s) > max:
		return Errorf(EInvalid, "%s must be at most %d characters", field, max)
	}
	for _, r := range s {
		if unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp) {
			return Errorf(EInvalid, "%s must not contain control or format characters (found %s)", field, runeName(r))
		}
	}
	if !norm.NFC.IsNormalString(s) {
		return Errorf(EInvalid, "%s must be in Unicode normalization form C (NFC); normalise it before sending", field)
	}
	return nil
}

// MaxProviderText is the most bytes of one piece of text a provider
// supplies that settle stores (an object id, a status, an error code, an
// event id). Real ids are short; the bound keeps every one inside a
// PostgreSQL index entry (about 2.7 KB) and inside an event's evidence.
const MaxProviderText = 256

// CheckProviderText is settle's one rule for text that a provider supplies,
// or a person gives on a provider's behalf (a manual resolution's object
// id), before settle stores it: 1 to MaxProviderText bytes of valid UTF-8,
// every character printable (unicode.IsPrint: no NUL or other control
// character, no format character such as a bidi override or a zero-width
// space, no line separator, no space but U+0020). It is the rule PlainText
// applies: text that passes is shown as it is, text that fails is shown
// escaped. The error is EInvalid naming field; it never repeats the value,
// which may be hostile, only its size or the offending character's code.
func CheckProviderText(field, s string) error {
	switch {
	case s == "":
		return Errorf(EInvalid, "%s is empty", field)
	case !utf8.ValidString(s):
		return Errorf(EInvalid, "%s is not valid UTF-8", field)
	case len(s) > MaxProviderText:
		return Errorf(EInvalid, "%s is %d bytes long; at most %d are accepted", field, len(s), MaxProviderText)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return Errorf(EInvalid, "%s contains %s, a control, format or non-printing character", field, runeName(r))
		}
	}
	return nil
}

// runeName is U+XXXX: safe to show whatever the character does.
func runeName(r rune) string { return fmt.Sprintf("U+%04X", r) }

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

// ShowText is how the CLI and the console show text a tenant, a provider
// or an older row supplied (references, remote ids, event ids): unchanged
// when every character is graphic, otherwise quoted with Go escapes
// ("ref\n", "\x1b[31m", "\u202e", "\xff") and escaped reported true, so
// that no newline, terminal escape, bidi override or invalid byte reaches
// a screen or breaks a table, and the reader can be told the value was
// escaped. Text that itself begins with a quote is quoted too, so a quoted
// value is never ambiguous.
func ShowText(s string) (text string, escaped bool) {
	if strings.HasPrefix(s, `"`) || strings.IndexFunc(s, func(r rune) bool { return !unicode.IsGraphic(r) }) >= 0 || !utf8.ValidString(s) {
		return strconv.QuoteToGraphic(s), true
	}
	return s, false
}
