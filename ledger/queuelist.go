package ledger

import (
	"context"
	"strings"
	"time"
)

// QueueFilter selects a page of what waits for a person (AwaitsPerson):
// ESCALATED operations and UNKNOWN ones whose deadline is at or before
// Now, in creation order, keyset-paginated. The resolve service builds
// it (its one definition of the queue); the stores only read it.
type QueueFilter struct {
	// Tenants or AllTenants is the scope, and Tenant narrows it, exactly
	// as ListFilter's (TenantSet).
	Tenant     string
	Tenants    []string
	AllTenants bool
	Target     string // optional exact match
	// Escalated and Overdue choose the kinds; neither is both.
	Escalated, Overdue bool
	Now                time.Time // when "overdue" is judged; required
	// Ref, optional, narrows to operations carrying it: the operation id or
	// an id prefix of at least MinIDPrefix hex digits, the intent reference
	// (exactly or but for case), or the remote reference.
	Ref string
	// CreatedBefore, optional, keeps operations created before it (an age
	// filter: "waiting more than an hour").
	CreatedBefore *time.Time
	// Reason, optional, keeps operations whose reason contains it, case
	// aside (ASCII letters on SQLite).
	Reason string
	// AwaitingOthersOf, optional, keeps operations with an open proposal
	// made by someone other than this subject: what they may approve.
	AwaitingOthersOf string
	Newest           bool   // newest first; oldest first otherwise
	Limit            int    // 1..MaxListLimit; 0 means DefaultListLimit
	Cursor           string // opaque; from Page.Next of the same order
}

// QueueLister reads the queue's pages; both stores implement it.
type QueueLister interface {
	// ListQueue returns the page f selects, without payloads. EInvalid
	// for a bad filter or cursor.
	ListQueue(ctx context.Context, f QueueFilter) (Page, error)
}

// Normalize validates f and decodes its cursor (nil for the first page).
// Ref and Reason are trimmed.
func (f *QueueFilter) Normalize() (*Cursor, error) {
	var err error
	if f.Tenants, err = normalizeTenants(f.Tenant, f.Tenants, f.AllTenants); err != nil {
		return nil, err
	}
	if f.Now.IsZero() {
		return nil, Errorf(EInvalid, "the queue needs the time it is read at")
	}
	if !f.Escalated && !f.Overdue {
		f.Escalated, f.Overdue = true, true
	}
	if err := checkWindow(nil, f.CreatedBefore); err != nil {
		return nil, err
	}
	f.Ref, f.Reason = strings.TrimSpace(f.Ref), strings.TrimSpace(f.Reason)
	for name, v := range map[string]string{"target": f.Target, "reference": f.Ref, "reason": f.Reason,
		"subject": f.AwaitingOthersOf} {
		if v != "" {
			if err := CheckFilterText(name, v); err != nil {
				return nil, err
			}
		}
	}
	if f.Limit == 0 {
		f.Limit = DefaultListLimit
	}
	if f.Limit < 1 || f.Limit > MaxListLimit {
		return nil, Errorf(EInvalid, "limit must be between 1 and %d", MaxListLimit)
	}
	return ParseCursor(f.Cursor)
}

// TenantSet returns whose operations a normalized filter selects, as
// ListFilter.TenantSet.
func (f QueueFilter) TenantSet() (tenants []string, all bool) {
	return tenantSet(f.Tenant, f.Tenants, f.AllTenants)
}

// States returns the states a normalized filter reads, in a fixed order.
func (f QueueFilter) States() []State {
	var out []State
	if f.Escalated {
		out = append(out, Escalated)
	}
	if f.Overdue {
		out = append(out, Unknown)
	}
	return out
}

// LikePattern is s as a LIKE pattern that matches it anywhere, with the
// wildcards it holds escaped by backslash (ESCAPE '\').
func LikePattern(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(s) + "%"
}
