package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"settle/ledger"
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
		at, id = after.CreatedAt, after.ID
	}
	ops, err := collect(s.pool.Query(ctx, `SELECT `+cols+` FROM operation_ledger
		WHERE target = $1 AND state IN ('SUCCEEDED', 'FAILED_TERMINAL')
			AND ($2::timestamptz IS NULL OR (created_at, operation_id) > ($2, $3::uuid))
		ORDER BY created_at, operation_id
		LIMIT $4`, target, at, id, n))
	if err != nil {
		return nil, ledger.Cursor{}, fmt.Errorf("audit batch: %w", err)
	}
	return ops, ledger.NextAuditPosition(ops, n), nil
}

// recordFindingSQL inserts the finding with the operation's own target in
// one statement, and says whether the operation exists, so that "no such
// operation" and "already open" are told apart without a transaction.
const recordFindingSQL = `
WITH op AS (
	SELECT tenant_id, operation_id, target FROM operation_ledger
	WHERE tenant_id = $1 AND operation_id = $2::uuid
), ins AS (
	INSERT INTO audit_findings (tenant_id, operation_id, target, kind, remote_ids, evidence, found_at, escalated)
	SELECT tenant_id, operation_id, target, $3, $4, $5::jsonb, $6, $7 FROM op
	ON CONFLICT (tenant_id, operation_id, kind) WHERE resolved_at IS NULL DO NOTHING
	RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM op), EXISTS (SELECT 1 FROM ins)`

// RecordFinding implements ledger.AuditStore.
func (s *Store) RecordFinding(ctx context.Context, f ledger.Finding) (bool, error) {
	if err := f.Validate(); err != nil {
		return false, err
	}
	ids, evidence := f.EncodeJSON()
	var found, created bool
	err := s.pool.QueryRow(ctx, recordFindingSQL, f.Tenant, f.OperationID, string(f.Kind), ids,
		evidence, s.clock(), f.Escalated).Scan(&found, &created)
	if err != nil {
		return false, fmt.Errorf("record finding: %w", err)
	}
	if !found {
		return false, ledger.Errorf(ledger.ENotFound, "operation not found")
	}
	return created, nil
}

// Findings implements ledger.AuditStore.
func (s *Store) Findings(ctx context.Context, tenant string, since time.Time) ([]ledger.Finding, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+findingCols+`
		FROM audit_findings WHERE tenant_id = $1 AND found_at >= $2
		ORDER BY found_at DESC, finding_id DESC LIMIT $3`, tenant, since, ledger.MaxListLimit)
	if err != nil {
		return nil, fmt.Errorf("findings: %w", err)
	}
	fs, err := pgx.CollectRows(rows, scanFinding)
	if err != nil {
		return nil, fmt.Errorf("findings: %w", err)
	}
	return fs, nil
}

// findingCols are the columns scanFinding reads.
const findingCols = `finding_id, tenant_id, operation_id::text, target, kind, remote_ids, evidence::text,
	found_at, escalated, resolved_at, acknowledged_at, acknowledged_by, acknowledged_by_name, acknowledgement`

func scanFinding(row pgx.CollectableRow) (ledger.Finding, error) {
	var (
		f                   ledger.Finding
		kind, ids, evidence string
		ackAt               *time.Time
		ack                 ledger.Acknowledgement
	)
	err := row.Scan(&f.ID, &f.Tenant, &f.OperationID, &f.Target, &kind, &ids, &evidence,
		&f.FoundAt, &f.Escalated, &f.ResolvedAt, &ackAt, &ack.Subject, &ack.Name, &ack.Note)
	if err != nil {
		return f, err
	}
	if ackAt != nil {
		ack.At = ackAt.UTC()
		f.Acknowledged = &ack
	}
	f.Kind, f.Evidence = ledger.FindingKind(kind), []byte(evidence)
	if err := json.Unmarshal([]byte(ids), &f.RemoteIDs); err != nil {
		return f, fmt.Errorf("finding %d: remote ids: %w", f.ID, err)
	}
	utc(&f.FoundAt)
	utcp(f.ResolvedAt)
	return f, nil
}

// CountFindings implements ledger.AuditStore.
func (s *Store) CountFindings(ctx context.Context, tenant string, kind ledger.FindingKind, w ledger.Window) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM audit_findings
		WHERE tenant_id = $1 AND found_at >= $2 AND found_at < $4 AND ($3 = '' OR kind = $3)`,
		tenant, w.Since, string(kind), w.Until).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count findings: %w", err)
	}
	return n, nil
}

// AuditPosition implements ledger.AuditStore.
func (s *Store) AuditPosition(ctx context.Context, target string) (ledger.Cursor, error) {
	var (
		at *time.Time
		id *string
	)
	err := s.pool.QueryRow(ctx, `SELECT last_created_at, last_operation_id::text FROM audit_cursor
		WHERE target = $1`, target).Scan(&at, &id)
	if errors.Is(err, pgx.ErrNoRows) {
		return ledger.Cursor{}, ledger.Errorf(ledger.ENotFound, "no audit position for target %s", target)
	}
	if err != nil {
		return ledger.Cursor{}, fmt.Errorf("audit position: %w", err)
	}
	if at == nil || id == nil {
		return ledger.Cursor{}, nil
	}
	return ledger.Cursor{CreatedAt: at.UTC(), ID: *id}, nil
}

// SaveAuditPosition implements ledger.AuditStore.
func (s *Store) SaveAuditPosition(ctx context.Context, target string, pos ledger.Cursor) error {
	if err := ledger.CheckAuditBatch(target, pos, 1); err != nil {
		return err
	}
	var at, id any
	if pos.ID != "" {
		at, id = pos.CreatedAt, pos.ID
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO audit_cursor (target, last_created_at, last_operation_id, updated_at)
		VALUES ($1, $2, $3::uuid, $4)
		ON CONFLICT (target) DO UPDATE SET last_created_at = excluded.last_created_at,
			last_operation_id = excluded.last_operation_id, updated_at = excluded.updated_at`,
		target, at, id, s.clock())
	if err != nil {
		return fmt.Errorf("save audit position: %w", err)
	}
	return nil
}
