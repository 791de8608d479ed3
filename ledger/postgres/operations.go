package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"settle/ledger"
)

// columns returns the operation columns in scan order, qualified by alias.
func columns(alias string) string {
	a := ""
	if alias != "" {
		a = alias + "."
	}
	return fmt.Sprintf(`%[1]stenant_id, %[1]soperation_id::text, %[1]soperation_type, %[1]sintent_ref,
	%[1]starget, %[1]spayload, %[1]spayload_hash, %[1]sremote_key::text, %[1]sstate, %[1]sfence_token,
	%[1]sattempt_count, %[1]slease_expires_at, %[1]sremote_ref, %[1]sretry_window_end, %[1]sdeadline,
	%[1]snext_reconcile_at, %[1]sreason, %[1]screated_at, %[1]supdated_at, %[1]slast_sent_at,
	%[1]sfirst_claimed_at, %[1]sretry_window_micros`, a)
}

var (
	cols  = columns("")
	oCols = columns("o")
)

func scanOperation(row pgx.Row) (ledger.Operation, error) {
	var (
		op        ledger.Operation
		state     string
		remoteRef *string
		window    int64
	)
	err := row.Scan(&op.Tenant, &op.ID, &op.Type, &op.IntentRef, &op.Target, &op.Payload,
		&op.PayloadHash, &op.RemoteKey, &state, &op.Fence, &op.Attempts, &op.LeaseExpiresAt,
		&remoteRef, &op.RetryWindowEnd, &op.Deadline, &op.NextReconcileAt, &op.Reason,
		&op.CreatedAt, &op.UpdatedAt, &op.LastSentAt, &op.FirstClaimedAt, &window)
	if err != nil {
		return op, err
	}
	op.State, op.RetryWindow = ledger.State(state), time.Duration(window)*time.Microsecond
	if remoteRef != nil {
		op.RemoteRef = *remoteRef
	}
	utc(&op.RetryWindowEnd)
	utc(&op.CreatedAt)
	utc(&op.UpdatedAt)
	utcp(op.LeaseExpiresAt)
	utcp(op.Deadline)
	utcp(op.NextReconcileAt)
	utcp(op.LastSentAt)
	utcp(op.FirstClaimedAt)
	return op, nil
}

func utc(t *time.Time) { *t = t.UTC() }

func utcp(t *time.Time) {
	if t != nil {
		*t = t.UTC()
	}
}

func collect(rows pgx.Rows, err error) ([]ledger.Operation, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ops []ledger.Operation
	for rows.Next() {
		op, err := scanOperation(rows)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	return ops, rows.Err()
}

// createSQL inserts the operation and its creation event in one statement.
// It returns no row when the intent already exists.
var createSQL = `
WITH ins AS (
	INSERT INTO operation_ledger (tenant_id, operation_id, operation_type, intent_ref, target,
		payload, payload_hash, remote_key, state, retry_window_end, retry_window_micros, deadline,
		created_at, updated_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'PREPARED', $9, $12, $10, $11, $11)
	ON CONFLICT (tenant_id, operation_type, intent_ref) DO NOTHING
	RETURNING *
), ev AS (
	INSERT INTO operation_events (tenant_id, operation_id, to_state, fence_token, actor, reason, evidence, at)
	SELECT tenant_id, operation_id, 'PREPARED', 0, 'client', 'created', $13::jsonb, created_at FROM ins
)
SELECT ` + cols + ` FROM ins`

// Create implements ledger.Store.
func (s *Store) Create(ctx context.Context, n ledger.NewOperation) (ledger.Operation, bool, error) {
	var c ledger.Commit
	op, created, err := s.create(ctx, createTx{s.pool, &c}, n)
	c.Tell(ctx, s.observer)
	return op, created, err
}

// CreateTx creates the operation inside the caller's transaction (the
// transactional outbox): it becomes visible, and claimable, only when tx
// commits, and vanishes if tx rolls back. A payload conflict is recorded in
// tx too. The store's observer is not told: the caller owns the commit.
func (s *Store) CreateTx(ctx context.Context, tx pgx.Tx, n ledger.NewOperation) (ledger.Operation, bool, error) {
	return s.create(ctx, createTx{tx, nil}, n)
}

func (s *Store) create(ctx context.Context, t createTx, n ledger.NewOperation) (ledger.Operation, bool, error) {
	op, err := ledger.Prepare(n, s.clock())
	if err != nil {
		return ledger.Operation{}, false, err
	}
	c, err := ledger.CreateIn(ctx, t, n, op)
	if err != nil {
		return ledger.Operation{}, false, fmt.Errorf("create: %w", err)
	}
	return c.Result()
}

// createTx is ledger.CreateTx over the pool or the caller's transaction.
// Without a transaction each statement commits on its own: the insert is
// one statement with its event, and a refusal's record stands alone.
// What it writes is added to c (nil: not observed).
type createTx struct {
	q querier
	c *ledger.Commit
}

func (t createTx) InsertIfNew(ctx context.Context, op ledger.Operation) (ledger.Operation, bool, error) {
	got, err := scanOperation(t.q.QueryRow(ctx, createSQL, op.Tenant, op.ID, op.Type, op.IntentRef,
		op.Target, op.Payload, op.PayloadHash, op.RemoteKey, op.RetryWindowEnd, op.Deadline, op.CreatedAt,
		op.RetryWindow.Microseconds(), string(ledger.CreationEvidence(ctx))))
	if errors.Is(err, pgx.ErrNoRows) {
		return ledger.Operation{}, false, nil
	}
	if err == nil {
		t.c.Add(got, "")
	}
	return got, err == nil, err
}

// ByIntent runs a new statement, which sees an intent committed by a
// concurrent creator after the insert's snapshot.
func (t createTx) ByIntent(ctx context.Context, tenant, opType, intentRef string) (ledger.Operation, error) {
	return getByIntent(ctx, t.q, tenant, opType, intentRef)
}

func (t createTx) RecordConflict(ctx context.Context, existing ledger.Operation, rejected []byte, at time.Time) error {
	_, err := t.q.Exec(ctx, `INSERT INTO payload_conflicts (tenant_id, operation_id, operation_type,
		intent_ref, stored_hash, rejected_hash, at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		existing.Tenant, existing.ID, existing.Type, existing.IntentRef, existing.PayloadHash, rejected, at)
	if err != nil {
		return fmt.Errorf("record conflict: %w", err)
	}
	t.c.Refuse(existing.Tenant)
	return nil
}

// Get implements ledger.Store.
func (s *Store) Get(ctx context.Context, tenant, id string) (ledger.Operation, error) {
	return get(ctx, s.pool, tenant, id)
}

func get(ctx context.Context, q querier, tenant, id string) (ledger.Operation, error) {
	id, ok := ledger.ParseID(id)
	if !ok {
		return ledger.Operation{}, ledger.Errorf(ledger.ENotFound, "operation not found")
	}
	op, err := scanOperation(q.QueryRow(ctx, `SELECT `+cols+` FROM operation_ledger
		WHERE tenant_id = $1 AND operation_id = $2`, tenant, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return op, ledger.Errorf(ledger.ENotFound, "operation not found")
	}
	if err != nil {
		return op, fmt.Errorf("get: %w", err)
	}
	return op, nil
}

// GetByIntent implements ledger.Store.
func (s *Store) GetByIntent(ctx context.Context, tenant, opType, intentRef string) (ledger.Operation, error) {
	return getByIntent(ctx, s.pool, tenant, opType, intentRef)
}

func getByIntent(ctx context.Context, q querier, tenant, opType, intentRef string) (ledger.Operation, error) {
	op, err := scanOperation(q.QueryRow(ctx, `SELECT `+cols+` FROM operation_ledger
		WHERE tenant_id = $1 AND operation_type = $2 AND intent_ref = $3`, tenant, opType, intentRef))
	if errors.Is(err, pgx.ErrNoRows) {
		return op, ledger.Errorf(ledger.ENotFound, "operation not found")
	}
	if err != nil {
		return op, fmt.Errorf("get by intent: %w", err)
	}
	return op, nil
}

// Find implements ledger.Store. Each branch is an index look-up.
func (s *Store) Find(ctx context.Context, tenant, ref string) ([]ledger.Operation, error) {
	if err := ledger.CheckFilterText("reference", ref); err != nil {
		return nil, err
	}
	var id *string
	if canonical, ok := ledger.ParseID(ref); ok {
		id = &canonical
	}
	ops, err := collect(s.pool.Query(ctx, `
		SELECT `+cols+` FROM operation_ledger WHERE tenant_id = $1 AND intent_ref = $2
		UNION SELECT `+cols+` FROM operation_ledger WHERE tenant_id = $1 AND remote_ref = $2
		UNION SELECT `+cols+` FROM operation_ledger WHERE tenant_id = $1 AND operation_id = $3::uuid
		UNION SELECT `+cols+` FROM operation_ledger WHERE remote_key = $3::uuid AND tenant_id = $1
		ORDER BY 18 DESC LIMIT 50`, tenant, ref, id))
	if err != nil {
		return nil, fmt.Errorf("find: %w", err)
	}
	return ops, nil
}

// Events implements ledger.Store.
func (s *Store) Events(ctx context.Context, tenant, id string) ([]ledger.Event, error) {
	id, ok := ledger.ParseID(id)
	if !ok {
		return nil, ledger.Errorf(ledger.ENotFound, "operation not found")
	}
	rows, err := s.pool.Query(ctx, `SELECT event_id, tenant_id, operation_id::text,
		coalesce(from_state, ''), to_state, fence_token, actor, reason, evidence::text, at
		FROM operation_events WHERE tenant_id = $1 AND operation_id = $2 ORDER BY event_id`, tenant, id)
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	defer rows.Close()
	var evs []ledger.Event
	for rows.Next() {
		var (
			e        ledger.Event
			from, to string
			evidence string
		)
		if err := rows.Scan(&e.ID, &e.Tenant, &e.OperationID, &from, &to, &e.Fence, &e.Actor,
			&e.Reason, &evidence, &e.At); err != nil {
			return nil, fmt.Errorf("events: %w", err)
		}
		e.From, e.To, e.Evidence, e.At = ledger.State(from), ledger.State(to), []byte(evidence), e.At.UTC()
		evs = append(evs, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	if len(evs) == 0 {
		return nil, ledger.Errorf(ledger.ENotFound, "operation not found")
	}
	return evs, nil
}

// PayloadConflicts implements ledger.Store.
func (s *Store) PayloadConflicts(ctx context.Context, tenant string, w ledger.Window) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM payload_conflicts
		WHERE tenant_id = $1 AND at >= $2 AND at < $3`, tenant, w.Since, w.Until).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("payload conflicts: %w", err)
	}
	return n, nil
}
