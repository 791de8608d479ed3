package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"settle/ledger"
	"settle/ledger/postgres/internal/dbsqlc"
)

// CreateTx creates the operation inside the caller's transaction (the
// transactional outbox): it becomes visible, and claimable, only when tx
// commits, and vanishes if tx rolls back. A payload conflict is recorded in
// tx too. The store's observer is not told: the caller owns the commit.
func (s *Store) CreateTx(ctx context.Context, tx pgx.Tx, n ledger.NewOperation) (ledger.Operation, bool, error) {
	return s.Within(txDriver(tx)).Create(ctx, n)
}

// OperationInsertIfNew implements ledger.CreateDriver in one statement, the
// operation with its event.
func (d driver) OperationInsertIfNew(ctx context.Context, op ledger.Operation, evidence []byte) (ledger.Operation, bool, error) {
	r, err := d.q.OperationInsertIfNew(ctx, dbsqlc.OperationInsertIfNewParams{TenantID: op.Tenant, OperationID: op.ID,
		OperationType: op.Type, IntentRef: op.IntentRef, Target: op.Target, Payload: op.Payload,
		PayloadHash: op.PayloadHash, RemoteKey: op.RemoteKey, RetryWindowEnd: op.RetryWindowEnd,
		RetryWindowMicros: op.RetryWindow.Microseconds(), Deadline: op.Deadline, CreatedAt: op.CreatedAt,
		Evidence: evidence})
	return one(dbsqlc.OperationGetRow(r), err)
}

// OperationInsertBatch implements ledger.CreateDriver in one statement
// over the rows as a JSON array: the operations and their events commit,
// or fail, together.
func (d driver) OperationInsertBatch(ctx context.Context, rows []ledger.CreationRow) ([]ledger.Operation, error) {
	js := make([]creationJSON, len(rows))
	for i, r := range rows {
		js[i] = creationJSON{TenantID: r.Tenant, OperationID: r.ID, OperationType: r.Type, IntentRef: r.IntentRef,
			Target: r.Target, Payload: r.Payload, PayloadHash: r.PayloadHash, RemoteKey: r.RemoteKey,
			RetryWindowEnd: r.RetryWindowEnd, RetryWindowMicros: r.RetryWindow.Microseconds(), Deadline: r.Deadline,
			CreatedAt: r.CreatedAt, Evidence: r.Evidence}
	}
	b, err := json.Marshal(js)
	if err != nil {
		return nil, err
	}
	got, err := d.q.OperationInsertBatch(ctx, b)
	if err != nil {
		return nil, err
	}
	out := make([]ledger.Operation, len(got))
	for i, r := range got {
		out[i] = operationOf(dbsqlc.OperationGetRow(r))
	}
	return out, nil
}

// creationJSON is one row of OperationInsertBatch's array; bytes are
// base64, as the statement decodes them.
type creationJSON struct {
	TenantID          string          `json:"tenant_id"`
	OperationID       string          `json:"operation_id"`
	OperationType     string          `json:"operation_type"`
	IntentRef         string          `json:"intent_ref"`
	Target            string          `json:"target"`
	Payload           []byte          `json:"payload"`
	PayloadHash       []byte          `json:"payload_hash"`
	RemoteKey         string          `json:"remote_key"`
	RetryWindowEnd    time.Time       `json:"retry_window_end"`
	RetryWindowMicros int64           `json:"retry_window_micros"`
	Deadline          *time.Time      `json:"deadline"`
	CreatedAt         time.Time       `json:"created_at"`
	Evidence          json.RawMessage `json:"evidence"`
}

// PayloadConflictInsert implements ledger.CreateDriver.
func (d driver) PayloadConflictInsert(ctx context.Context, existing ledger.Operation, rejected []byte, at time.Time) error {
	return d.q.PayloadConflictInsert(ctx, dbsqlc.PayloadConflictInsertParams{TenantID: existing.Tenant,
		OperationID: existing.ID, OperationType: existing.Type, IntentRef: existing.IntentRef,
		StoredHash: existing.PayloadHash, RejectedHash: rejected, At: at})
}

// operationOf is the row of an operation query as a ledger.Operation.
func operationOf(r dbsqlc.OperationGetRow) ledger.Operation {
	op := ledger.Operation{Tenant: r.TenantID, ID: r.OperationID, Type: r.OperationType, IntentRef: r.IntentRef,
		Target: r.Target, Payload: r.Payload, PayloadHash: r.PayloadHash, RemoteKey: r.RemoteKey,
		State: ledger.State(r.State), Fence: r.FenceToken, Attempts: int(r.AttemptCount),
		LeaseExpiresAt: r.LeaseExpiresAt, RemoteRef: r.RemoteRef.String, RetryWindowEnd: r.RetryWindowEnd.UTC(),
		Deadline: r.Deadline, NextReconcileAt: r.NextReconcileAt, Reason: r.Reason, CreatedAt: r.CreatedAt.UTC(),
		UpdatedAt: r.UpdatedAt.UTC(), LastSentAt: r.LastSentAt, FirstClaimedAt: r.FirstClaimedAt,
		RetryWindow: time.Duration(r.RetryWindowMicros) * time.Microsecond}
	for _, t := range []*time.Time{op.LeaseExpiresAt, op.Deadline, op.NextReconcileAt, op.LastSentAt, op.FirstClaimedAt} {
		utcp(t)
	}
	return op
}

// one is a single-row read as (operation, found, error).
func one(r dbsqlc.OperationGetRow, err error) (ledger.Operation, bool, error) {
	if errors.Is(err, pgx.ErrNoRows) {
		return ledger.Operation{}, false, nil
	}
	if err != nil {
		return ledger.Operation{}, false, err
	}
	return operationOf(r), true, nil
}

// OperationGet implements ledger.OperationDriver.
func (d driver) OperationGet(ctx context.Context, tenant, id string) (ledger.Operation, bool, error) {
	return one(d.q.OperationGet(ctx, dbsqlc.OperationGetParams{TenantID: tenant, OperationID: id}))
}

// OperationSummary implements ledger.OperationDriver.
func (d driver) OperationSummary(ctx context.Context, tenant, id string) (ledger.Operation, bool, error) {
	r, err := d.q.OperationSummary(ctx, dbsqlc.OperationSummaryParams{TenantID: tenant, OperationID: id})
	return one(dbsqlc.OperationGetRow(r), err)
}

// OperationByIntent implements ledger.OperationDriver.
func (d driver) OperationByIntent(ctx context.Context, tenant, opType, intentRef string) (ledger.Operation, bool, error) {
	r, err := d.q.OperationByIntent(ctx, dbsqlc.OperationByIntentParams{TenantID: tenant, OperationType: opType,
		IntentRef: intentRef})
	return one(dbsqlc.OperationGetRow(r), err)
}

// OperationFind implements ledger.OperationDriver.
func (d driver) OperationFind(ctx context.Context, tenant, ref, id string) ([]ledger.Operation, error) {
	rows, err := d.q.OperationFind(ctx, dbsqlc.OperationFindParams{TenantID: tenant, Ref: ref,
		ID: pgtype.Text{String: id, Valid: id != ""}})
	out := make([]ledger.Operation, len(rows))
	for i, r := range rows {
		out[i] = operationOf(dbsqlc.OperationGetRow(r))
	}
	return out, err
}

// EventList implements ledger.OperationDriver.
func (d driver) EventList(ctx context.Context, tenant, id string) ([]ledger.Event, error) {
	rows, err := d.q.EventList(ctx, dbsqlc.EventListParams{TenantID: tenant, OperationID: id})
	out := make([]ledger.Event, len(rows))
	for i, r := range rows {
		out[i] = ledger.Event{ID: r.EventID, Tenant: r.TenantID, OperationID: r.OperationID,
			From: ledger.State(r.FromState), To: ledger.State(r.ToState), Fence: r.FenceToken, Actor: r.Actor,
			Reason: r.Reason, Evidence: []byte(r.Evidence), At: r.At.UTC()}
	}
	return out, err
}

// PayloadConflictCount implements ledger.OperationDriver.
func (d driver) PayloadConflictCount(ctx context.Context, tenant string, w ledger.Window) (int, error) {
	n, err := d.q.PayloadConflictCount(ctx, dbsqlc.PayloadConflictCountParams{TenantID: tenant, Since: w.Since,
		Until: w.Until})
	return int(n), err
}

// utcp makes a read time UTC, when there is one.
func utcp(t *time.Time) {
	if t != nil {
		*t = t.UTC()
	}
}
