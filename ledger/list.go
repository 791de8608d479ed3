package ledger

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"
)

// ListFilter selects one tenant's operations, newest first.
type ListFilter struct {
	Tenant    string
	IntentRef string // optional exact match
	State     State  // optional
	Limit     int    // 1..MaxListLimit; 0 means DefaultListLimit
	Cursor    string // opaque; from Page.Next
}

// Page is one page of a listing. Next is empty on the last page.
type Page struct {
	Operations []Operation
	Next       string
}

// Listing limits.
const (
	DefaultListLimit = 50
	MaxListLimit     = 500
)

// Cursor is a decoded keyset position: the last operation of a page.
type Cursor struct {
	CreatedAt time.Time
	ID        string
}

// Normalize validates f and decodes its cursor (nil for the first page).
func (f *ListFilter) Normalize() (*Cursor, error) {
	if f.Limit == 0 {
		f.Limit = DefaultListLimit
	}
	if f.Limit < 1 || f.Limit > MaxListLimit {
		return nil, Errorf(EInvalid, "limit must be between 1 and %d", MaxListLimit)
	}
	if f.State != "" && !f.State.Valid() {
		return nil, Errorf(EInvalid, "state must be one of PREPARED, IN_FLIGHT, SUCCEEDED, FAILED_TERMINAL, UNKNOWN, ESCALATED")
	}
	if f.IntentRef != "" {
		if err := CheckFilterText("intent_ref", f.IntentRef); err != nil {
			return nil, err
		}
	}
	if f.Cursor == "" {
		return nil, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(f.Cursor)
	if err != nil {
		return nil, Errorf(EInvalid, "invalid cursor")
	}
	ts, id, ok := strings.Cut(string(raw), "/")
	micros, err := strconv.ParseInt(ts, 10, 64)
	id, idOK := ParseID(id)
	// A time outside what both databases hold (PostgreSQL would fail, or
	// wrap, where SQLite compares integers) is no cursor settle issued.
	if !ok || err != nil || !idOK || micros < 0 || micros > maxCursorMicros {
		return nil, Errorf(EInvalid, "invalid cursor")
	}
	return &Cursor{CreatedAt: time.UnixMicro(micros).UTC(), ID: id}, nil
}

// maxCursorMicros is the end of the year 9999, in Unix microseconds.
var maxCursorMicros = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC).UnixMicro()

// NextPage builds a Page from up to limit+1 rows fetched in order: the
// extra row only signals that another page exists.
func NextPage(ops []Operation, limit int) Page {
	if len(ops) <= limit {
		return Page{Operations: ops}
	}
	ops = ops[:limit]
	last := ops[limit-1]
	next := strconv.FormatInt(last.CreatedAt.UnixMicro(), 10) + "/" + last.ID
	return Page{Operations: ops, Next: base64.RawURLEncoding.EncodeToString([]byte(next))}
}
