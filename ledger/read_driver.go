package ledger

import (
	"context"
	"fmt"
)

// ReadDriver is the SQL of the assembled reads: listings, the queue, the
// state counts and the search. Each takes a normalized filter and the
// tenants it selects (Tenants, at least one, or All); the dialect splices
// the conditions ledger/internal/sqlfilter builds from it into its
// statements. Operations come without payloads.
type ReadDriver interface {
	// OperationList returns up to p.Filter.Limit+1 operations p selects
	// past p.Cursor, newest first.
	OperationList(ctx context.Context, p ListParams) ([]Operation, error)
	// QueueList returns up to p.Filter.Limit+1 operations of the queue p
	// selects past p.Cursor, in creation order (newest first for
	// p.Filter.Newest).
	QueueList(ctx context.Context, p QueueParams) ([]Operation, error)
	// StateCount counts what p selects (but for its state) in each state,
	// stopping at CountCap+1.
	StateCount(ctx context.Context, p ListParams) (map[State]int, error)
	// OperationSearch returns the operations carrying p.Ref exactly, or
	// near it (p.Near: but for case, or as an id prefix), newest first, at
	// most MaxSearchResults.
	OperationSearch(ctx context.Context, p SearchParams) ([]Operation, error)
}

// ListParams are OperationList's and StateCount's.
type ListParams struct {
	Filter  ListFilter
	Cursor  *Cursor
	Tenants []string
	All     bool
}

// QueueParams are QueueList's.
type QueueParams struct {
	Filter  QueueFilter
	Cursor  *Cursor
	Tenants []string
	All     bool
}

// SearchParams are OperationSearch's.
type SearchParams struct {
	Ref     string
	Tenants []string
	All     bool
	Near    bool
}

// List implements Store.
func (l *Ledger) List(ctx context.Context, f ListFilter) (Page, error) {
	cur, err := f.Normalize()
	if err != nil {
		return Page{}, err
	}
	tenants, all := f.TenantSet()
	if !all && len(tenants) == 0 {
		return Page{}, nil
	}
	ops, err := l.d.OperationList(ctx, ListParams{Filter: f, Cursor: cur, Tenants: tenants, All: all})
	if err != nil {
		return Page{}, fmt.Errorf("list: %w", err)
	}
	return NextPage(ops, f.Limit), nil
}

// ListQueue implements QueueLister.
func (l *Ledger) ListQueue(ctx context.Context, f QueueFilter) (Page, error) {
	cur, err := f.Normalize()
	if err != nil {
		return Page{}, err
	}
	tenants, all := f.TenantSet()
	if !all && len(tenants) == 0 {
		return Page{}, nil
	}
	ops, err := l.d.QueueList(ctx, QueueParams{Filter: f, Cursor: cur, Tenants: tenants, All: all})
	if err != nil {
		return Page{}, fmt.Errorf("list queue: %w", err)
	}
	return NextPage(ops, f.Limit), nil
}

// CountByState implements Browser.
func (l *Ledger) CountByState(ctx context.Context, f ListFilter) (StateCounts, error) {
	if err := f.NormalizeCount(); err != nil {
		return StateCounts{}, err
	}
	tenants, all := f.TenantSet()
	if !all && len(tenants) == 0 {
		return NewStateCounts(nil), nil
	}
	counted, err := l.d.StateCount(ctx, ListParams{Filter: f, Tenants: tenants, All: all})
	if err != nil {
		return StateCounts{}, fmt.Errorf("count by state: %w", err)
	}
	return NewStateCounts(counted), nil
}

// Search implements Browser: the exact pass, then, when it finds nothing,
// the near one.
func (l *Ledger) Search(ctx context.Context, f SearchFilter) ([]Operation, error) {
	if err := f.Normalize(); err != nil {
		return nil, err
	}
	tenants, all := f.TenantSet()
	if !all && len(tenants) == 0 {
		return nil, nil
	}
	p := SearchParams{Ref: f.Ref, Tenants: tenants, All: all}
	ops, err := l.d.OperationSearch(ctx, p)
	if err == nil && len(ops) == 0 {
		p.Near = true
		ops, err = l.d.OperationSearch(ctx, p)
	}
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	return ops, nil
}
