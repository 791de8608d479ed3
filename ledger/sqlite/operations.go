package sqlite

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sort"
	"time"

	"settle/ledger"
	"settle/ledger/sqlite/internal/dbsqlc"
)

// OperationInsertIfNew implements ledger.CreateDriver: the operation and
// its event in one transaction on the writer.
func (d driver) OperationInsertIfNew(ctx context.Context, op ledger.Operation, evidence []byte) (ledger.Operation, bool, error) {
	got, err := d.OperationInsertBatch(ctx, []ledger.CreationRow{{Operation: op, Evidence: evidence}})
	if err != nil || len(got) == 0 {
		return ledger.Operation{}, false, err
	}
	return got[0], true, nil
}

// OperationInsertBatch implements ledger.CreateDriver: the operations,
// then the events of those inserted, two statements over JSON arrays in
// one transaction on the writer, one commit for them all.
func (d driver) OperationInsertBatch(ctx context.Context, rows []ledger.CreationRow) ([]ledger.Operation, error) {
	ops := make([]creationJSON, len(rows))
	evidence := make(map[string]string, len(rows))
	for i, r := range rows {
		ops[i] = creationJSON{TenantID: r.Tenant, OperationID: r.ID, OperationType: r.Type, IntentRef: r.IntentRef,
			Target: r.Target, Payload: hex.EncodeToString(r.Payload), PayloadHash: hex.EncodeToString(r.PayloadHash),
			RemoteKey: r.RemoteKey, RetryWindowEnd: micros(r.RetryWindowEnd),
			RetryWindowMicros: r.RetryWindow.Microseconds(), CreatedAt: micros(r.CreatedAt)}
		if r.Deadline != nil {
			deadline := micros(*r.Deadline)
			ops[i].Deadline = &deadline
		}
		evidence[r.ID] = string(r.Evidence)
	}
	js, err := json.Marshal(ops)
	if err != nil {
		return nil, err
	}
	var out []ledger.Operation
	err = d.inTx(ctx, func(q *dbsqlc.Queries) error {
		got, err := q.OperationInsertBatch(ctx, string(js))
		if err != nil || len(got) == 0 {
			return err
		}
		out = operations(got)
		events := make([]creationEventJSON, len(out))
		for i, op := range out {
			events[i] = creationEventJSON{TenantID: op.Tenant, OperationID: op.ID, Evidence: evidence[op.ID],
				At: micros(op.UpdatedAt)}
		}
		ev, err := json.Marshal(events)
		if err != nil {
			return err
		}
		return q.CreationEventsInsert(ctx, string(ev))
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// creationJSON is one row of OperationInsertBatch's array: bytes in hex,
// times in microseconds, as the statement reads them.
type creationJSON struct {
	TenantID          string `json:"tenant_id"`
	OperationID       string `json:"operation_id"`
	OperationType     string `json:"operation_type"`
	IntentRef         string `json:"intent_ref"`
	Target            string `json:"target"`
	Payload           string `json:"payload"`
	PayloadHash       string `json:"payload_hash"`
	RemoteKey         string `json:"remote_key"`
	RetryWindowEnd    int64  `json:"retry_window_end"`
	RetryWindowMicros int64  `json:"retry_window_micros"`
	Deadline          *int64 `json:"deadline"`
	CreatedAt         int64  `json:"created_at"`
}

// creationEventJSON is one row of CreationEventsInsert's array; the
// evidence is the JSON object's text, stored as it is.
type creationEventJSON struct {
	TenantID    string `json:"tenant_id"`
	OperationID string `json:"operation_id"`
	Evidence    string `json:"evidence"`
	At          int64  `json:"at"`
}

// PayloadConflictInsert implements ledger.CreateDriver.
func (d driver) PayloadConflictInsert(ctx context.Context, existing ledger.Operation, rejected []byte, at time.Time) error {
	return d.w.PayloadConflictInsert(ctx, dbsqlc.PayloadConflictInsertParams{TenantID: existing.Tenant,
		OperationID: existing.ID, OperationType: existing.Type, IntentRef: existing.IntentRef,
		StoredHash: existing.PayloadHash, RejectedHash: rejected, At: micros(at)})
}

// operationOf is the row of an operation query as a ledger.Operation.
func operationOf(r dbsqlc.OperationLedger) ledger.Operation {
	return ledger.Operation{Tenant: r.TenantID, ID: r.OperationID, Type: r.OperationType, IntentRef: r.IntentRef,
		Target: r.Target, Payload: r.Payload, PayloadHash: r.PayloadHash, RemoteKey: r.RemoteKey,
		State: ledger.State(r.State), Fence: r.FenceToken, Attempts: int(r.AttemptCount),
		LeaseExpiresAt: fromNull(r.LeaseExpiresAt), RemoteRef: r.RemoteRef.String,
		RetryWindowEnd: fromMicros(r.RetryWindowEnd), Deadline: fromNull(r.Deadline),
		NextReconcileAt: fromNull(r.NextReconcileAt), Reason: r.Reason, CreatedAt: fromMicros(r.CreatedAt),
		UpdatedAt: fromMicros(r.UpdatedAt), LastSentAt: fromNull(r.LastSentAt), FirstClaimedAt: fromNull(r.FirstClaimedAt),
		RetryWindow: time.Duration(r.RetryWindowMicros) * time.Microsecond}
}

// one is a single-row read as (operation, found, error).
func one(r dbsqlc.OperationLedger, err error) (ledger.Operation, bool, error) {
	if errors.Is(err, sql.ErrNoRows) {
		return ledger.Operation{}, false, nil
	}
	if err != nil {
		return ledger.Operation{}, false, err
	}
	return operationOf(r), true, nil
}

// OperationGet implements ledger.OperationDriver.
func (d driver) OperationGet(ctx context.Context, tenant, id string) (ledger.Operation, bool, error) {
	return one(d.r.OperationGet(ctx, dbsqlc.OperationGetParams{TenantID: tenant, OperationID: id}))
}

// OperationSummary implements ledger.OperationDriver.
func (d driver) OperationSummary(ctx context.Context, tenant, id string) (ledger.Operation, bool, error) {
	r, err := d.r.OperationSummary(ctx, dbsqlc.OperationSummaryParams{TenantID: tenant, OperationID: id})
	return one(dbsqlc.OperationLedger(r), err)
}

// OperationByIntent implements ledger.OperationDriver.
func (d driver) OperationByIntent(ctx context.Context, tenant, opType, intentRef string) (ledger.Operation, bool, error) {
	return one(d.r.OperationByIntent(ctx, dbsqlc.OperationByIntentParams{TenantID: tenant, OperationType: opType,
		IntentRef: intentRef}))
}

// OperationFind implements ledger.OperationDriver. The indexes are named
// as in Search (dialect.Hint, reads.go): unnamed, SQLite reads the
// tenant's every row through the primary key.
func (d driver) OperationFind(ctx context.Context, tenant, ref, id string) ([]ledger.Operation, error) {
	rows, err := d.r.OperationFind(ctx, dbsqlc.OperationFindParams{TenantID: tenant, Ref: ref,
		ID: sql.NullString{String: id, Valid: id != ""}})
	out := make([]ledger.Operation, len(rows))
	for i, r := range rows {
		out[i] = operationOf(r)
	}
	return out, err
}

// EventList implements ledger.OperationDriver.
func (d driver) EventList(ctx context.Context, tenant, id string) ([]ledger.Event, error) {
	rows, err := d.r.EventList(ctx, dbsqlc.EventListParams{TenantID: tenant, OperationID: id})
	out := make([]ledger.Event, len(rows))
	for i, r := range rows {
		out[i] = ledger.Event{ID: r.EventID, Tenant: r.TenantID, OperationID: r.OperationID,
			From: ledger.State(r.FromState), To: ledger.State(r.ToState), Fence: r.FenceToken, Actor: r.Actor,
			Reason: r.Reason, Evidence: []byte(r.Evidence), At: fromMicros(r.At)}
	}
	return out, err
}

// PayloadConflictCount implements ledger.OperationDriver.
func (d driver) PayloadConflictCount(ctx context.Context, tenant string, w ledger.Window) (int, error) {
	n, err := d.r.PayloadConflictCount(ctx, dbsqlc.PayloadConflictCountParams{TenantID: tenant,
		Since: micros(w.Since), Until: micros(w.Until)})
	return int(n), err
}

func sortByCreated(ops []ledger.Operation) {
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].CreatedAt.Before(ops[j].CreatedAt) })
}
