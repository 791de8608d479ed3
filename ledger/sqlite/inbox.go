package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"settle/ledger"
	"settle/ledger/sqlite/internal/dbsqlc"
)

var _ ledger.InboxStore = (*Store)(nil)

// DeliveryInsert implements ledger.InboxDriver.
func (d driver) DeliveryInsert(ctx context.Context, p ledger.DeliveryInsertParams) (int64, bool, error) {
	id, err := d.w.DeliveryInsert(ctx, dbsqlc.DeliveryInsertParams{Target: p.Target, BodySha256: p.Sum, Body: p.Body,
		ReceivedAt: micros(p.ReceivedAt)})
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return id, err == nil, err
}

// DeliveryIDByBody implements ledger.InboxDriver.
func (d driver) DeliveryIDByBody(ctx context.Context, target string, sum []byte) (int64, error) {
	return d.r.DeliveryIDByBody(ctx, dbsqlc.DeliveryIDByBodyParams{Target: target, BodySha256: sum})
}

// DeliveryClaim implements ledger.InboxDriver, in one write transaction.
func (d driver) DeliveryClaim(ctx context.Context, p ledger.DeliveryClaimParams) ([]ledger.Delivery, error) {
	var rows []dbsqlc.DeliveryClaimRow
	err := d.inTx(ctx, func(q *dbsqlc.Queries) error {
		var err error
		rows, err = q.DeliveryClaim(ctx, dbsqlc.DeliveryClaimParams{Now: micros(p.Now), LeaseUntil: micros(p.LeaseUntil),
			MaxRows: int64(p.Max)})
		return err
	})
	if err != nil {
		return nil, err
	}
	ds := make([]ledger.Delivery, 0, len(rows))
	for _, r := range rows {
		ds = append(ds, ledger.Delivery{ID: r.DeliveryID, Target: r.Target, Body: r.Body, ReceivedAt: fromMicros(r.ReceivedAt),
			Attempts: int(r.Attempts), Outcome: r.Outcome, Failures: int(r.FailedAttempts), LastError: r.LastError})
	}
	return ds, nil
}

// DeliveryFinish implements ledger.InboxDriver.
func (d driver) DeliveryFinish(ctx context.Context, p ledger.DeliveryUpdateParams) error {
	return d.w.DeliveryFinish(ctx, dbsqlc.DeliveryFinishParams{DeliveryID: p.ID, ProcessedAt: micros(p.At), Outcome: p.Outcome})
}

// DeliveryDefer implements ledger.InboxDriver.
func (d driver) DeliveryDefer(ctx context.Context, p ledger.DeliveryUpdateParams) error {
	return d.w.DeliveryDefer(ctx, dbsqlc.DeliveryDeferParams{DeliveryID: p.ID, DueAt: micros(p.At), Outcome: p.Outcome})
}

// DeliveryFail implements ledger.InboxDriver.
func (d driver) DeliveryFail(ctx context.Context, p ledger.DeliveryUpdateParams) error {
	return d.w.DeliveryFail(ctx, dbsqlc.DeliveryFailParams{DeliveryID: p.ID, DueAt: micros(p.At), Outcome: p.Outcome,
		LastError: p.Error})
}

// QuarantineInsert implements ledger.InboxDriver.
func (d driver) QuarantineInsert(ctx context.Context, p ledger.QuarantineInsertParams) (int64, error) {
	q := p.Item
	return d.w.QuarantineInsert(ctx, dbsqlc.QuarantineInsertParams{Target: q.Target, DeliveryID: q.DeliveryID,
		Reason: q.Reason, EventID: q.EventID, ClaimedReference: q.Reference, ClaimedTenant: q.Tenant,
		RemoteID: q.RemoteID, OperationID: q.OperationID, OperationTenant: q.OpTenant, QuarantinedAt: micros(p.At),
		ScopeTenant: p.ScopeTenant})
}

// QuarantineDismiss implements ledger.InboxDriver.
func (d driver) QuarantineDismiss(ctx context.Context, p ledger.QuarantineResolveParams) (string, bool, error) {
	a := p.Action
	opID, err := d.w.QuarantineDismiss(ctx, dbsqlc.QuarantineDismissParams{ScopeTenant: p.ScopeTenant,
		QuarantineID: p.ID, ResolvedAt: micros(a.At), ResolvedBy: a.Subject, ResolvedByName: a.Name,
		Resolution: a.Reason, ResolvedByRole: a.Role})
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return opID, err == nil, err
}

// OperationLeaseUnknown implements ledger.InboxDriver, in one write
// transaction.
func (d driver) OperationLeaseUnknown(ctx context.Context, p ledger.OperationLeaseParams) (ledger.Operation, bool, error) {
	var rows []dbsqlc.OperationLedger
	err := d.inTx(ctx, func(q *dbsqlc.Queries) error {
		var err error
		rows, err = q.OperationLeaseUnknown(ctx, dbsqlc.OperationLeaseUnknownParams{TenantID: p.Tenant, OperationID: p.ID,
			Now: micros(p.Now), LeaseUntil: micros(p.LeaseUntil)})
		return err
	})
	if err != nil || len(rows) == 0 {
		return ledger.Operation{}, false, err
	}
	return operationOf(rows[0]), true, nil
}
