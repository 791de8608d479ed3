package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"settle/ledger"
)

var (
	_ ledger.RetentionStore = (*Store)(nil)
	_ ledger.TenantEraser   = (*Store)(nil)
)

// unlockRetention lets this transaction, and only it, delete rows of the
// append-only event log and actions record (migration 00023).
func unlockRetention(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, `SELECT set_config('settle.retention', 'on', true)`)
	return err
}

// cutoff is a RetentionCutoffs instant as a parameter: NULL when the rule
// is off, which matches nothing.
func cutoff(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// deletable selects the final operations settled before $1 that no audit
// finding still waits on a person for. The state list is a literal, so
// the planner uses operation_ledger_final_updated.
const deletable = `SELECT o.tenant_id, o.operation_id FROM operation_ledger o
	WHERE o.state IN ('SUCCEEDED', 'FAILED_TERMINAL') AND o.updated_at < $1
	  AND NOT EXISTS (SELECT 1 FROM audit_findings f
		WHERE f.tenant_id = o.tenant_id AND f.operation_id = o.operation_id
		  AND f.acknowledged_at IS NULL AND f.resolved_at IS NULL)`

// CountRetention implements ledger.RetentionStore.
func (s *Store) CountRetention(ctx context.Context, c ledger.RetentionCutoffs) (ledger.RetentionCounts, error) {
	var n ledger.RetentionCounts
	err := s.pool.QueryRow(ctx, `WITH d AS (`+deletable+`)
		SELECT (SELECT count(*) FROM d),
			(SELECT count(*) FROM operation_events e JOIN d USING (tenant_id, operation_id)),
			(SELECT count(*) FROM callback_outbox x JOIN d USING (tenant_id, operation_id)),
			(SELECT count(*) FROM audit_findings x JOIN d USING (tenant_id, operation_id)),
			(SELECT count(*) FROM resolutions x JOIN d USING (tenant_id, operation_id)),
			(SELECT count(*) FROM payload_conflicts x JOIN d USING (tenant_id, operation_id)),
			(SELECT count(*) FROM operation_ledger o
				WHERE o.state IN ('SUCCEEDED', 'FAILED_TERMINAL') AND octet_length(o.payload) > 0 AND o.updated_at < $2
				  AND NOT EXISTS (SELECT 1 FROM d WHERE d.tenant_id = o.tenant_id AND d.operation_id = o.operation_id)),
			(SELECT count(*) FROM quarantine WHERE resolved_at IS NOT NULL AND resolved_at < $3),
			(SELECT count(*) FROM webhook_inbox w WHERE processed_at IS NOT NULL AND processed_at < $3
				AND NOT EXISTS (SELECT 1 FROM quarantine q WHERE q.delivery_id = w.delivery_id AND q.resolved_at IS NULL))`,
		cutoff(c.Delete), cutoff(c.Redact), cutoff(c.Purge)).Scan(
		&n.Operations, &n.Events, &n.Notifications, &n.Findings, &n.Resolutions, &n.Conflicts,
		&n.PayloadsRedacted, &n.Quarantine, &n.Deliveries)
	if err != nil {
		return ledger.RetentionCounts{}, fmt.Errorf("count retention: %w", err)
	}
	return n, nil
}

// RedactPayloads implements ledger.RetentionStore. SKIP LOCKED leaves rows
// another replica's pass holds to that pass.
func (s *Store) RedactPayloads(ctx context.Context, before time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, ledger.Errorf(ledger.EInvalid, "limit must be positive")
	}
	tag, err := s.pool.Exec(ctx, `UPDATE operation_ledger o SET payload = ''::bytea
		FROM (SELECT tenant_id, operation_id FROM operation_ledger
			WHERE state IN ('SUCCEEDED', 'FAILED_TERMINAL') AND octet_length(payload) > 0 AND updated_at < $1
			ORDER BY updated_at LIMIT $2 FOR UPDATE SKIP LOCKED) r
		WHERE o.tenant_id = r.tenant_id AND o.operation_id = r.operation_id`, before, limit)
	if err != nil {
		return 0, fmt.Errorf("redact payloads: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// DeleteOperations implements ledger.RetentionStore.
func (s *Store) DeleteOperations(ctx context.Context, before time.Time, limit int) (ledger.RetentionCounts, error) {
	if limit <= 0 {
		return ledger.RetentionCounts{}, ledger.Errorf(ledger.EInvalid, "limit must be positive")
	}
	var n ledger.RetentionCounts
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		n = ledger.RetentionCounts{}
		rows, err := tx.Query(ctx, deletable+` ORDER BY o.updated_at LIMIT $2 FOR UPDATE OF o SKIP LOCKED`, before, limit)
		if err != nil {
			return err
		}
		tenants, ids, err := collectKeys(rows)
		if err != nil || len(ids) == 0 {
			return err
		}
		n, err = deleteOperations(ctx, tx, tenants, ids)
		return err
	})
	if err != nil {
		return ledger.RetentionCounts{}, fmt.Errorf("delete operations: %w", err)
	}
	return n, nil
}

// collectKeys reads (tenant, operation id) rows into two parallel slices.
func collectKeys(rows pgx.Rows) (tenants, ids []string, err error) {
	var tenant, id string
	_, err = pgx.ForEachRow(rows, []any{&tenant, &id}, func() error {
		tenants, ids = append(tenants, tenant), append(ids, id)
		return nil
	})
	return tenants, ids, err
}

// deleteOperations deletes the named operations and every row whose
// foreign key names them (events, notifications, findings, resolutions),
// with their recorded payload conflicts, in tx. One statement per table and
// operation, sent as one batch: each finds its rows by its index, where a
// set-at-once DELETE is planned as a scan of the whole child table while
// that table is small enough for the planner to prefer one.
func deleteOperations(ctx context.Context, tx pgx.Tx, tenants, ids []string) (ledger.RetentionCounts, error) {
	var n ledger.RetentionCounts
	if err := unlockRetention(ctx, tx); err != nil {
		return n, err
	}
	tables := []struct {
		table string
		n     *int
	}{
		{"operation_events", &n.Events}, {"callback_outbox", &n.Notifications}, {"escalation_outbox", &n.EscalationNotices},
		{"audit_findings", &n.Findings},
		{"resolutions", &n.Resolutions}, {"payload_conflicts", &n.Conflicts}, {"operation_ledger", &n.Operations},
	}
	b := &pgx.Batch{}
	for _, d := range tables {
		for i := range ids {
			b.Queue(`DELETE FROM `+d.table+` WHERE tenant_id = $1 AND operation_id = $2`, tenants[i], ids[i])
		}
	}
	br := tx.SendBatch(ctx, b)
	for _, d := range tables {
		for range ids {
			tag, err := br.Exec()
			if err != nil {
				_ = br.Close()
				return n, fmt.Errorf("%s: %w", d.table, err)
			}
			*d.n += int(tag.RowsAffected())
		}
	}
	return n, br.Close()
}

// PurgeReviewed implements ledger.RetentionStore.
func (s *Store) PurgeReviewed(ctx context.Context, before time.Time, limit int) (ledger.RetentionCounts, error) {
	if limit <= 0 {
		return ledger.RetentionCounts{}, ledger.Errorf(ledger.EInvalid, "limit must be positive")
	}
	var n ledger.RetentionCounts
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM quarantine WHERE quarantine_id IN (SELECT quarantine_id FROM quarantine
			WHERE resolved_at IS NOT NULL AND resolved_at < $1 ORDER BY resolved_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
			before, limit)
		if err != nil {
			return err
		}
		n.Quarantine = int(tag.RowsAffected())
		tag, err = tx.Exec(ctx, `DELETE FROM webhook_inbox WHERE delivery_id IN (SELECT delivery_id FROM webhook_inbox w
			WHERE processed_at IS NOT NULL AND processed_at < $1
			  AND NOT EXISTS (SELECT 1 FROM quarantine q WHERE q.delivery_id = w.delivery_id AND q.resolved_at IS NULL)
			ORDER BY processed_at LIMIT $2 FOR UPDATE SKIP LOCKED)`, before, limit)
		if err != nil {
			return err
		}
		n.Deliveries = int(tag.RowsAffected())
		return nil
	})
	if err != nil {
		return ledger.RetentionCounts{}, fmt.Errorf("purge reviewed: %w", err)
	}
	return n, nil
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
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		gate = ledger.RetentionCounts{}
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM operation_ledger
			WHERE tenant_id = $1 AND state = ANY($2::text[]) LIMIT $3) o`,
			tenant, unfinishedStates(), ledger.ErasureCountLimit).Scan(&e.Unfinished); err != nil {
			return err
		}
		if err := ledger.CheckErasure(tenant, e.Unfinished, force); err != nil {
			return err
		}
		for _, d := range []struct {
			table string
			n     *int
		}{{"api_tokens", &gate.Tokens}, {"tenant_callbacks", &gate.Callbacks}, {"tenant_params", &gate.Params}} {
			tag, err := tx.Exec(ctx, `DELETE FROM `+d.table+` WHERE tenant_id = $1`, tenant)
			if err != nil {
				return fmt.Errorf("%s: %w", d.table, err)
			}
			*d.n = int(tag.RowsAffected())
		}
		// An erased tenant is no longer known: a token for it needs it
		// created again, on purpose.
		if _, err := tx.Exec(ctx, `DELETE FROM tenants WHERE tenant_id = $1`, tenant); err != nil {
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
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, `SELECT tenant_id, operation_id FROM operation_ledger WHERE tenant_id = $1
				LIMIT $2 FOR UPDATE`, tenant, ledger.ErasureBatch)
			if err != nil {
				return err
			}
			tenants, ids, err := collectKeys(rows)
			if err != nil || len(ids) == 0 {
				batch = ledger.RetentionCounts{}
				return err
			}
			batch, err = deleteOperations(ctx, tx, tenants, ids)
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
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rest = ledger.RetentionCounts{}
		if err := unlockRetention(ctx, tx); err != nil {
			return err
		}
		// Deliveries first: the quarantine items name them.
		for _, d := range []struct {
			sql string
			n   *int
		}{
			{`DELETE FROM webhook_inbox w WHERE w.delivery_id IN (SELECT q.delivery_id FROM quarantine q
				WHERE (q.scope_tenant = $1 OR q.operation_tenant = $1) AND q.delivery_id IS NOT NULL)
				AND NOT EXISTS (SELECT 1 FROM quarantine o WHERE o.delivery_id = w.delivery_id
					AND o.scope_tenant <> $1 AND o.operation_tenant <> $1)`, &rest.Deliveries},
			{`DELETE FROM quarantine WHERE scope_tenant = $1 OR operation_tenant = $1`, &rest.Quarantine},
			// Rows of operations a forced erasure met half-written, and
			// conflicts whose operation went earlier.
			{`DELETE FROM callback_outbox WHERE tenant_id = $1`, &rest.Notifications},
			{`DELETE FROM escalation_outbox WHERE tenant_id = $1`, &rest.EscalationNotices},
			{`DELETE FROM audit_findings WHERE tenant_id = $1`, &rest.Findings},
			{`DELETE FROM resolutions WHERE tenant_id = $1`, &rest.Resolutions},
			{`DELETE FROM payload_conflicts WHERE tenant_id = $1`, &rest.Conflicts},
			{`DELETE FROM actions WHERE tenant_id = $1`, &rest.Actions},
			// Transitions waiting to be counted by a server (migration
			// 00029): counts in transit, not a record, so not counted.
			{`DELETE FROM observations WHERE tenant_id = $1`, new(int)},
		} {
			tag, err := tx.Exec(ctx, d.sql, tenant)
			if err != nil {
				return err
			}
			*d.n = int(tag.RowsAffected())
		}
		if err := tx.QueryRow(ctx, `WITH a AS (DELETE FROM figure_days WHERE tenant_id = $1 RETURNING 1),
				b AS (DELETE FROM figure_episodes WHERE tenant_id = $1 RETURNING 1),
				c AS (DELETE FROM figure_escalations WHERE tenant_id = $1 RETURNING 1)
			SELECT (SELECT count(*) FROM a) + (SELECT count(*) FROM b) + (SELECT count(*) FROM c)`,
			tenant).Scan(&rest.Rollups); err != nil {
			return fmt.Errorf("rollups: %w", err)
		}
		total := e.Counts
		total.Add(rest)
		e.At = s.clock()
		return tx.QueryRow(ctx, `INSERT INTO tenant_erasures (tenant_id, at, subject, actor_name, role, forced, unfinished, counts)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING erasure_id`,
			tenant, e.At, e.Subject, e.Name, e.Role, e.Forced, e.Unfinished, ledger.MarshalCounts(total)).Scan(&e.ID)
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
	rows, err := s.pool.Query(ctx, `SELECT erasure_id, tenant_id, at, subject, actor_name, role, forced, unfinished, counts
		FROM tenant_erasures WHERE tenant_id = $1 ORDER BY erasure_id DESC`, tenant)
	if err != nil {
		return nil, fmt.Errorf("erasures: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Erasure, error) {
		var (
			e      ledger.Erasure
			counts []byte
		)
		if err := r.Scan(&e.ID, &e.Tenant, &e.At, &e.Subject, &e.Name, &e.Role, &e.Forced, &e.Unfinished, &counts); err != nil {
			return e, err
		}
		utc(&e.At)
		var err error
		e.Counts, err = ledger.UnmarshalCounts(counts)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("erasures: %w", err)
	}
	return out, nil
}
