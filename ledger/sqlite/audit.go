package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"settle/ledger"
	"settle/ledger/sqlite/internal/dbsqlc"
)

var _ ledger.AuditStore = (*Store)(nil)

// AuditBatch implements ledger.AuditStore on the partial index
// operation_ledger_audit (target, created_at, operation_id) of the final
// states.
func (s *Store) AuditBatch(ctx context.Context, target string, after ledger.Cursor, n int) ([]ledger.Operation, ledger.Cursor, error) {
	if err := ledger.CheckAuditBatch(target, after, n); err != nil {
		return nil, ledger.Cursor{}, err
	}
	var at, id any
	if after.ID != "" {
		at, id = micros(after.CreatedAt), after.ID
	}
	ops, err := collect(s.r.QueryContext(ctx, `SELECT `+cols+` FROM operation_ledger
		WHERE target = ?1 AND state IN ('SUCCEEDED', 'FAILED_TERMINAL')
			AND (?2 IS NULL OR (created_at, operation_id) > (?2, ?3))
		ORDER BY created_at, operation_id
		LIMIT ?4`, target, at, id, n))
	if err != nil {
		return nil, ledger.Cursor{}, fmt.Errorf("audit batch: %w", err)
	}
	return ops, ledger.NextAuditPosition(ops, n), nil
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
