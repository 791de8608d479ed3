package ledger

import (
	"context"
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// ListFilter selects operations, newest first: one tenant's (Tenant, as
// the API asks), or those of a set of tenants (Tenants, or AllTenants for
// a caller allowed to see every tenant), as the console asks. Given
// together they narrow each other (see TenantSet): Tenant within Tenants
// is that tenant, Tenant outside them selects nothing. None given is
// EInvalid.
type ListFilter struct {
	Tenant     string
	Tenants    []string // the console's tenant set, at most MaxFilterTenants
	AllTenants bool     // every tenant; only for callers allowed to see all
	IntentRef  string   // optional exact match
	State      State    // optional
	Target     string   // optional exact match
	// CreatedAfter (inclusive) and CreatedBefore (exclusive) bound the
	// creation time (age filters); nil means unbounded.
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

// NewStateCounts builds StateCounts from what a store counted in each state,
// having stopped at CountCap+1: a count past CountCap is reported as
// CountCap and Capped. Every state has an entry, zero when none was
// counted.
func NewStateCounts(counted map[State]int) StateCounts {
	c := StateCounts{Counts: make(map[State]int, len(States)), Capped: make(map[State]bool, len(States))}
	for _, s := range States {
		n := counted[s]
		c.Counts[s], c.Capped[s] = min(n, CountCap), n > CountCap
	}
	return c
}

// NormalizeCount validates f for CountByState, which ignores its state,
// limit and cursor (so clears them).
func (f *ListFilter) NormalizeCount() error {
	f.State, f.Limit, f.Cursor = "", 0, ""
	_, err := f.Normalize()
	return err
}

// SearchFilter finds operations by any of their references (operation id,
// intent reference, remote key, remote reference) within a tenant set:
// Tenants, or AllTenants; both given is Tenants; neither is EInvalid.
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
	// first, at most MaxSearchResults. When none does, it returns those
	// whose intent reference equals f.Ref but for case (ASCII letters on
	// SQLite; every letter the database's locale folds on PostgreSQL) or
	// whose id begins with f.Ref (IDPrefixRange). f.Ref is trimmed and
	// put in NFC first. Finding nothing is no error.
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

// MaxFilterTenants bounds a filter's tenant set: each named tenant costs the
// stores a walk of its own index, so a caller allowed to see more tenants
// than this should be granted all of them (AllTenants).
const MaxFilterTenants = 100

// Normalize validates f and decodes its cursor (nil for the first page).
// No tenant given is EInvalid, never "everyone". Tenants is sorted and
// deduplicated.
func (f *ListFilter) Normalize() (*Cursor, error) {
	var err error
	if f.Tenants, err = normalizeTenants(f.Tenant, f.Tenants, f.AllTenants); err != nil {
		return nil, err
	}
	if err := checkWindow(f.CreatedAfter, f.CreatedBefore); err != nil {
		return nil, err
	}
	if f.Target != "" {
		if err := CheckFilterText("target", f.Target); err != nil {
			return nil, err
		}
	}
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
	return ParseCursor(f.Cursor)
}

// ParseCursor decodes a cursor NextPage built: nil for "", EInvalid for
// text settle did not issue.
func ParseCursor(s string) (*Cursor, error) {
	if s == "" {
		return nil, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
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

// TenantSet returns whose operations a normalized filter selects: some
// tenants (possibly none at all, when Tenant is not among Tenants), or
// every tenant (all true, tenants nil).
func (f ListFilter) TenantSet() (tenants []string, all bool) {
	return tenantSet(f.Tenant, f.Tenants, f.AllTenants)
}

// TenantSet returns whose operations a normalized filter searches, as
// ListFilter.TenantSet.
func (f SearchFilter) TenantSet() (tenants []string, all bool) {
	return tenantSet("", f.Tenants, f.AllTenants)
}

// Normalize validates f: a reference of valid text and a tenant set as
// ListFilter's. Tenants is sorted and deduplicated.
func (f *SearchFilter) Normalize() error {
	// What a person pastes: surrounding white space is no part of a
	// reference, and references are stored in NFC (the API refuses others).
	f.Ref = strings.TrimSpace(f.Ref)
	if utf8.ValidString(f.Ref) {
		f.Ref = norm.NFC.String(f.Ref)
	}
	if f.Ref == "" {
		return Errorf(EInvalid, "reference must not be empty")
	}
	if err := CheckFilterText("reference", f.Ref); err != nil {
		return err
	}
	var err error
	f.Tenants, err = normalizeTenants("", f.Tenants, f.AllTenants)
	return err
}

// IDPrefixRange returns the first and last operation ids that begin with
// prefix, when prefix is at least MinIDPrefix and fewer than 32 hex
// digits of an id (dashes where an id has them, any case): what a person
// copies from a truncated id. The search looks for such a prefix only
// when nothing carries the text exactly.
func IDPrefixRange(prefix string) (first, last string, ok bool) {
	p := strings.ToLower(prefix)
	digits := strings.ReplaceAll(p, "-", "")
	if len(digits) < MinIDPrefix || len(digits) >= 32 {
		return "", "", false
	}
	for _, r := range digits {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
			return "", "", false
		}
	}
	// The dashes, if any, must stand where an id's do.
	if want := dashed(digits + strings.Repeat("0", 32-len(digits)))[:len(p)]; want != p && strings.Contains(p, "-") {
		return "", "", false
	}
	return dashed(digits + strings.Repeat("0", 32-len(digits))), dashed(digits + strings.Repeat("f", 32-len(digits))), true
}

// MinIDPrefix is the shortest id prefix the search takes: eight hex
// digits, the first group of an id, one in four thousand million.
const MinIDPrefix = 8

// dashed writes 32 hex digits as an id: 8-4-4-4-12.
func dashed(h string) string {
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// MaxSearchResults is the most operations Search returns.
const MaxSearchResults = 50

// normalizeTenants checks that a tenant set is given, with valid names, and
// returns tenants sorted without duplicates.
func normalizeTenants(tenant string, tenants []string, all bool) ([]string, error) {
	switch {
	case tenant == "" && len(tenants) == 0 && !all:
		return nil, Errorf(EInvalid, "no tenant to look in: name one or more, or all")
	case tenant != "" && !ValidTenant(tenant):
		return nil, Errorf(EInvalid, "tenant must be 1-63 characters of a-z, 0-9, '.', '_' or '-'")
	case len(tenants) == 0:
		return nil, nil
	}
	out := slices.Clone(tenants)
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > MaxFilterTenants {
		return nil, Errorf(EInvalid, "at most %d tenants can be named; more need access to all tenants", MaxFilterTenants)
	}
	for _, t := range out {
		if !ValidTenant(t) {
			return nil, Errorf(EInvalid, "tenant must be 1-63 characters of a-z, 0-9, '.', '_' or '-'")
		}
	}
	return out, nil
}

// tenantSet intersects what is given: Tenant narrows Tenants (to nothing
// when it is not among them) and both narrow AllTenants, so that a caller
// combining the tenants a person may see with the one they asked for can
// never widen the first. tenants is nil when all is true.
func tenantSet(tenant string, tenants []string, all bool) ([]string, bool) {
	switch {
	case tenant != "" && (all || len(tenants) == 0 || slices.Contains(tenants, tenant)):
		return []string{tenant}, false
	case tenant != "":
		return []string{}, false
	case len(tenants) > 0:
		return tenants, false
	}
	return nil, all
}

// checkWindow checks the creation-time bounds: within what both databases
// hold, and the first before the second (an empty window is a mistake).
func checkWindow(after, before *time.Time) error {
	for _, t := range []*time.Time{after, before} {
		if t != nil && (t.UnixMicro() < 0 || t.UnixMicro() > maxCursorMicros) {
			return Errorf(EInvalid, "created_after and created_before must be between 1970 and 9999")
		}
	}
	if after != nil && before != nil && !after.Before(*before) {
		return Errorf(EInvalid, "created_after must be before created_before")
	}
	return nil
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
