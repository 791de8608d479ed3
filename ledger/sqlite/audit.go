package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

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

// RecordFinding implements ledger.AuditStore. The operation is read in the
// same write transaction, so its target is the finding's and a missing
// operation is told apart from an open finding.
func (s *Store) RecordFinding(ctx context.Context, f ledger.Finding) (bool, error) {
	if err := f.Validate(); err != nil {
		return false, err
	}
	ids, evidence := f.EncodeJSON()
	var created bool
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var target string
		err := tx.QueryRowContext(ctx, `SELECT target FROM operation_ledger
			WHERE tenant_id = ? AND operation_id = ?`, f.Tenant, f.OperationID).Scan(&target)
		if errors.Is(err, sql.ErrNoRows) {
			return ledger.Errorf(ledger.ENotFound, "operation not found")
		}
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO audit_findings
			(tenant_id, operation_id, target, kind, remote_ids, evidence, found_at, escalated)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (tenant_id, operation_id, kind) WHERE resolved_at IS NULL DO NOTHING`,
			f.Tenant, f.OperationID, target, string(f.Kind), ids, evidence, micros(s.clock()), f.Escalated)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		created = n == 1
		return err
	})
	if err != nil {
		if ledger.ErrorCode(err) == ledger.ENotFound {
			return false, err
		}
		return false, fmt.Errorf("record finding: %w", err)
	}
	return created, nil
}

// Findings implements ledger.AuditStore.
func (s *Store) Findings(ctx context.Context, tenant string, since time.Time) ([]ledger.Finding, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+findingCols+`
		FROM audit_findings WHERE tenant_id = ? AND found_at >= ?
		ORDER BY found_at DESC, finding_id DESC LIMIT ?`, tenant, micros(since), ledger.MaxListLimit)
	if err != nil {
		return nil, fmt.Errorf("findings: %w", err)
	}
	fs, err := scanFindings(rows)
	if err != nil {
		return nil, fmt.Errorf("findings: %w", err)
	}
	return fs, nil
}

// findingCols are the columns scanFindings reads.
const findingCols = `finding_id, tenant_id, operation_id, target, kind, remote_ids, evidence, found_at,
	escalated, resolved_at, acknowledged_at, acknowledged_by, acknowledged_by_name, acknowledgement`

// scanFindings reads findingCols rows and closes them.
func scanFindings(rows *sql.Rows) ([]ledger.Finding, error) {
	defer rows.Close()
	var fs []ledger.Finding
	for rows.Next() {
		var (
			f                   ledger.Finding
			kind, ids, evidence string
			found               int64
			resolved, ackAt     sql.NullInt64
			ack                 ledger.Acknowledgement
		)
		if err := rows.Scan(&f.ID, &f.Tenant, &f.OperationID, &f.Target, &kind, &ids, &evidence,
			&found, &f.Escalated, &resolved, &ackAt, &ack.Subject, &ack.Name, &ack.Note); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(ids), &f.RemoteIDs); err != nil {
			return nil, fmt.Errorf("finding %d: remote ids: %w", f.ID, err)
		}
		f.Kind, f.Evidence = ledger.FindingKind(kind), []byte(evidence)
		f.FoundAt, f.ResolvedAt = fromMicros(found), fromNull(resolved)
		if ackAt.Valid {
			ack.At = fromMicros(ackAt.Int64)
			f.Acknowledged = &ack
		}
		fs = append(fs, f)
	}
	return fs, rows.Err()
}

// CountFindings implements ledger.AuditStore.
func (s *Store) CountFindings(ctx context.Context, tenant string, kind ledger.FindingKind, w ledger.Window) (int, error) {
	var n int
	err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM audit_findings
		WHERE tenant_id = ?1 AND found_at >= ?2 AND found_at < ?4 AND (?3 = '' OR kind = ?3)`,
		tenant, micros(w.Since), string(kind), micros(w.Until)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count findings: %w", err)
	}
	return n, nil
}

// AuditPosition implements ledger.AuditStore.
func (s *Store) AuditPosition(ctx context.Context, target string) (ledger.Cursor, error) {
	var (
		at sql.NullInt64
		id sql.NullString
	)
	err := s.r.QueryRowContext(ctx, `SELECT last_created_at, last_operation_id FROM audit_cursor
		WHERE target = ?`, target).Scan(&at, &id)
	if errors.Is(err, sql.ErrNoRows) {
		return ledger.Cursor{}, ledger.Errorf(ledger.ENotFound, "no audit position for target %s", target)
	}
	if err != nil {
		return ledger.Cursor{}, fmt.Errorf("audit position: %w", err)
	}
	if !at.Valid || !id.Valid {
		return ledger.Cursor{}, nil
	}
	return ledger.Cursor{CreatedAt: fromMicros(at.Int64), ID: id.String}, nil
}

// SaveAuditPosition implements ledger.AuditStore.
func (s *Store) SaveAuditPosition(ctx context.Context, target string, pos ledger.Cursor) error {
	if err := ledger.CheckAuditBatch(target, pos, 1); err != nil {
		return err
	}
	var at, id any
	if pos.ID != "" {
		at, id = micros(pos.CreatedAt), pos.ID
	}
	_, err := s.w.ExecContext(ctx, `INSERT INTO audit_cursor (target, last_created_at, last_operation_id, updated_at)
		VALUES (?, ?, ?, ?)
		ON CONFLICT (target) DO UPDATE SET last_created_at = excluded.last_created_at,
			last_operation_id = excluded.last_operation_id, updated_at = excluded.updated_at`,
		target, at, id, micros(s.clock()))
	if err != nil {
		return fmt.Errorf("save audit position: %w", err)
	}
	return nil
}
