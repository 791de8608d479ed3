package ledger

import (
	"context"
	"fmt"
)

// OperationDriver is the SQL that reads operations and their events.
// found is false when no row matched; ids are canonical (ParseID).
type OperationDriver interface {
	OperationGet(ctx context.Context, tenant, id string) (op Operation, found bool, err error)
	// OperationSummary is OperationGet without the payload.
	OperationSummary(ctx context.Context, tenant, id string) (op Operation, found bool, err error)
	OperationByIntent(ctx context.Context, tenant, opType, intentRef string) (op Operation, found bool, err error)
	// OperationFind returns the tenant's operations whose intent or remote
	// reference is ref, or whose id or remote key is id ("" when ref is
	// not an id), newest first, at most 50.
	OperationFind(ctx context.Context, tenant, ref, id string) ([]Operation, error)
	// EventList returns the operation's events in order.
	EventList(ctx context.Context, tenant, id string) ([]Event, error)
	// PayloadConflictCount counts the tenant's refused creations in w.
	PayloadConflictCount(ctx context.Context, tenant string, w Window) (int, error)
}

func operationNotFound() error { return Errorf(ENotFound, "operation not found") }

// Get implements Store.
func (l *Ledger) Get(ctx context.Context, tenant, id string) (Operation, error) {
	return l.getWith(ctx, "get", tenant, id, l.d.OperationGet)
}

// Summary implements Store: the operation without its payload.
func (l *Ledger) Summary(ctx context.Context, tenant, id string) (Operation, error) {
	return l.getWith(ctx, "summary", tenant, id, l.d.OperationSummary)
}

func (l *Ledger) getWith(ctx context.Context, what, tenant, id string,
	read func(ctx context.Context, tenant, id string) (Operation, bool, error)) (Operation, error) {
	id, ok := ParseID(id)
	if !ok {
		return Operation{}, operationNotFound()
	}
	op, found, err := read(ctx, tenant, id)
	switch {
	case err != nil:
		return op, fmt.Errorf("%s: %w", what, err)
	case !found:
		return op, operationNotFound()
	}
	return op, nil
}

// GetByIntent implements Store.
func (l *Ledger) GetByIntent(ctx context.Context, tenant, opType, intentRef string) (Operation, error) {
	op, found, err := l.d.OperationByIntent(ctx, tenant, opType, intentRef)
	switch {
	case err != nil:
		return op, fmt.Errorf("get by intent: %w", err)
	case !found:
		return op, operationNotFound()
	}
	return op, nil
}

// Find implements Store.
func (l *Ledger) Find(ctx context.Context, tenant, ref string) ([]Operation, error) {
	if err := CheckFilterText("reference", ref); err != nil {
		return nil, err
	}
	id, _ := ParseID(ref)
	ops, err := l.d.OperationFind(ctx, tenant, ref, id)
	if err != nil {
		return nil, fmt.Errorf("find: %w", err)
	}
	return ops, nil
}

// Events implements Store: ENotFound when the tenant has no such
// operation (every operation has its creation event).
func (l *Ledger) Events(ctx context.Context, tenant, id string) ([]Event, error) {
	id, ok := ParseID(id)
	if !ok {
		return nil, operationNotFound()
	}
	evs, err := l.d.EventList(ctx, tenant, id)
	switch {
	case err != nil:
		return nil, fmt.Errorf("events: %w", err)
	case len(evs) == 0:
		return nil, operationNotFound()
	}
	return evs, nil
}

// PayloadConflicts implements Store.
func (l *Ledger) PayloadConflicts(ctx context.Context, tenant string, w Window) (int, error) {
	n, err := l.d.PayloadConflictCount(ctx, tenant, w)
	if err != nil {
		return 0, fmt.Errorf("payload conflicts: %w", err)
	}
	return n, nil
}
