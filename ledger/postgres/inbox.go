package postgres

import (
	"context"
	"errors"

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

// OperationLeaseUnknown implements ledger.InboxDriver.
func (d driver) OperationLeaseUnknown(ctx context.Context, p ledger.OperationLeaseParams) (ledger.Operation, bool, error) {
	rows, err := d.q.OperationLeaseUnknown(ctx, dbsqlc.OperationLeaseUnknownParams{TenantID: p.Tenant, OperationID: p.ID,
		Now: p.Now, LeaseUntil: p.LeaseUntil})
	if err != nil || len(rows) == 0 {
		return ledger.Operation{}, false, err
	}
	return operationOf(dbsqlc.OperationGetRow(rows[0])), true, nil
}
