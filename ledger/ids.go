package ledger

import (
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
)

// ParseID returns the canonical form of an operation id: the stores keep
// ids as lower-case UUIDs, so an id written in upper or mixed case names
// the same operation. Only the 36-character hyphenated form is an id; the
// other spellings uuid.Parse accepts (braces, "urn:uuid:", no hyphens) are
// not, so PostgreSQL, which would read them, and SQLite, which compares
// text, answer alike. ok is false when id names no operation.
func ParseID(id string) (canonical string, ok bool) {
	if len(id) != 36 {
		return "", false
	}
	u, err := uuid.Parse(id)
	if err != nil {
		return "", false
	}
	return u.String(), true
}

// CheckFilterText validates text used to look operations up (the
// intent_ref filter, a CLI reference): valid UTF-8 without NUL, which no
// stored reference can hold and PostgreSQL cannot even compare, and at most
// MaxIntentRef characters. It is looser than CheckText so that references
// stored before CheckText existed can still be found.
func CheckFilterText(field, s string) error {
	switch {
	case !utf8.ValidString(s):
		return Errorf(EInvalid, "%s must be valid UTF-8 text", field)
	case strings.ContainsRune(s, 0):
		return Errorf(EInvalid, "%s must not contain NUL", field)
	case utf8.RuneCountInString(s) > MaxIntentRef:
		return Errorf(EInvalid, "%s must be at most %d characters", field, MaxIntentRef)
	}
	return nil
}
