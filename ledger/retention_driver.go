package ledger

import (
	"context"
	"fmt"
	"time"
)

// RetentionDriver is the SQL of retention and of a tenant's erasure
// (RetentionStore, TenantEraser). A zero cutoff of RetentionCount is a
// rule that is off: it matches nothing.
//
// Transactions: RetentionCount, RetentionRedact and ErasureList are one
// statement each. Everything else (RetentionTx's methods) runs in
// Driver.WithTx, one transaction that commits when fn returns nil and
// changes nothing otherwise; Ledger decides what goes into which, so that
// a batch deletes all of its operations' rows or none and an erasure's
// gate refuses before anything is deleted. Each RetentionTx method is one
// step of SQL; where a step
// takes several statements (a table after another, children before their
// parent) their order is the method's and is written in its comment.
type RetentionDriver interface {
	// RetentionCount counts what the cutoffs would remove now; an
	// operation c.Delete covers is not also counted as redacted.
	RetentionCount(ctx context.Context, c RetentionCutoffs) (RetentionCounts, error)
	// RetentionRedact empties the payload of up to limit final operations
	// last changed before before whose payload is not empty yet, oldest
	// first (skipping rows another transaction holds), and returns how
	// many.
	RetentionRedact(ctx context.Context, before time.Time, limit int) (int, error)
	// The rest run inside Driver.WithTx, one step of SQL each.
	RetentionTx
	// ErasureList returns the tenant's erasure records, newest first.
	ErasureList(ctx context.Context, tenant string) ([]ErasureRow, error)
}

// RetentionTx is the SQL of retention and erasure that runs inside
// Driver.WithTx.
type RetentionTx interface {
	// RetentionDeletable returns and locks up to limit final operations
	// last changed before before that no audit finding still waits on a
	// person for (neither acknowledged nor resolved), oldest first,
	// skipping rows another transaction holds.
	RetentionDeletable(ctx context.Context, before time.Time, limit int) ([]OperationKey, error)
	// ErasureOperations returns and locks up to limit of the tenant's
	// operations.
	ErasureOperations(ctx context.Context, tenant string, limit int) ([]OperationKey, error)
	// OperationsDelete deletes the operations keys names and the rows
	// that name them, children before their parent: events, callback
	// notifications, escalation notices, audit findings, resolutions and
	// payload conflicts, then the operations. It counts each kind.
	OperationsDelete(ctx context.Context, keys []OperationKey) (RetentionCounts, error)
	// PurgeQuarantine deletes up to limit quarantine items resolved before
	// before, oldest first.
	PurgeQuarantine(ctx context.Context, before time.Time, limit int) (int, error)
	// PurgeDeliveries deletes up to limit webhook deliveries processed
	// before before that no open quarantine item names, oldest first.
	PurgeDeliveries(ctx context.Context, before time.Time, limit int) (int, error)
	// ErasureAccessDelete deletes the tenant's API tokens, callback
	// endpoint and parameters, counting each, and then its row of tenants.
	ErasureAccessDelete(ctx context.Context, tenant string) (RetentionCounts, error)
	// ErasureRestDelete deletes, counting each kind: the webhook
	// deliveries of the quarantine items in the tenant's scope or naming
	// its operations that no other tenant's item names, then those items
	// (they name the deliveries); the tenant's callback notifications,
	// escalation notices, audit findings, resolutions, payload conflicts
	// and actions left over; its figure rollups (days, episodes and
	// escalations, counted together); and its observations not yet
	// drained, which are counts in transit and are not counted.
	ErasureRestDelete(ctx context.Context, tenant string) (RetentionCounts, error)
	// ErasureInsert records r (its ID is ignored) and returns its id.
	ErasureInsert(ctx context.Context, r ErasureRow) (int64, error)
}

// OperationKey names one operation.
type OperationKey struct{ Tenant, ID string }

// ErasureRow is one row of tenant_erasures: an Erasure with its counts
// encoded as a JSON object of kind → count.
type ErasureRow struct {
	ID                  int64
	Tenant              string
	At                  time.Time
	Subject, Name, Role string
	Forced              bool
	Unfinished          int
	Counts              []byte
}

var (
	_ RetentionStore = (*Ledger)(nil)
	_ TenantEraser   = (*Ledger)(nil)
)

// CountRetention implements RetentionStore.
func (l *Ledger) CountRetention(ctx context.Context, c RetentionCutoffs) (RetentionCounts, error) {
	n, err := l.d.RetentionCount(ctx, c)
	if err != nil {
		return RetentionCounts{}, fmt.Errorf("count retention: %w", err)
	}
	return n, nil
}

// RedactPayloads implements RetentionStore.
func (l *Ledger) RedactPayloads(ctx context.Context, before time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, Errorf(EInvalid, "limit must be positive")
	}
	n, err := l.d.RetentionRedact(ctx, before, limit)
	if err != nil {
		return 0, fmt.Errorf("redact payloads: %w", err)
	}
	return n, nil
}

// DeleteOperations implements RetentionStore: one batch, selected and
// deleted in one transaction.
func (l *Ledger) DeleteOperations(ctx context.Context, before time.Time, limit int) (RetentionCounts, error) {
	if limit <= 0 {
		return RetentionCounts{}, Errorf(EInvalid, "limit must be positive")
	}
	var n RetentionCounts
	err := l.d.WithTx(ctx, func(tx Driver) error {
		keys, err := tx.RetentionDeletable(ctx, before, limit)
		if err != nil {
			return err
		}
		n, err = deleteOperations(ctx, tx, keys)
		return err
	})
	if err != nil {
		return RetentionCounts{}, fmt.Errorf("delete operations: %w", err)
	}
	return n, nil
}

// deleteOperations deletes the operations keys names, if any, with the
// rows that name them.
func deleteOperations(ctx context.Context, tx Driver, keys []OperationKey) (RetentionCounts, error) {
	if len(keys) == 0 {
		return RetentionCounts{}, nil
	}
	return tx.OperationsDelete(ctx, keys)
}

// PurgeReviewed implements RetentionStore: the quarantine items, then the
// deliveries, in one transaction.
func (l *Ledger) PurgeReviewed(ctx context.Context, before time.Time, limit int) (RetentionCounts, error) {
	if limit <= 0 {
		return RetentionCounts{}, Errorf(EInvalid, "limit must be positive")
	}
	var n RetentionCounts
	err := l.d.WithTx(ctx, func(tx Driver) error {
		n = RetentionCounts{}
		var err error
		if n.Quarantine, err = tx.PurgeQuarantine(ctx, before, limit); err != nil {
			return err
		}
		n.Deliveries, err = tx.PurgeDeliveries(ctx, before, limit)
		return err
	})
	if err != nil {
		return RetentionCounts{}, fmt.Errorf("purge reviewed: %w", err)
	}
	return n, nil
}

// EraseTenant implements TenantEraser: the gate and the tenant's access
// in one transaction first, then its operations a batch per transaction,
// then the rest and the record in one.
func (l *Ledger) EraseTenant(ctx context.Context, tenant string, force bool) (Erasure, error) {
	actor, err := validateErasure(ctx, tenant)
	if err != nil {
		return Erasure{}, err
	}
	e := Erasure{Tenant: tenant, Subject: actor.Subject, Name: actor.Name, Role: actor.Role, Forced: force}
	var gate RetentionCounts
	err = l.d.WithTx(ctx, func(tx Driver) error {
		gate = RetentionCounts{}
		var err error
		if e.Unfinished, err = tx.OperationCountInStates(ctx, tenant, UnfinishedStates(), erasureCountLimit); err != nil {
			return err
		}
		if err := checkErasure(tenant, e.Unfinished, force); err != nil {
			return err
		}
		gate, err = tx.ErasureAccessDelete(ctx, tenant)
		return err
	})
	if err != nil {
		return Erasure{}, fmt.Errorf("erase tenant: %w", err)
	}
	e.Counts.Add(gate)
	for {
		var batch RetentionCounts
		err := l.d.WithTx(ctx, func(tx Driver) error {
			keys, err := tx.ErasureOperations(ctx, tenant, erasureBatch)
			if err != nil {
				return err
			}
			batch, err = deleteOperations(ctx, tx, keys)
			return err
		})
		if err != nil {
			return Erasure{}, fmt.Errorf("erase tenant: %w", err)
		}
		e.Counts.Add(batch)
		if batch.Operations < erasureBatch {
			break
		}
	}
	var rest RetentionCounts
	err = l.d.WithTx(ctx, func(tx Driver) error {
		var err error
		if rest, err = tx.ErasureRestDelete(ctx, tenant); err != nil {
			return err
		}
		total := e.Counts
		total.Add(rest)
		e.At = l.clock()
		e.ID, err = tx.ErasureInsert(ctx, ErasureRow{Tenant: tenant, At: e.At, Subject: e.Subject, Name: e.Name,
			Role: e.Role, Forced: e.Forced, Unfinished: e.Unfinished, Counts: marshalCounts(total)})
		return err
	})
	if err != nil {
		return Erasure{}, fmt.Errorf("erase tenant: %w", err)
	}
	e.Counts.Add(rest)
	return e, nil
}

// Erasures implements TenantEraser.
func (l *Ledger) Erasures(ctx context.Context, tenant string) ([]Erasure, error) {
	if !ValidTenant(tenant) {
		return nil, Errorf(EInvalid, "tenant must be 1-63 characters of a-z, 0-9, '.', '_' or '-'")
	}
	rows, err := l.d.ErasureList(ctx, tenant)
	if err != nil {
		return nil, fmt.Errorf("erasures: %w", err)
	}
	out := make([]Erasure, 0, len(rows))
	for _, r := range rows {
		c, err := unmarshalCounts(r.Counts)
		if err != nil {
			return nil, fmt.Errorf("erasures: %w", err)
		}
		out = append(out, Erasure{ID: r.ID, Tenant: r.Tenant, At: r.At, Subject: r.Subject, Name: r.Name,
			Role: r.Role, Forced: r.Forced, Unfinished: r.Unfinished, Counts: c})
	}
	return out, nil
}
