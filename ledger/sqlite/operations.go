package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"settle/ledger"
)

const cols = `tenant_id, operation_id, operation_type, intent_ref, target, payload, payload_hash,
	remote_key, state, fence_token, attempt_count, lease_expires_at, remote_ref, retry_window_end,
	deadline, next_reconcile_at, reason, created_at, updated_at, last_sent_at, first_claimed_at,
	retry_window_micros`

type scanner interface{ Scan(dest ...any) error }

func scanOperation(row scanner) (ledger.Operation, error) {
	var (
		op                                          ledger.Operation
		state                                       string
		lease, deadline, next, lastSent, firstClaim sql.NullInt64
		remoteRef                                   sql.NullString
		windowEnd, created, updated, window         int64
	)
	err := row.Scan(&op.Tenant, &op.ID, &op.Type, &op.IntentRef, &op.Target, &op.Payload,
		&op.PayloadHash, &op.RemoteKey, &state, &op.Fence, &op.Attempts, &lease, &remoteRef,
		&windowEnd, &deadline, &next, &op.Reason, &created, &updated, &lastSent, &firstClaim, &window)
	if err != nil {
		return op, err
	}
	op.State, op.RemoteRef = ledger.State(state), remoteRef.String
	op.LeaseExpiresAt, op.Deadline, op.NextReconcileAt = fromNull(lease), fromNull(deadline), fromNull(next)
	op.LastSentAt, op.FirstClaimedAt = fromNull(lastSent), fromNull(firstClaim)
	op.RetryWindowEnd, op.CreatedAt, op.UpdatedAt = fromMicros(windowEnd), fromMicros(created), fromMicros(updated)
	op.RetryWindow = time.Duration(window) * time.Microsecond
	return op, nil
}

func collect(rows *sql.Rows, err error) ([]ledger.Operation, error) {
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

// event is one row to append to the event log.
type event struct {
	op       ledger.Operation // after the change
	from     ledger.State
	actor    string
	reason   string
	evidence []byte
}

// appendEvents writes events with multi-row INSERTs of up to 500 rows,
// which keeps each statement under SQLite's limit on bound parameters, and
// adds them to c, the transaction's observed commit (nil: not observed).
func appendEvents(ctx context.Context, tx *sql.Tx, c *ledger.Commit, evs []event) error {
	for _, e := range evs {
		c.Add(e.op, e.from)
	}
	return insertEvents(ctx, tx, evs)
}

func insertEvents(ctx context.Context, tx *sql.Tx, evs []event) error {
	for len(evs) > 500 {
		if err := insertEvents(ctx, tx, evs[:500]); err != nil {
			return err
		}
		evs = evs[500:]
	}
	if len(evs) == 0 {
		return nil
	}
	var (
		b    strings.Builder
		args []any
	)
	b.WriteString(`INSERT INTO operation_events (tenant_id, operation_id, from_state, to_state,
		fence_token, actor, reason, evidence, at) VALUES `)
	for i, e := range evs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?)")
		var from any
		if e.from != "" {
			from = string(e.from)
		}
		evidence := string(e.evidence)
		if evidence == "" {
			evidence = "{}"
		}
		args = append(args, e.op.Tenant, e.op.ID, from, string(e.op.State), e.op.Fence, e.actor,
			e.reason, evidence, micros(e.op.UpdatedAt))
	}
	_, err := tx.ExecContext(ctx, b.String(), args...)
	return err
}

// Create implements ledger.Store with ledger.CreateIn, in one IMMEDIATE
// transaction.
func (s *Store) Create(ctx context.Context, n ledger.NewOperation) (ledger.Operation, bool, error) {
	op, err := ledger.Prepare(n, s.clock())
	if err != nil {
		return ledger.Operation{}, false, err
	}
	var c ledger.Creation
	err = s.inObservedTx(ctx, func(tx *sql.Tx, observed *ledger.Commit) error {
		var err error
		c, err = ledger.CreateIn(ctx, createTx{tx, observed}, n, op)
		return err
	})
	if err != nil {
		return ledger.Operation{}, false, fmt.Errorf("create: %w", err)
	}
	return c.Result()
}

// createTx is ledger.CreateTx over one transaction; what it writes is
// added to c.
type createTx struct {
	tx *sql.Tx
	c  *ledger.Commit
}

func (t createTx) InsertIfNew(ctx context.Context, op ledger.Operation) (ledger.Operation, bool, error) {
	got, err := scanOperation(t.tx.QueryRowContext(ctx, `INSERT INTO operation_ledger (tenant_id,
		operation_id, operation_type, intent_ref, target, payload, payload_hash, remote_key, state,
		retry_window_end, retry_window_micros, deadline, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'PREPARED', ?, ?, ?, ?, ?)
		ON CONFLICT (tenant_id, operation_type, intent_ref) DO NOTHING
		RETURNING `+cols, op.Tenant, op.ID, op.Type, op.IntentRef, op.Target, op.Payload,
		op.PayloadHash, op.RemoteKey, micros(op.RetryWindowEnd), op.RetryWindow.Microseconds(),
		microsPtr(op.Deadline), micros(op.CreatedAt), micros(op.UpdatedAt)))
	if errors.Is(err, sql.ErrNoRows) {
		return ledger.Operation{}, false, nil
	}
	if err != nil {
		return ledger.Operation{}, false, err
	}
	return got, true, appendEvents(ctx, t.tx, t.c, []event{{op: got, actor: "client", reason: "created",
		evidence: ledger.CreationEvidence(ctx)}})
}

func (t createTx) ByIntent(ctx context.Context, tenant, opType, intentRef string) (ledger.Operation, error) {
	return getByIntent(ctx, t.tx, tenant, opType, intentRef)
}

func (t createTx) RecordConflict(ctx context.Context, existing ledger.Operation, rejected []byte, at time.Time) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO payload_conflicts (tenant_id, operation_id,
		operation_type, intent_ref, stored_hash, rejected_hash, at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		existing.Tenant, existing.ID, existing.Type, existing.IntentRef, existing.PayloadHash,
		rejected, micros(at))
	if err == nil {
		t.c.Refuse(existing.Tenant)
	}
	return err
}

// Get implements ledger.Store.
func (s *Store) Get(ctx context.Context, tenant, id string) (ledger.Operation, error) {
	return get(ctx, s.r, tenant, id)
}

func get(ctx context.Context, q querier, tenant, id string) (ledger.Operation, error) {
	id, ok := ledger.ParseID(id)
	if !ok {
		return ledger.Operation{}, ledger.Errorf(ledger.ENotFound, "operation not found")
	}
	op, err := scanOperation(q.QueryRowContext(ctx, `SELECT `+cols+` FROM operation_ledger
		WHERE tenant_id = ? AND operation_id = ?`, tenant, id))
	if errors.Is(err, sql.ErrNoRows) {
		return op, ledger.Errorf(ledger.ENotFound, "operation not found")
	}
	if err != nil {
		return op, fmt.Errorf("get: %w", err)
	}
	return op, nil
}

// GetByIntent implements ledger.Store.
func (s *Store) GetByIntent(ctx context.Context, tenant, opType, intentRef string) (ledger.Operation, error) {
	return getByIntent(ctx, s.r, tenant, opType, intentRef)
}

func getByIntent(ctx context.Context, q querier, tenant, opType, intentRef string) (ledger.Operation, error) {
	op, err := scanOperation(q.QueryRowContext(ctx, `SELECT `+cols+` FROM operation_ledger
		WHERE tenant_id = ? AND operation_type = ? AND intent_ref = ?`, tenant, opType, intentRef))
	if errors.Is(err, sql.ErrNoRows) {
		return op, ledger.Errorf(ledger.ENotFound, "operation not found")
	}
	if err != nil {
		return op, fmt.Errorf("get by intent: %w", err)
	}
	return op, nil
}

// Find implements ledger.Store.
func (s *Store) Find(ctx context.Context, tenant, ref string) ([]ledger.Operation, error) {
	if err := ledger.CheckFilterText("reference", ref); err != nil {
		return nil, err
	}
	id, _ := ledger.ParseID(ref) // "" matches no id
	// The indexes are named as in Search (browse.go): unnamed, SQLite reads
	// the tenant's every row through the primary key.
	ops, err := collect(s.r.QueryContext(ctx, `
		SELECT `+cols+` FROM operation_ledger INDEXED BY operation_ledger_intent WHERE tenant_id = ?1 AND intent_ref = ?2
		UNION SELECT `+cols+` FROM operation_ledger INDEXED BY operation_ledger_remote_ref WHERE tenant_id = ?1 AND remote_ref = ?2
		UNION SELECT `+cols+` FROM operation_ledger WHERE tenant_id = ?1 AND operation_id = ?3
		UNION SELECT `+cols+` FROM operation_ledger WHERE remote_key = ?3 AND tenant_id = ?1
		ORDER BY created_at DESC LIMIT 50`, tenant, ref, id))
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
	rows, err := s.r.QueryContext(ctx, `SELECT event_id, tenant_id, operation_id,
		coalesce(from_state, ''), to_state, fence_token, actor, reason, evidence, at
		FROM operation_events WHERE tenant_id = ? AND operation_id = ? ORDER BY event_id`, tenant, id)
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	defer rows.Close()
	var evs []ledger.Event
	for rows.Next() {
		var (
			e                  ledger.Event
			from, to, evidence string
			at                 int64
		)
		if err := rows.Scan(&e.ID, &e.Tenant, &e.OperationID, &from, &to, &e.Fence, &e.Actor,
			&e.Reason, &evidence, &at); err != nil {
			return nil, fmt.Errorf("events: %w", err)
		}
		e.From, e.To, e.Evidence, e.At = ledger.State(from), ledger.State(to), []byte(evidence), fromMicros(at)
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
	err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM payload_conflicts
		WHERE tenant_id = ? AND at >= ? AND at < ?`, tenant, micros(w.Since), micros(w.Until)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("payload conflicts: %w", err)
	}
	return n, nil
}

func sortByCreated(ops []ledger.Operation) {
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].CreatedAt.Before(ops[j].CreatedAt) })
}
