package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"settle/ledger"
)

var (
	_ ledger.RetentionStore = (*Store)(nil)
	_ ledger.TenantEraser   = (*Store)(nil)
)

// unlockRetention lets this transaction delete rows of the append-only
// event log and actions record (migration 00023); relock must run before
// it commits. The single writer means nobody else sees the row.
func unlockRetention(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO retention_unlock (one) VALUES (1)`)
	return err
}

func relockRetention(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM retention_unlock`)
	return err
}

// cutoff is a RetentionCutoffs instant as a parameter: NULL when the rule
// is off, which matches nothing.
func cutoff(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return micros(t)
}

// deletable selects the final operations settled before ?1 that no audit
// finding still waits on a person for. The states are literals, so SQLite
// can use operation_ledger_final_updated.
const deletable = `SELECT o.tenant_id, o.operation_id FROM operation_ledger o
	WHERE o.state IN ('SUCCEEDED', 'FAILED_TERMINAL') AND o.updated_at < ?1
	  AND NOT EXISTS (SELECT 1 FROM audit_findings f
		WHERE f.tenant_id = o.tenant_id AND f.operation_id = o.operation_id
		  AND f.acknowledged_at IS NULL AND f.resolved_at IS NULL)`

// CountRetention implements ledger.RetentionStore.
func (s *Store) CountRetention(ctx context.Context, c ledger.RetentionCutoffs) (ledger.RetentionCounts, error) {
	var n ledger.RetentionCounts
	err := s.r.QueryRowContext(ctx, `WITH d AS (`+deletable+`)
		SELECT (SELECT count(*) FROM d),
			(SELECT count(*) FROM operation_events e JOIN d USING (tenant_id, operation_id)),
			(SELECT count(*) FROM callback_outbox x JOIN d USING (tenant_id, operation_id)),
			(SELECT count(*) FROM audit_findings x JOIN d USING (tenant_id, operation_id)),
			(SELECT count(*) FROM resolutions x JOIN d USING (tenant_id, operation_id)),
			(SELECT count(*) FROM payload_conflicts x JOIN d USING (tenant_id, operation_id)),
			(SELECT count(*) FROM operation_ledger o
				WHERE o.state IN ('SUCCEEDED', 'FAILED_TERMINAL') AND length(o.payload) > 0 AND o.updated_at < ?2
				  AND NOT EXISTS (SELECT 1 FROM d WHERE d.tenant_id = o.tenant_id AND d.operation_id = o.operation_id)),
			(SELECT count(*) FROM quarantine WHERE resolved_at IS NOT NULL AND resolved_at < ?3),
			(SELECT count(*) FROM webhook_inbox w WHERE processed_at IS NOT NULL AND processed_at < ?3
				AND NOT EXISTS (SELECT 1 FROM quarantine q WHERE q.delivery_id = w.delivery_id AND q.resolved_at IS NULL))`,
		cutoff(c.Delete), cutoff(c.Redact), cutoff(c.Purge)).Scan(
		&n.Operations, &n.Events, &n.Notifications, &n.Findings, &n.Resolutions, &n.Conflicts,
		&n.PayloadsRedacted, &n.Quarantine, &n.Deliveries)
	if err != nil {
		return ledger.RetentionCounts{}, fmt.Errorf("count retention: %w", err)
	}
	return n, nil
}

// RedactPayloads implements ledger.RetentionStore.
func (s *Store) RedactPayloads(ctx context.Context, before time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, ledger.Errorf(ledger.EInvalid, "limit must be positive")
	}
	res, err := s.w.ExecContext(ctx, `UPDATE operation_ledger SET payload = x''
		WHERE (tenant_id, operation_id) IN (SELECT tenant_id, operation_id FROM operation_ledger
			WHERE state IN ('SUCCEEDED', 'FAILED_TERMINAL') AND length(payload) > 0 AND updated_at < ?1
			ORDER BY updated_at LIMIT ?2)`, micros(before), limit)
	if err != nil {
		return 0, fmt.Errorf("redact payloads: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("redact payloads: %w", err)
	}
	return int(n), nil
}

// DeleteOperations implements ledger.RetentionStore.
func (s *Store) DeleteOperations(ctx context.Context, before time.Time, limit int) (ledger.RetentionCounts, error) {
	if limit <= 0 {
		return ledger.RetentionCounts{}, ledger.Errorf(ledger.EInvalid, "limit must be positive")
	}
	var n ledger.RetentionCounts
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		keys, err := collectKeys(ctx, tx, deletable+` ORDER BY o.updated_at LIMIT ?2`, micros(before), limit)
		if err != nil || keys == nil {
			return err
		}
		n, err = deleteOperations(ctx, tx, keys)
		return err
	})
	if err != nil {
		return ledger.RetentionCounts{}, fmt.Errorf("delete operations: %w", err)
	}
	return n, nil
}

// collectKeys reads (tenant, operation id) rows as a JSON array of pairs,
// the parameter deleteOperations takes; nil when there are none.
func collectKeys(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]byte, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var keys [][2]string
	for rows.Next() {
		var k [2]string
		if err := rows.Scan(&k[0], &k[1]); err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil || len(keys) == 0 {
		return nil, err
	}
	return json.Marshal(keys)
}

// deleteOperations deletes the operations named by keys (a JSON array of
// [tenant, id] pairs) and every row whose foreign key names them, with
// their recorded payload conflicts, in tx.
func deleteOperations(ctx context.Context, tx *sql.Tx, keys []byte) (ledger.RetentionCounts, error) {
	var n ledger.RetentionCounts
	if err := unlockRetention(ctx, tx); err != nil {
		return n, err
	}
	for _, d := range []struct {
		table string
		n     *int
	}{
		{"operation_events", &n.Events}, {"callback_outbox", &n.Notifications}, {"escalation_outbox", &n.EscalationNotices},
		{"audit_findings", &n.Findings},
		{"resolutions", &n.Resolutions}, {"payload_conflicts", &n.Conflicts}, {"operation_ledger", &n.Operations},
	} {
		res, err := tx.ExecContext(ctx, `DELETE FROM `+d.table+` WHERE (tenant_id, operation_id) IN
			(SELECT value ->> 0, value ->> 1 FROM json_each(?))`, string(keys))
		if err != nil {
			return n, fmt.Errorf("%s: %w", d.table, err)
		}
		c, err := res.RowsAffected()
		if err != nil {
			return n, err
		}
		*d.n = int(c)
	}
	return n, relockRetention(ctx, tx)
}

// PurgeReviewed implements ledger.RetentionStore.
func (s *Store) PurgeReviewed(ctx context.Context, before time.Time, limit int) (ledger.RetentionCounts, error) {
	if limit <= 0 {
		return ledger.RetentionCounts{}, ledger.Errorf(ledger.EInvalid, "limit must be positive")
	}
	var n ledger.RetentionCounts
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		n.Quarantine, err = execCount(ctx, tx, `DELETE FROM quarantine WHERE quarantine_id IN (SELECT quarantine_id
			FROM quarantine WHERE resolved_at IS NOT NULL AND resolved_at < ?1 ORDER BY resolved_at LIMIT ?2)`,
			micros(before), limit)
		if err != nil {
			return err
		}
		n.Deliveries, err = execCount(ctx, tx, `DELETE FROM webhook_inbox WHERE delivery_id IN (SELECT delivery_id
			FROM webhook_inbox w WHERE processed_at IS NOT NULL AND processed_at < ?1
			  AND NOT EXISTS (SELECT 1 FROM quarantine q WHERE q.delivery_id = w.delivery_id AND q.resolved_at IS NULL)
			ORDER BY processed_at LIMIT ?2)`, micros(before), limit)
		return err
	})
	if err != nil {
		return ledger.RetentionCounts{}, fmt.Errorf("purge reviewed: %w", err)
	}
	return n, nil
}

func execCount(ctx context.Context, tx *sql.Tx, query string, args ...any) (int, error) {
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// EraseTenant implements ledger.TenantEraser: the gate and the tenant's
// access first, then its operations a batch at a time, then the rest and
// the record.
func (s *Store) EraseTenant(ctx context.Context, tenant string, force bool) (ledger.Erasure, error) {
	actor, err := ledger.ValidateErasure(ctx, tenant)
	if err != nil {
		return ledger.Erasure{}, err
	}
	e := ledger.Erasure{Tenant: tenant, Subject: actor.Subject, Name: actor.Name, Role: actor.Role, Forced: force}
	var gate ledger.RetentionCounts
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		gate = ledger.RetentionCounts{}
		var err error
		if e.Unfinished, err = (paramsTx{tx}).UnfinishedOperations(ctx, tenant, ledger.ErasureCountLimit); err != nil {
			return err
		}
		if err := ledger.CheckErasure(tenant, e.Unfinished, force); err != nil {
			return err
		}
		for _, d := range []struct {
			table string
			n     *int
		}{{"api_tokens", &gate.Tokens}, {"tenant_callbacks", &gate.Callbacks}, {"tenant_params", &gate.Params}} {
			if *d.n, err = execCount(ctx, tx, `DELETE FROM `+d.table+` WHERE tenant_id = ?`, tenant); err != nil {
				return fmt.Errorf("%s: %w", d.table, err)
			}
		}
		// An erased tenant is no longer known: a token for it needs it
		// created again, on purpose.
		if _, err := tx.ExecContext(ctx, `DELETE FROM tenants WHERE tenant_id = ?`, tenant); err != nil {
			return fmt.Errorf("tenants: %w", err)
		}
		return nil
	})
	if err != nil {
		return ledger.Erasure{}, fmt.Errorf("erase tenant: %w", err)
	}
	e.Counts.Add(gate)
	for {
		var batch ledger.RetentionCounts
		err := s.inTx(ctx, func(tx *sql.Tx) error {
			batch = ledger.RetentionCounts{}
			keys, err := collectKeys(ctx, tx, `SELECT tenant_id, operation_id FROM operation_ledger
				WHERE tenant_id = ? LIMIT ?`, tenant, ledger.ErasureBatch)
			if err != nil || keys == nil {
				return err
			}
			batch, err = deleteOperations(ctx, tx, keys)
			return err
		})
		if err != nil {
			return ledger.Erasure{}, fmt.Errorf("erase tenant: %w", err)
		}
		e.Counts.Add(batch)
		if batch.Operations < ledger.ErasureBatch {
			break
		}
	}
	var rest ledger.RetentionCounts
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		rest = ledger.RetentionCounts{}
		if err := unlockRetention(ctx, tx); err != nil {
			return err
		}
		var rollups [3]int
		for _, d := range []struct {
			sql string
			n   *int
		}{
			// Deliveries first: the quarantine items name them.
			{`DELETE FROM webhook_inbox WHERE delivery_id IN (SELECT q.delivery_id FROM quarantine q
				WHERE (q.scope_tenant = ?1 OR q.operation_tenant = ?1) AND q.delivery_id IS NOT NULL)
				AND NOT EXISTS (SELECT 1 FROM quarantine o WHERE o.delivery_id = webhook_inbox.delivery_id
					AND o.scope_tenant <> ?1 AND o.operation_tenant <> ?1)`, &rest.Deliveries},
			{`DELETE FROM quarantine WHERE scope_tenant = ?1 OR operation_tenant = ?1`, &rest.Quarantine},
			// Rows of operations a forced erasure met half-written, and
			// conflicts whose operation went earlier.
			{`DELETE FROM callback_outbox WHERE tenant_id = ?1`, &rest.Notifications},
			{`DELETE FROM escalation_outbox WHERE tenant_id = ?1`, &rest.EscalationNotices},
			{`DELETE FROM audit_findings WHERE tenant_id = ?1`, &rest.Findings},
			{`DELETE FROM resolutions WHERE tenant_id = ?1`, &rest.Resolutions},
			{`DELETE FROM payload_conflicts WHERE tenant_id = ?1`, &rest.Conflicts},
			{`DELETE FROM actions WHERE tenant_id = ?1`, &rest.Actions},
			{`DELETE FROM figure_days WHERE tenant_id = ?1`, &rollups[0]},
			{`DELETE FROM figure_episodes WHERE tenant_id = ?1`, &rollups[1]},
			{`DELETE FROM figure_escalations WHERE tenant_id = ?1`, &rollups[2]},
			// Transitions waiting to be counted by a server (migration
			// 00029): counts in transit, not a record, so not counted.
			{`DELETE FROM observations WHERE tenant_id = ?1`, new(int)},
		} {
			var err error
			if *d.n, err = execCount(ctx, tx, d.sql, tenant); err != nil {
				return err
			}
		}
		rest.Rollups = rollups[0] + rollups[1] + rollups[2]
		if err := relockRetention(ctx, tx); err != nil {
			return err
		}
		total := e.Counts
		total.Add(rest)
		e.At = s.clock()
		return tx.QueryRowContext(ctx, `INSERT INTO tenant_erasures (tenant_id, at, subject, actor_name, role, forced, unfinished, counts)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING erasure_id`,
			tenant, micros(e.At), e.Subject, e.Name, e.Role, e.Forced, e.Unfinished, string(ledger.MarshalCounts(total))).Scan(&e.ID)
	})
	if err != nil {
		return ledger.Erasure{}, fmt.Errorf("erase tenant: %w", err)
	}
	e.Counts.Add(rest)
	return e, nil
}

// Erasures implements ledger.TenantEraser.
func (s *Store) Erasures(ctx context.Context, tenant string) ([]ledger.Erasure, error) {
	if !ledger.ValidTenant(tenant) {
		return nil, ledger.Errorf(ledger.EInvalid, "tenant must be 1-63 characters of a-z, 0-9, '.', '_' or '-'")
	}
	rows, err := s.r.QueryContext(ctx, `SELECT erasure_id, tenant_id, at, subject, actor_name, role, forced, unfinished, counts
		FROM tenant_erasures WHERE tenant_id = ? ORDER BY erasure_id DESC`, tenant)
	if err != nil {
		return nil, fmt.Errorf("erasures: %w", err)
	}
	defer rows.Close()
	out := []ledger.Erasure{}
	for rows.Next() {
		var (
			e      ledger.Erasure
			at     int64
			counts string
		)
		if err := rows.Scan(&e.ID, &e.Tenant, &at, &e.Subject, &e.Name, &e.Role, &e.Forced, &e.Unfinished, &counts); err != nil {
			return nil, fmt.Errorf("erasures: %w", err)
		}
		e.At = fromMicros(at)
		if e.Counts, err = ledger.UnmarshalCounts([]byte(counts)); err != nil {
			return nil, fmt.Errorf("erasures: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("erasures: %w", err)
	}
	return out, nil
}
