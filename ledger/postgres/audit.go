package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"settle/ledger"
	"settle/ledger/postgres/internal/dbsqlc"
)

var _ ledger.AuditStore = (*Store)(nil)

// AuditFinalBatch implements ledger.AuditDriver on the partial index
// operation_ledger_audit (target, created_at, operation_id) of the final
// states.
func (d driver) AuditFinalBatch(ctx context.Context, target string, after ledger.Cursor, max int) ([]ledger.Operation, error) {
	p := dbsqlc.AuditFinalBatchParams{Target: target, AfterID: after.ID, MaxRows: int32(max)}
	if after.ID != "" {
		p.AfterCreatedAt = &after.CreatedAt
	}
	rows, err := d.q.AuditFinalBatch(ctx, p)
	if err != nil {
		return nil, err
	}
	var ops []ledger.Operation
	for _, r := range rows {
		ops = append(ops, operationOf(dbsqlc.OperationGetRow(r)))
	}
	return ops, nil
}

// FindingInsert implements ledger.AuditDriver in one statement (see the
// query).
func (d driver) FindingInsert(ctx context.Context, p ledger.FindingInsertParams) (bool, bool, error) {
	f := p.Finding
	r, err := d.q.FindingInsert(ctx, dbsqlc.FindingInsertParams{TenantID: f.Tenant, OperationID: f.OperationID,
		Kind: string(f.Kind), RemoteIds: p.RemoteIDs, Evidence: p.Evidence, FoundAt: p.At, Escalated: f.Escalated})
	return r.Found, r.Created, err
}

// FindingsSince implements ledger.AuditDriver.
func (d driver) FindingsSince(ctx context.Context, tenant string, since time.Time, max int) ([]ledger.Finding, error) {
	found, err := d.q.FindingsSince(ctx, dbsqlc.FindingsSinceParams{TenantID: tenant, Since: since, MaxRows: int32(max)})
	if err != nil {
		return nil, err
	}
	rows := make([]dbsqlc.FindingListRow, 0, len(found))
	for _, r := range found {
		rows = append(rows, dbsqlc.FindingListRow(r))
	}
	return findingsOf(rows)
}

// FindingCount implements ledger.AuditDriver.
func (d driver) FindingCount(ctx context.Context, p ledger.FindingCountParams) (int, error) {
	n, err := d.q.FindingCount(ctx, dbsqlc.FindingCountParams{TenantID: p.Tenant, Kind: string(p.Kind),
		Since: p.Since, Until: p.Until})
	return int(n), err
}

// AuditCursorGet implements ledger.AuditDriver.
func (d driver) AuditCursorGet(ctx context.Context, target string) (ledger.Cursor, bool, error) {
	r, err := d.q.AuditCursorGet(ctx, target)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return ledger.Cursor{}, false, nil
	case err != nil:
		return ledger.Cursor{}, false, err
	case r.LastCreatedAt == nil || r.LastOperationID == "":
		return ledger.Cursor{}, true, nil
	}
	return ledger.Cursor{CreatedAt: r.LastCreatedAt.UTC(), ID: r.LastOperationID}, true, nil
}

// AuditCursorSave implements ledger.AuditDriver.
func (d driver) AuditCursorSave(ctx context.Context, target string, pos ledger.Cursor, at time.Time) error {
	p := dbsqlc.AuditCursorSaveParams{Target: target, UpdatedAt: at}
	if pos.ID != "" {
		p.LastCreatedAt, p.LastOperationID = &pos.CreatedAt, pgtype.Text{String: pos.ID, Valid: true}
	}
	return d.q.AuditCursorSave(ctx, p)
}
