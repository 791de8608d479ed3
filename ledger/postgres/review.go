package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"settle/ledger"
)

var _ ledger.ReviewStore = (*Store)(nil)

// LinkQuarantine implements ledger.ReviewStore. The operation is read FOR
// SHARE under the tenant: another tenant's operation is simply not found,
// and the operation cannot vanish or change tenant while the link is made.
func (s *Store) LinkQuarantine(ctx context.Context, tenant string, id int64, operationID, reason string) error {
	if err := ledger.CheckLink(tenant, operationID, reason); err != nil {
		return err
	}
	err := s.withAction(ctx, ledger.ActionQuarantineLink, tenant, strconv.FormatInt(id, 10), func(tx pgx.Tx, a *ledger.Action) error {
		a.Reason, a.OperationID = reason, operationID
		var found bool
		err := tx.QueryRow(ctx, `SELECT true FROM operation_ledger WHERE tenant_id = $1 AND operation_id = $2
			FOR SHARE`, tenant, operationID).Scan(&found)
		if errors.Is(err, pgx.ErrNoRows) {
			return ledger.Errorf(ledger.ENotFound, "operation not found")
		}
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE quarantine SET operation_id = $3, operation_tenant = $1,
			resolved_at = $4, resolved_by = $5, resolved_by_name = $6, resolution = $7, resolved_by_role = $8,
			resolution_kind = 'linked'
			WHERE scope_tenant = $1 AND quarantine_id = $2 AND resolved_at IS NULL`,
			tenant, id, operationID, a.At, a.Subject, a.Name, reason, a.Role)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return ledger.Errorf(ledger.ENotFound, "no open quarantine item %d", id)
		}
		// Evidence, not a verdict: an UNKNOWN operation no reconciler holds
		// becomes due now; its state is the reconciler's to change.
		_, err = tx.Exec(ctx, `UPDATE operation_ledger SET next_reconcile_at = $3
			WHERE tenant_id = $1 AND operation_id = $2 AND state = 'UNKNOWN'
				AND (lease_expires_at IS NULL OR lease_expires_at <= $3)
				AND (next_reconcile_at IS NULL OR next_reconcile_at > $3)`, tenant, operationID, a.At)
		return err
	})
	if err != nil {
		return fmt.Errorf("link quarantine: %w", err)
	}
	return nil
}

// findingSearch is ListFindings for a pasted reference, driven by the
// findings that name it (migration 00038): those of an operation settle
// has seen the object under (operation_objects, which holds a finding's
// own ids) and those whose operation id starts with the reference (a whole
// id among them). An OR of these in the list's WHERE walked every open
// finding newest first, testing each (67 ms at 100,000).
const findingSearch = `WITH hits AS (
		SELECT f.finding_id FROM operation_objects o
			JOIN audit_findings f ON f.tenant_id = o.tenant_id AND f.operation_id = o.operation_id
			WHERE o.object_id = $9
		UNION ALL SELECT finding_id FROM audit_findings
			WHERE $10::text <> '' AND operation_id::text LIKE $10::text || '%'
	)
	SELECT ` + findingCols + ` FROM audit_findings
	WHERE finding_id IN (SELECT finding_id FROM hits)
		AND ($1 OR tenant_id = ANY($2::text[]))
		AND ($3 = '' OR operation_id = nullif($3, '')::uuid)
		AND (NOT $4 OR (acknowledged_at IS NULL AND resolved_at IS NULL))
		AND (NOT $6 OR acknowledged_at IS NOT NULL OR resolved_at IS NOT NULL)
		AND ($7::text = '' OR target = $7)
		AND ($8::text = '' OR kind = $8)
		AND ($11::timestamptz IS NULL OR found_at < $11)
		AND ($12::bigint = 0 OR finding_id < $12)
	ORDER BY finding_id DESC LIMIT $5`

// ListFindings implements ledger.ReviewStore.
func (s *Store) ListFindings(ctx context.Context, f ledger.FindingFilter) ([]ledger.Finding, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	tenants := f.Tenants
	if tenants == nil {
		tenants = []string{}
	}
	ref, opPrefix := ledger.SearchRef(f.Ref)
	stmt := `SELECT ` + findingCols + ` FROM audit_findings
		WHERE ($1 OR tenant_id = ANY($2::text[]))
			AND ($3 = '' OR operation_id = nullif($3, '')::uuid)
			AND (NOT $4 OR (acknowledged_at IS NULL AND resolved_at IS NULL))
			AND (NOT $6 OR acknowledged_at IS NOT NULL OR resolved_at IS NOT NULL)
			AND ($7::text = '' OR target = $7)
			AND ($8::text = '' OR kind = $8)
			AND ($9::text = '' OR operation_id::text = lower($9) OR remote_ids::jsonb ? $9
				OR ($10::text <> '' AND operation_id::text LIKE $10::text || '%'))
			AND ($11::timestamptz IS NULL OR found_at < $11)
			AND ($12::bigint = 0 OR finding_id < $12)
		ORDER BY finding_id DESC LIMIT $5`
	if ref != "" {
		stmt = findingSearch // the list's search walks every row (see findingSearch)
	}
	rows, err := s.pool.Query(ctx, stmt, f.AllTenants, tenants, f.OperationID, f.Open, f.LimitArg(),
		f.Resolved, f.Target, string(f.Kind), ref, opPrefix, f.Before, f.After)
	if err != nil {
		return nil, fmt.Errorf("list findings: %w", err)
	}
	fs, err := pgx.CollectRows(rows, scanFinding)
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
	err := s.withAction(ctx, ledger.ActionFindingAcknowledge, tenant, strconv.FormatInt(id, 10), func(tx pgx.Tx, a *ledger.Action) error {
		a.Reason = note
		err := tx.QueryRow(ctx, `UPDATE audit_findings SET acknowledged_at = $3, acknowledged_by = $4,
			acknowledged_by_name = $5, acknowledgement = $6
			WHERE tenant_id = $1 AND finding_id = $2 AND acknowledged_at IS NULL
			RETURNING operation_id::text`, tenant, id, a.At, a.Subject, a.Name, note).Scan(&a.OperationID)
		if errors.Is(err, pgx.ErrNoRows) {
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
	var q ledger.QuarantineItem
	err := s.pool.QueryRow(ctx, `SELECT quarantine_id, target, coalesce(delivery_id, 0), reason, event_id,
		claimed_reference, claimed_tenant, remote_id, operation_id, operation_tenant, quarantined_at,
		resolved_at, resolved_by, resolved_by_name, resolved_by_role, resolution_kind, resolution
		FROM quarantine WHERE quarantine_id = $1 AND scope_tenant = $2`, id, tenant).Scan(&q.ID, &q.Target,
		&q.DeliveryID, &q.Reason, &q.EventID, &q.Reference, &q.Tenant, &q.RemoteID, &q.OperationID, &q.OpTenant,
		&q.At, &q.ResolvedAt, &q.ResolvedBy, &q.ResolvedByName, &q.ResolvedByRole, &q.ResolvedAs, &q.Resolution)
	if errors.Is(err, pgx.ErrNoRows) {
		return q, ledger.Errorf(ledger.ENotFound, "no quarantine item %d", id)
	}
	if err != nil {
		return q, fmt.Errorf("quarantine item: %w", err)
	}
	q.At = q.At.UTC()
	utcp(q.ResolvedAt)
	return q, nil
}

// Finding implements ledger.ReviewStore.
func (s *Store) Finding(ctx context.Context, tenant string, id int64) (ledger.Finding, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+findingCols+` FROM audit_findings
		WHERE finding_id = $1 AND tenant_id = $2`, id, tenant)
	if err != nil {
		return ledger.Finding{}, fmt.Errorf("finding: %w", err)
	}
	f, err := pgx.CollectExactlyOneRow(rows, scanFinding)
	if errors.Is(err, pgx.ErrNoRows) {
		return f, ledger.Errorf(ledger.ENotFound, "no finding %d", id)
	}
	if err != nil {
		return f, fmt.Errorf("finding: %w", err)
	}
	return f, nil
}
