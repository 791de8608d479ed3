package ledger

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"
	"time"
)

// ListFilter selects operations, newest first: one tenant's (Tenant, as
// the API asks), or those of a set of tenants (Tenants, or AllTenants for
// a caller allowed to see every tenant), as the console asks.
type ListFilter struct {
	Tenant     string
	Tenants    []string // the console's tenant set; used when Tenant is ""
	AllTenants bool     // every tenant; only for callers allowed to see all
	IntentRef  string   // optional exact match
	State      State    // optional
	Target     string   // optional exact match
	// CreatedAfter and CreatedBefore bound the creation time (age filters);
	// nil means unbounded.
	CreatedAfter, CreatedBefore *time.Time
	Limit                       int    // 1..MaxListLimit; 0 means DefaultListLimit
	Cursor                      string // opaque; from Page.Next
}

// StateCounts counts the operations a filter selects in each state, for
// the console's tabs. A count stops at CountCap: Capped[s] says the true
// count is larger, so a tab over ten million rows stays fast.
type StateCounts struct {
	Counts map[State]int
	Capped map[State]bool
}

// CountCap is where StateCounts stops counting.
const CountCap = 10000

// SearchFilter finds operations by any of their references (operation id,
// intent reference, remote key, remote reference) within a tenant set.
type SearchFilter struct {
	Tenants    []string
	AllTenants bool
	Ref        string
}

// Browser is what the console reads beyond Store: listings over a set of
// tenants, state counts and one search box. Both stores implement it.
type Browser interface {
	// CountByState counts what f selects (ignoring f.State, Limit and
	// Cursor) in each state, each count capped at CountCap.
	CountByState(ctx context.Context, f ListFilter) (StateCounts, error)
	// Search returns the operations, without payloads, whose id, intent
	// reference, remote key or remote reference equals f.Ref, newest
	// first, at most 50.
	Search(ctx context.Context, f SearchFilter) ([]Operation, error)
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
