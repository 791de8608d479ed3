package ledger

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strconv"
	"time"
)

// Receive implements InboxStore. A redelivery's insert does nothing and
// its id is read by a second statement, which (in PostgreSQL's READ
// COMMITTED) sees the delivery a concurrent receipt committed.
func (l *Ledger) Receive(ctx context.Context, target string, body []byte) (int64, bool, error) {
	sum := sha256.Sum256(body)
	id, inserted, err := l.d.DeliveryInsert(ctx, DeliveryInsertParams{Target: target, Sum: sum[:], Body: body,
		ReceivedAt: l.clock()})
	if err == nil && !inserted {
		id, err = l.d.DeliveryIDByBody(ctx, target, sum[:])
	}
	if err != nil {
		return 0, false, fmt.Errorf("receive: %w", err)
	}
	return id, !inserted, nil
}

// ClaimDeliveries implements InboxStore.
func (l *Ledger) ClaimDeliveries(ctx context.Context, n int, lease time.Duration) ([]Delivery, error) {
	now := l.clock()
	ds, err := l.d.DeliveryClaim(ctx, DeliveryClaimParams{Now: now, LeaseUntil: now.Add(lease), Max: n})
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	return ds, nil
}

// FinishDelivery implements InboxStore.
func (l *Ledger) FinishDelivery(ctx context.Context, id int64, outcome string) error {
	if err := l.d.DeliveryFinish(ctx, DeliveryUpdateParams{ID: id, At: l.clock(), Outcome: outcome}); err != nil {
		return fmt.Errorf("finish delivery: %w", err)
	}
	return nil
}

// DeferDelivery implements InboxStore.
func (l *Ledger) DeferDelivery(ctx context.Context, id int64, until time.Time, outcome string) error {
	if err := l.d.DeliveryDefer(ctx, DeliveryUpdateParams{ID: id, At: until, Outcome: outcome}); err != nil {
		return fmt.Errorf("defer delivery: %w", err)
	}
	return nil
}

// deliveryFailedOutcome is a failed delivery's outcome until it is
// processed.
const deliveryFailedOutcome = "failed; retried"

// FailDelivery implements InboxStore.
func (l *Ledger) FailDelivery(ctx context.Context, id int64, until time.Time, reason string) error {
	err := l.d.DeliveryFail(ctx, DeliveryUpdateParams{ID: id, At: until, Outcome: deliveryFailedOutcome,
		Error: PlainText(reason, 500)})
	if err != nil {
		return fmt.Errorf("fail delivery: %w", err)
	}
	return nil
}

// Quarantine implements InboxStore.
func (l *Ledger) Quarantine(ctx context.Context, q QuarantineItem) (int64, error) {
	id, err := l.d.QuarantineInsert(ctx, QuarantineInsertParams{Item: q, ScopeTenant: q.ScopeTenant(), At: l.clock()})
	if err != nil {
		return 0, fmt.Errorf("quarantine: %w", err)
	}
	return id, nil
}

// ResolveQuarantine implements InboxStore.
func (l *Ledger) ResolveQuarantine(ctx context.Context, tenant string, id int64, resolution string) error {
	if resolution == "" || len(resolution) > 500 {
		return Errorf(EInvalid, "a quarantine resolution needs the decision (at most 500 characters)")
	}
	err := l.withAction(ctx, ActionQuarantineResolve, tenant, strconv.FormatInt(id, 10), func(tx Driver, a *Action) error {
		a.Reason = resolution
		opID, found, err := tx.QuarantineDismiss(ctx, QuarantineResolveParams{ScopeTenant: tenant, ID: id, Action: *a})
		if err != nil {
			return err
		}
		if !found {
			return Errorf(ENotFound, "no open quarantine item %d", id)
		}
		a.OperationID = opID
		return nil
	})
	if err != nil {
		return fmt.Errorf("resolve quarantine: %w", err)
	}
	return nil
}

// LeaseOperation implements InboxStore.
func (l *Ledger) LeaseOperation(ctx context.Context, tenant, id string, lease time.Duration) (Operation, error) {
	if _, err := l.Get(ctx, tenant, id); err != nil {
		return Operation{}, err
	}
	now := l.clock()
	op, found, err := l.d.OperationLeaseUnknown(ctx, OperationLeaseParams{Tenant: tenant, ID: id, Now: now,
		LeaseUntil: now.Add(lease)})
	switch {
	case err != nil:
		return Operation{}, fmt.Errorf("lease operation: %w", err)
	case !found:
		return Operation{}, Errorf(EStaleFence, "operation is not UNKNOWN or is held by another worker")
	}
	return op, nil
}
