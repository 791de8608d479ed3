package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"time"

	"settle/ledger"
	"settle/ledger/sqlite/internal/dbsqlc"
)

// eventRow is one event of EventsInsert's JSON array, and one row of the
// callbacks and notices queued from it.
type eventRow struct {
	Tenant      string `json:"tenant_id"`
	OperationID string `json:"operation_id"`
	From        string `json:"from_state"`
	To          string `json:"to_state"`
	Fence       int64  `json:"fence_token"`
	Actor       string `json:"actor"`
	Reason      string `json:"reason"`
	Evidence    string `json:"evidence"` // the JSON object's text, stored as it is
	At          int64  `json:"at"`
}

// transitions collects the events of one transaction's transitions.
type transitions []eventRow

func (t *transitions) add(op ledger.Operation, from ledger.State, ev ledger.TransitionEvent, evidence []byte) {
	e := string(evidence)
	if e == "" {
		e = "{}"
	}
	*t = append(*t, eventRow{Tenant: op.Tenant, OperationID: op.ID, From: string(from), To: string(op.State),
		Fence: op.Fence, Actor: ev.Actor, Reason: ev.Reason, Evidence: e, At: micros(op.UpdatedAt)})
}

// insert writes the events; with queue, also the callbacks and escalation
// notices they call for.
func (t transitions) insert(ctx context.Context, q *dbsqlc.Queries, queue bool) error {
	if len(t) == 0 {
		return nil
	}
	js, err := json.Marshal(t)
	if err != nil {
		return err
	}
	if err := q.EventsInsert(ctx, string(js)); err != nil {
		return err
	}
	if !queue {
		return nil
	}
	states, err := json.Marshal(ledger.CallbackStates())
	if err != nil {
		return err
	}
	if err := q.CallbacksQueue(ctx, dbsqlc.CallbacksQueueParams{Events: string(js), CallbackStates: string(states)}); err != nil {
		return err
	}
	return q.EscalationNoticesQueue(ctx, string(js))
}

func operations(rows []dbsqlc.OperationLedger) []ledger.Operation {
	out := make([]ledger.Operation, len(rows))
	for i, r := range rows {
		out[i] = operationOf(r)
	}
	return out
}

// OperationClaim implements ledger.TransitionDriver: the claim and its
// event in one transaction.
func (d driver) OperationClaim(ctx context.Context, p ledger.ClaimParams) (op ledger.Operation, found bool, err error) {
	err = d.inTx(ctx, func(q *dbsqlc.Queries) error {
		r, err := q.OperationClaim(ctx, dbsqlc.OperationClaimParams{LeaseEnd: micros(p.LeaseEnd), Now: micros(p.Now),
			TenantID: p.Tenant, OperationID: p.ID, PayloadHash: p.Hash})
		if op, found, err = one(r, err); err != nil || !found {
			return err
		}
		var t transitions
		t.add(op, ledger.Prepared, p.Event, nil)
		return t.insert(ctx, q, false)
	})
	return op, found, err
}

// OperationClaimBatch implements ledger.TransitionDriver: the fair pick,
// then the claim of those picked, in one transaction on the single
// writer, which takes no row locks to skip.
func (d driver) OperationClaimBatch(ctx context.Context, p ledger.ClaimBatchParams) ([]ledger.Operation, error) {
	var ops []ledger.Operation
	err := d.inTx(ctx, func(q *dbsqlc.Queries) error {
		picked, err := q.OperationClaimPick(ctx, int64(p.Max))
		if err != nil || len(picked) == 0 {
			ops = nil
			return err
		}
		js := pairsJSON(len(picked), func(i int) (string, string) { return picked[i].TenantID, picked[i].OperationID })
		rows, err := q.OperationClaimPicked(ctx, dbsqlc.OperationClaimPickedParams{Now: micros(p.Now),
			TargetLeases: p.LeasesJSON(), DefaultLease: p.Lease.Microseconds(), Picked: js})
		if err != nil {
			return err
		}
		ops = operations(rows)
		sortByCreated(ops)
		var t transitions
		for _, op := range ops {
			t.add(op, ledger.Prepared, p.Event, nil)
		}
		return t.insert(ctx, q, false)
	})
	return ops, err
}

// OperationRecord implements ledger.TransitionDriver: each row's
// conditional update, then the events, callbacks and notices, in one
// transaction.
func (d driver) OperationRecord(ctx context.Context, p ledger.RecordParams) ([]ledger.Operation, error) {
	var ops []ledger.Operation
	err := d.inTx(ctx, func(q *dbsqlc.Queries) error {
		ops = ops[:0]
		var t transitions
		for _, r := range p.Rows {
			got, err := q.OperationRecordOne(ctx, dbsqlc.OperationRecordOneParams{ToState: string(r.To),
				RemoteRef: r.RemoteRef, NextAt: nullMicros(r.NextAt), Reason: r.Reason, Now: micros(p.Now),
				SentAt: nullMicros(r.SentAt), EndReplay: boolInt(r.EndReplay), TenantID: r.Tenant,
				OperationID: r.ID, FromState: string(r.From), Fence: r.Fence})
			if err != nil {
				return err
			}
			for _, op := range operations(got) {
				ops = append(ops, op)
				t.add(op, r.From, ledger.TransitionEvent{Actor: r.Actor, Reason: r.Reason}, r.Evidence)
			}
		}
		return t.insert(ctx, q, true)
	})
	return ops, err
}

// OperationSweepExpired implements ledger.TransitionDriver in one
// transaction.
func (d driver) OperationSweepExpired(ctx context.Context, p ledger.SweepParams) ([]ledger.Transition, error) {
	var out []ledger.Transition
	err := d.inTx(ctx, func(q *dbsqlc.Queries) error {
		rows, err := q.OperationSweepExpired(ctx, dbsqlc.OperationSweepExpiredParams{Now: micros(p.Now),
			Reason: p.Event.Reason, Max: int64(p.Max)})
		if err != nil {
			return err
		}
		out = out[:0]
		var t transitions
		for _, op := range operations(rows) {
			t.add(op, ledger.InFlight, p.Event, nil)
			out = append(out, ledger.Transition{Tenant: op.Tenant, OperationID: op.ID, Target: op.Target,
				From: ledger.InFlight, To: op.State, At: op.UpdatedAt})
		}
		return t.insert(ctx, q, false)
	})
	return out, err
}

// pairsJSON is n picked operations as the JSON array of [tenant, id]
// pairs that the statement after a pick reads.
func pairsJSON(n int, at func(i int) (tenant, id string)) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		tenant, id := at(i)
		t, _ := json.Marshal(tenant) // strings always encode
		o, _ := json.Marshal(id)
		b.WriteByte('[')
		b.Write(t)
		b.WriteByte(',')
		b.Write(o)
		b.WriteByte(']')
	}
	b.WriteByte(']')
	return b.String()
}

func nullMicros(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMicro(), Valid: true}
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// OperationLeaseDue implements ledger.TransitionDriver: the pick
// (SQLite has no LATERAL: each tenant's candidates are bounded at its
// p.Max-th due time instead), then the lease of those picked, in one
// transaction on the single writer, which takes no row locks to skip.
func (d driver) OperationLeaseDue(ctx context.Context, p ledger.LeaseDueParams) ([]ledger.Operation, error) {
	skip, err := json.Marshal(p.SkipTargets)
	if err != nil {
		return nil, err
	}
	var ops []ledger.Operation
	err = d.inTx(ctx, func(q *dbsqlc.Queries) error {
		picked, err := q.OperationDuePick(ctx, dbsqlc.OperationDuePickParams{Max: int64(p.Max), Now: micros(p.Now),
			SkipTargets: string(skip)})
		if err != nil || len(picked) == 0 {
			ops = nil
			return err
		}
		js := pairsJSON(len(picked), func(i int) (string, string) { return picked[i].TenantID, picked[i].OperationID })
		rows, err := q.OperationLease(ctx, dbsqlc.OperationLeaseParams{LeaseEnd: micros(p.LeaseEnd), Now: micros(p.Now),
			Picked: js})
		ops = operations(rows)
		return err
	})
	return ops, err
}
