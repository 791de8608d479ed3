package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"settle/ledger"
)

var _ ledger.ReviewStore = (*Store)(nil)

// LinkQuarantine implements ledger.ReviewStore. SQLite has one writer, so
// the operation read inside the transaction cannot change under it.
func (s *Store) LinkQuarantine(ctx context.Context, tenant string, id int64, operationID, reason string) error {
	if err := ledger.CheckLink(tenant, operationID, reason); err != nil {
		return err
	}
	err := s.withAction(ctx, ledger.ActionQuarantineLink, tenant, strconv.FormatInt(id, 10), func(tx *sql.Tx, a *ledger.Action) error {
		a.Reason, a.OperationID = reason, operationID
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM operation_ledger WHERE tenant_id = ? AND operation_id = ?`,
			tenant, operationID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return ledger.Errorf(ledger.ENotFound, "operation not found")
		}
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE quarantine SET operation_id = ?3, operation_tenant = ?1,
			resolved_at = ?4, resolved_by = ?5, resolved_by_name = ?6, resolution = ?7, resolved_by_role = ?8,
			resolution_kind = 'linked'
			WHERE scope_tenant = ?1 AND quarantine_id = ?2 AND resolved_at IS NULL`,
			tenant, id, operationID, micros(a.At), a.Subject, a.Name, reason, a.Role)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err != nil {
				return err
			}
			return ledger.Errorf(ledger.ENotFound, "no open quarantine item %d", id)
		}
		// Evidence, not a verdict: an UNKNOWN operation no reconciler holds
		// becomes due now; its state is the reconciler's to change.
		_, err = tx.ExecContext(ctx, `UPDATE operation_ledger SET next_reconcile_at = ?3
			WHERE tenant_id = ?1 AND operation_id = ?2 AND state = 'UNKNOWN'
				AND (lease_expires_at IS NULL OR lease_expires_at <= ?3)
				AND (next_reconcile_at IS NULL OR next_reconcile_at > ?3)`, tenant, operationID, micros(a.At))
		return err
	})
	if err != nil {
		return fmt.Errorf("link quarantine: %w", err)
	}
	return nil
}

// findingSearch is ListFindings for a pasted reference, driven by the
// findings that name it (each arm of the union an index of migration
// 00038): those of an operation settle has seen the object under
// (operation_objects, which holds a finding's own ids) and those whose
// operation id starts with the reference (a whole id among them; lowercase
// hex and '-' are all below '~'). SQLite plans the list once for every
// value, so its "?9 = ” OR ..." walked every open finding (95 ms at
// 100,000).
const findingSearch = `WITH hits AS (
		SELECT f.finding_id AS hit FROM operation_objects o
			JOIN audit_findings f ON f.tenant_id = o.tenant_id AND f.operation_id = o.operation_id
			WHERE o.object_id = ?9
		UNION ALL SELECT finding_id FROM audit_findings
			WHERE ?10 <> '' AND lower(operation_id) >= ?10 AND lower(operation_id) < ?10 || '~'
	)
	SELECT ` + findingCols + ` FROM audit_findings
	WHERE finding_id IN (SELECT hit FROM hits)
		AND (?1 OR tenant_id IN (SELECT value FROM json_each(?2)))
		AND (?3 = '' OR operation_id = ?3)
		AND (NOT ?4 OR (acknowledged_at IS NULL AND resolved_at IS NULL))
		AND (NOT ?6 OR acknowledged_at IS NOT NULL OR resolved_at IS NOT NULL)
		AND (?7 = '' OR target = ?7)
		AND (?8 = '' OR kind = ?8)
		AND (?11 IS NULL OR found_at < ?11)
		AND (CAST(?12 AS INTEGER) = 0 OR finding_id < CAST(?12 AS INTEGER))
	ORDER BY finding_id DESC LIMIT ?5`

// ListFindings implements ledger.ReviewStore.
func (s *Store) ListFindings(ctx context.Context, f ledger.FindingFilter) ([]ledger.Finding, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	tenants := f.Tenants
	if tenants == nil {
		tenants = []string{}
	}
	list, err := json.Marshal(tenants)
	if err != nil {
		return nil, fmt.Errorf("list findings: %w", err)
	}
	ref, opPrefix := ledger.SearchRef(f.Ref)
	var before any
	if f.Before != nil {
		before = micros(*f.Before)
	}
	stmt := `SELECT ` + findingCols + ` FROM audit_findings
		WHERE (?1 OR tenant_id IN (SELECT value FROM json_each(?2)))
			AND (?3 = '' OR operation_id = ?3)
			AND (NOT ?4 OR (acknowledged_at IS NULL AND resolved_at IS NULL))
			AND (NOT ?6 OR acknowledged_at IS NOT NULL OR resolved_at IS NOT NULL)
			AND (?7 = '' OR target = ?7)
			AND (?8 = '' OR kind = ?8)
			AND (?9 = '' OR operation_id = lower(?9)
				OR EXISTS (SELECT 1 FROM json_each(remote_ids) WHERE value = ?9)
				OR (?10 <> '' AND substr(operation_id, 1, length(?10)) = ?10))
			AND (?11 IS NULL OR found_at < ?11)
			-- One bound on the id, so that SQLite's one plan for every
			-- value starts a continued page at its cursor instead of
			-- reading every newer row (as the quarantine's list does).
			AND finding_id < CASE WHEN CAST(?12 AS INTEGER) = 0 THEN 9223372036854775807 ELSE CAST(?12 AS INTEGER) END
		ORDER BY finding_id DESC LIMIT ?5`
	if ref != "" {
		stmt = findingSearch // the list's search walks every row (see findingSearch)
	}
	rows, err := s.r.QueryContext(ctx, stmt, f.AllTenants, string(list), f.OperationID, f.Open, f.LimitArg(),
		f.Resolved, f.Target, string(f.Kind), ref, opPrefix, before, f.After)
	if err != nil {
		return nil, fmt.Errorf("list findings: %w", err)
	}
	fs, err := scanFindings(rows)
	if err != nil {
		return nil, fmt.Errorf("list findings: %w", err)
	}
	return fs, nil
}

// AcknowledgeFinding implements ledger.ReviewStore.
func (s *Store) AcknowledgeFinding(ctx context.Context, tenant string, id int64, note string) error {
	if err := ledger.CheckReviewNote("note", note); err != nil {
		return err
	}
	err := s.withAction(ctx, ledger.ActionFindingAcknowledge, tenant, strconv.FormatInt(id, 10), func(tx *sql.Tx, a *ledger.Action) error {
		a.Reason = note
		err := tx.QueryRowContext(ctx, `UPDATE audit_findings SET acknowledged_at = ?, acknowledged_by = ?,
			acknowledged_by_name = ?, acknowledgement = ?
			WHERE tenant_id = ? AND finding_id = ? AND acknowledged_at IS NULL
			RETURNING operation_id`, micros(a.At), a.Subject, a.Name, note, tenant, id).Scan(&a.OperationID)
		if errors.Is(err, sql.ErrNoRows) {
			return ledger.Errorf(ledger.ENotFound, "no unacknowledged finding %d", id)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("acknowledge finding: %w", err)
	}
	return nil
}

// QuarantineItem implements ledger.ReviewStore.
func (s *Store) QuarantineItem(ctx context.Context, tenant string, id int64) (ledger.QuarantineItem, error) {
	var (
		q        ledger.QuarantineItem
		at       int64
		resolved sql.NullInt64
	)
	err := s.r.QueryRowContext(ctx, `SELECT quarantine_id, target, coalesce(delivery_id, 0), reason, event_id,
		claimed_reference, claimed_tenant, remote_id, operation_id, operation_tenant, quarantined_at,
		resolved_at, resolved_by, resolved_by_name, resolved_by_role, resolution_kind, resolution
		FROM quarantine WHERE quarantine_id = ? AND scope_tenant = ?`, id, tenant).Scan(&q.ID, &q.Target,
		&q.DeliveryID, &q.Reason, &q.EventID, &q.Reference, &q.Tenant, &q.RemoteID, &q.OperationID, &q.OpTenant,
		&at, &resolved, &q.ResolvedBy, &q.ResolvedByName, &q.ResolvedByRole, &q.ResolvedAs, &q.Resolution)
	if errors.Is(err, sql.ErrNoRows) {
		return q, ledger.Errorf(ledger.ENotFound, "no quarantine item %d", id)
	}
	if err != nil {
		return q, fmt.Errorf("quarantine item: %w", err)
	}
	q.At, q.ResolvedAt = fromMicros(at), fromNull(resolved)
	return q, nil
}

// Finding implements ledger.ReviewStore.
func (s *Store) Finding(ctx context.Context, tenant string, id int64) (ledger.Finding, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+findingCols+` FROM audit_findings
		WHERE finding_id = ? AND tenant_id = ?`, id, tenant)
	if err != nil {
		return ledger.Finding{}, fmt.Errorf("finding: %w", err)
	}
	fs, err := scanFindings(rows)
	if err != nil {
		return ledger.Finding{}, fmt.Errorf("finding: %w", err)
	}
	if len(fs) == 0 {
		return ledger.Finding{}, ledger.Errorf(ledger.ENotFound, "no finding %d", id)
	}
	return fs[0], nil
}
