package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"settle/ledger"
	"settle/ledger/postgres/internal/dbsqlc"
)

var _ ledger.InboxStore = (*Store)(nil)

// DeliveryInsert implements ledger.InboxDriver.
func (d driver) DeliveryInsert(ctx context.Context, p ledger.DeliveryInsertParams) (int64, bool, error) {
	id, err := d.q.DeliveryInsert(ctx, dbsqlc.DeliveryInsertParams{Target: p.Target, BodySha256: p.Sum, Body: p.Body,
		ReceivedAt: p.ReceivedAt})
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	return id, err == nil, err
}

// DeliveryIDByBody implements ledger.InboxDriver.
func (d driver) DeliveryIDByBody(ctx context.Context, target string, sum []byte) (int64, error) {
	return d.q.DeliveryIDByBody(ctx, dbsqlc.DeliveryIDByBodyParams{Target: target, BodySha256: sum})
}

// DeliveryClaim implements ledger.InboxDriver with FOR UPDATE SKIP LOCKED.
func (d driver) DeliveryClaim(ctx context.Context, p ledger.DeliveryClaimParams) ([]ledger.Delivery, error) {
	rows, err := d.q.DeliveryClaim(ctx, dbsqlc.DeliveryClaimParams{Now: p.Now, LeaseUntil: p.LeaseUntil,
		MaxRows: int32(p.Max)})
	if err != nil {
		return nil, err
	}
	ds := make([]ledger.Delivery, 0, len(rows))
	for _, r := range rows {
		ds = append(ds, ledger.Delivery{ID: r.DeliveryID, Target: r.Target, Body: r.Body, ReceivedAt: r.ReceivedAt.UTC(),
			Attempts: int(r.Attempts), Outcome: r.Outcome, Failures: int(r.FailedAttempts), LastError: r.LastError})
	}
	return ds, nil
}

// DeliveryFinish implements ledger.InboxDriver.
func (d driver) DeliveryFinish(ctx context.Context, p ledger.DeliveryUpdateParams) error {
	return d.q.DeliveryFinish(ctx, dbsqlc.DeliveryFinishParams{DeliveryID: p.ID, ProcessedAt: p.At, Outcome: p.Outcome})
}

// DeliveryDefer implements ledger.InboxDriver.
func (d driver) DeliveryDefer(ctx context.Context, p ledger.DeliveryUpdateParams) error {
	return d.q.DeliveryDefer(ctx, dbsqlc.DeliveryDeferParams{DeliveryID: p.ID, DueAt: p.At, Outcome: p.Outcome})
}

// DeliveryFail implements ledger.InboxDriver.
func (d driver) DeliveryFail(ctx context.Context, p ledger.DeliveryUpdateParams) error {
	return d.q.DeliveryFail(ctx, dbsqlc.DeliveryFailParams{DeliveryID: p.ID, DueAt: p.At, Outcome: p.Outcome,
		LastError: p.Error})
}

// QuarantineInsert implements ledger.InboxDriver.
func (d driver) QuarantineInsert(ctx context.Context, p ledger.QuarantineInsertParams) (int64, error) {
	q := p.Item
	return d.q.QuarantineInsert(ctx, dbsqlc.QuarantineInsertParams{Target: q.Target, DeliveryID: q.DeliveryID,
		Reason: q.Reason, EventID: q.EventID, ClaimedReference: q.Reference, ClaimedTenant: q.Tenant,
		RemoteID: q.RemoteID, OperationID: q.OperationID, OperationTenant: q.OpTenant, QuarantinedAt: p.At,
		ScopeTenant: p.ScopeTenant})
}

// QuarantineDismiss implements ledger.InboxDriver.
func (d driver) QuarantineDismiss(ctx context.Context, p ledger.QuarantineResolveParams) (string, bool, error) {
	a := p.Action
	opID, err := d.q.QuarantineDismiss(ctx, dbsqlc.QuarantineDismissParams{ScopeTenant: p.ScopeTenant,
		QuarantineID: p.ID, ResolvedAt: a.At, ResolvedBy: a.Subject, ResolvedByName: a.Name, Resolution: a.Reason,
		ResolvedByRole: a.Role})
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	return opID, err == nil, err
}

// LeaseOperation implements ledger.InboxStore.
func (s *Store) LeaseOperation(ctx context.Context, tenant, id string, lease time.Duration) (ledger.Operation, error) {
	if _, err := get(ctx, s.pool, tenant, id); err != nil {
		return ledger.Operation{}, err
	}
	now := s.clock()
	ops, err := collect(s.pool.Query(ctx, `UPDATE operation_ledger SET fence_token = fence_token + 1,
		lease_expires_at = $3, next_reconcile_at = $3, updated_at = $4
		WHERE tenant_id = $1 AND operation_id = $2 AND state = 'UNKNOWN'
			AND (lease_expires_at IS NULL OR lease_expires_at <= $4)
		RETURNING `+cols, tenant, id, now.Add(lease), now))
	if err != nil {
		return ledger.Operation{}, fmt.Errorf("lease operation: %w", err)
	}
	if len(ops) == 0 {
		return ledger.Operation{}, ledger.Errorf(ledger.EStaleFence, "operation is not UNKNOWN or is held by another worker")
	}
	return ops[0], nil
}
