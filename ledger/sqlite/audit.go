package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"settle/ledger"
	"settle/ledger/sqlite/internal/dbsqlc"
)

var _ ledger.AuditStore = (*Store)(nil)

// AuditFinalBatch implements ledger.AuditDriver on the partial index
// operation_ledger_audit (target, created_at, operation_id) of the final
// states.
func (d driver) AuditFinalBatch(ctx context.Context, target string, after ledger.Cursor, max int) ([]ledger.Operation, error) {
	p := dbsqlc.AuditFinalBatchParams{Target: target, AfterID: after.ID, MaxRows: int64(max)}
	if after.ID != "" {
		p.AfterCreatedAt = micros(after.CreatedAt)
	}
	rows, err := d.r.AuditFinalBatch(ctx, p)
	if err != nil {
		return nil, err
	}
	var ops []ledger.Operation
	for _, r := range rows {
		ops = append(ops, operationOf(r))
	}
	return ops, nil
}

// FindingInsert implements ledger.AuditDriver: the operation is read in
// the same write transaction, so its target is the finding's.
func (d driver) FindingInsert(ctx context.Context, p ledger.FindingInsertParams) (found, created bool, err error) {
	f := p.Finding
	err = d.inTx(ctx, func(q *dbsqlc.Queries) error {
		target, err := q.OperationTarget(ctx, dbsqlc.OperationTargetParams{TenantID: f.Tenant, OperationID: f.OperationID})
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		n, err := q.FindingInsert(ctx, dbsqlc.FindingInsertParams{TenantID: f.Tenant, OperationID: f.OperationID,
			Target: target, Kind: string(f.Kind), RemoteIds: p.RemoteIDs, Evidence: p.Evidence, FoundAt: micros(p.At),
			Escalated: f.Escalated})
		created = n == 1
		return err
	})
	return found, created, err
}

// FindingsSince implements ledger.AuditDriver.
func (d driver) FindingsSince(ctx context.Context, tenant string, since time.Time, max int) ([]ledger.Finding, error) {
	rows, err := d.r.FindingsSince(ctx, dbsqlc.FindingsSinceParams{TenantID: tenant, Since: micros(since), MaxRows: int64(max)})
	if err != nil {
		return nil, err
	}
	return findingsOf(rows)
}

// FindingCount implements ledger.AuditDriver.
func (d driver) FindingCount(ctx context.Context, p ledger.FindingCountParams) (int, error) {
	n, err := d.r.FindingCount(ctx, dbsqlc.FindingCountParams{TenantID: p.Tenant, Kind: string(p.Kind),
		Since: micros(p.Since), Until: micros(p.Until)})
	return int(n), err
}

// AuditCursorGet implements ledger.AuditDriver.
func (d driver) AuditCursorGet(ctx context.Context, target string) (ledger.Cursor, bool, error) {
	r, err := d.r.AuditCursorGet(ctx, target)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return ledger.Cursor{}, false, nil
	case err != nil:
		return ledger.Cursor{}, false, err
	case !r.LastCreatedAt.Valid || !r.LastOperationID.Valid:
		return ledger.Cursor{}, true, nil
	}
	return ledger.Cursor{CreatedAt: fromMicros(r.LastCreatedAt.Int64), ID: r.LastOperationID.String}, true, nil
}

// AuditCursorSave implements ledger.AuditDriver.
func (d driver) AuditCursorSave(ctx context.Context, target string, pos ledger.Cursor, at time.Time) error {
	p := dbsqlc.AuditCursorSaveParams{Target: target, UpdatedAt: micros(at)}
	if pos.ID != "" {
		p.LastCreatedAt = sql.NullInt64{Int64: micros(pos.CreatedAt), Valid: true}
		p.LastOperationID = sql.NullString{String: pos.ID, Valid: true}
	}
	return d.w.AuditCursorSave(ctx, p)
}
