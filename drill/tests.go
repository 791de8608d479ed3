package drill

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"settle/ledger"
)

// 1. Server commits, response dropped: UNKNOWN, then SUCCEEDED after
// reconciliation, and exactly one remote object.
func (d *drill) responseLost(ctx context.Context) result {
	r := d.rig()
	op, err := d.create(ctx, "response-lost")
	if err != nil {
		return broken(err)
	}
	claimed, err := d.claim(ctx, op, 0)
	if err != nil {
		return broken(err)
	}
	r.f.drop.Store(true)
	out := r.exec.Send(ctx, claimed)
	r.f.drop.Store(false)
	ev := map[string]any{"operation_id": op.ID, "sends": r.f.sends.Load(), "responses_dropped": r.f.dropped.Load(),
		"after_send": string(out.To)}
	if r.f.dropped.Load() != 1 {
		return fail("the create request did not reach the target, so nothing was committed to lose", ev)
	}
	if out.To != ledger.Unknown {
		return fail(fmt.Sprintf("a dropped response was recorded as %s, not UNKNOWN", out.To), ev)
	}
	got, err := d.record(ctx, out)
	if err != nil {
		return broken(err)
	}
	got, err = d.reconcile(ctx, r, got, 0)
	if err != nil {
		return broken(err)
	}
	ev["final"], ev["remote_ref"], ev["sends"] = string(got.State), got.RemoteRef, r.f.sends.Load()
	if got.State != ledger.Succeeded {
		if !d.c.HasLookup() {
			return result{na: true, evidence: ev, reason: fmt.Sprintf("the target has no lookup: reconciliation ended %s and settle cannot count the remote objects (%s)",
				got.State, got.Reason)}
		}
		return fail(fmt.Sprintf("reconciliation ended %s, not SUCCEEDED: %s", got.State, got.Reason), ev)
	}
	n, why := d.remoteObjects(ctx, r, got)
	ev["remote_objects"] = n
	switch {
	case n < 0:
		return result{na: true, evidence: ev, reason: "SUCCEEDED, but settle cannot count the remote objects: " + why}
	case n != 1:
		return fail(fmt.Sprintf("SUCCEEDED, but the target holds %d objects for the reference", n), ev)
	}
	return pass("UNKNOWN after the lost response, SUCCEEDED by reconciliation, one remote object", ev)
}

// 2. Worker killed after sending and before recording: UNKNOWN through
// lease expiry.
func (d *drill) workerKilled(ctx context.Context) result {
	r := d.rig()
	op, err := d.create(ctx, "worker-killed")
	if err != nil {
		return broken(err)
	}
	claimed, err := d.claim(ctx, op, d.Lease)
	if err != nil {
		return broken(err)
	}
	_ = r.exec.Send(ctx, claimed) // the worker dies here: its verdict is never recorded
	ev := map[string]any{"operation_id": op.ID, "sends": r.f.sends.Load(), "lease": d.Lease.String()}
	deadline := d.Now().Add(d.Lease + d.Patience)
	var got ledger.Operation
	for {
		if _, err := d.Store.SweepExpired(ctx); err != nil {
			return broken(fmt.Errorf("sweep: %w", err))
		}
		if got, err = d.Store.Get(ctx, op.Tenant, op.ID); err != nil {
			return broken(err)
		}
		if got.State != ledger.InFlight || d.Now().After(deadline) {
			break
		}
		if err := pause(ctx, d.Poll); err != nil {
			return broken(err)
		}
	}
	events, err := d.Store.Events(ctx, op.Tenant, op.ID)
	if err != nil {
		return broken(err)
	}
	swept := false
	for _, e := range events {
		if e.From == ledger.InFlight && e.To == ledger.Unknown && e.Actor == ledger.ActorSweeper {
			swept = true
		}
	}
	ev["swept_to_unknown"] = swept
	if !swept {
		return fail(fmt.Sprintf("the unrecorded send did not become UNKNOWN through lease expiry (now %s)", got.State), ev)
	}
	// Leave nothing unresolved behind: reconcile it as settle would.
	if got.State == ledger.Unknown {
		if got, err = d.reconcile(ctx, r, got, 0); err != nil {
			return broken(err)
		}
	}
	ev["final"] = string(got.State)
	return pass(fmt.Sprintf("UNKNOWN by the sweeper when the %s lease expired; reconciled to %s", d.Lease, got.State), ev)
}

// 3. Two workers race to claim the same operation: one sender.
func (d *drill) claimRace(ctx context.Context) result {
	r := d.rig()
	op, err := d.create(ctx, "claim-race")
	if err != nil {
		return broken(err)
	}
	const workers = 2
	var (
		wg     sync.WaitGroup
		start  = make(chan struct{})
		mu     sync.Mutex
		won    []ledger.Operation
		losers []string
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			got, err := d.Store.Claim(ctx, op.Tenant, op.ID, op.PayloadHash, d.c.Lease())
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				losers = append(losers, string(ledger.ErrorCode(err)))
				return
			}
			won = append(won, got)
		}()
	}
	close(start)
	wg.Wait()
	if len(won) == 0 {
		// Neither racer won: a third claimer (a settle serve's executor)
		// did, which says nothing about the race.
		return broken(fmt.Errorf("claim drill operation: another executor claimed it first (is a settle serve sending the drill tenant's operations?)"))
	}
	for _, w := range won { // every winner sends, as a worker would
		if _, err := d.record(ctx, r.exec.Send(ctx, w)); err != nil && ledger.ErrorCode(err) != ledger.EStaleFence {
			return broken(err)
		}
	}
	ev := map[string]any{"operation_id": op.ID, "claimers": workers, "claimed": len(won), "losers": losers}
	got, err := d.Store.Get(ctx, op.Tenant, op.ID)
	if err == nil {
		got, err = d.reconcile(ctx, r, got, 0)
	}
	if err != nil {
		return broken(err)
	}
	ev["sends"], ev["final"] = r.f.sends.Load(), string(got.State)
	if len(won) != 1 || r.f.sends.Load() != 1 {
		return fail(fmt.Sprintf("%d of %d workers claimed the operation and %d requests were sent", len(won), workers, r.f.sends.Load()), ev)
	}
	return pass(fmt.Sprintf("one of %d racing workers claimed it and sent once (%s)", workers, got.State), ev)
}

// 4. Same intent, changed payload: rejection, no send.
func (d *drill) payloadChanged(ctx context.Context) result {
	op, err := d.create(ctx, "payload-changed")
	if err != nil {
		return broken(err)
	}
	changed, err := variant(d.Payload)
	if err != nil {
		return broken(err)
	}
	_, created, err := d.Store.Create(ctx, d.newOp(op.IntentRef, changed, d.c.RetryWindow()))
	ev := map[string]any{"operation_id": op.ID, "error_code": string(ledger.ErrorCode(err)), "created": created}
	if ledger.ErrorCode(err) != ledger.EPayloadConflict {
		return fail(fmt.Sprintf("a changed payload under the same intent was not refused as a conflict (created=%v)", created), ev)
	}
	after, err := d.Store.GetByIntent(ctx, op.Tenant, op.Type, op.IntentRef)
	if err != nil {
		return broken(err)
	}
	ev["state"], ev["same_operation"] = string(after.State), after.ID == op.ID
	if after.ID != op.ID || string(after.PayloadHash) != string(op.PayloadHash) || after.State != ledger.Prepared || after.Attempts != 0 {
		return fail("the refused payload changed the operation under its intent", ev)
	}
	// Settle it, so the drill leaves no PREPARED operation for a serve to send.
	r := d.rig()
	if after, err = d.execute(ctx, r, after); err != nil {
		return broken(err)
	}
	ev["sends_of_changed_payload"], ev["final"] = 0, string(after.State)
	return pass("refused as a payload conflict; the operation kept its approved payload and was never sent with the changed one", ev)
}

// variant is payload with one more field: the same intent, another hash.
func variant(payload []byte) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(payload, &m); err != nil || m == nil {
		return nil, fmt.Errorf("the drill payload is not a JSON object")
	}
	m["settle_drill_variant"] = "changed"
	return json.Marshal(m)
}

// 5. Lookup returns nothing while the target is slow: UNKNOWN persists,
// not FAILED_TERMINAL.
func (d *drill) lookupLag(ctx context.Context) result {
	if !d.c.HasLookup() {
		return notApplicable(true, "the target has no lookup by reference, so absence is never consulted: an unresolved operation escalates")
	}
	r := d.rig()
	// Outside any replay window, so that the reconciler's only question is
	// the lookup, as for an operation whose window has closed.
	op, _, err := d.Store.Create(ctx, d.newOp(d.intent("lookup-lag"), d.Payload, 0))
	if err != nil {
		return broken(err)
	}
	claimed, err := d.claim(ctx, op, 0)
	if err != nil {
		return broken(err)
	}
	r.f.drop.Store(true)
	got, err := d.record(ctx, r.exec.Send(ctx, claimed))
	if err != nil {
		return broken(err)
	}
	const rounds = 3
	r.f.lag.Store(true)
	var states []string
	for i := range rounds {
		if i > 0 {
			if err := pause(ctx, d.Poll); err != nil {
				return broken(err)
			}
		}
		if got, err = d.reconcile(ctx, r, got, 1); err != nil {
			return broken(err)
		}
		states = append(states, string(got.State))
		if got.State != ledger.Unknown {
			break
		}
	}
	r.f.lag.Store(false)
	r.f.drop.Store(false)
	ev := map[string]any{"operation_id": op.ID, "lookups_answered_empty": r.f.lags.Load(), "states": states}
	if got.State == ledger.FailedTerminal {
		return fail("an empty lookup during lag made the operation FAILED_TERMINAL: absence alone must prove nothing", ev)
	}
	if got.State != ledger.Unknown || r.f.lags.Load() < rounds {
		return fail(fmt.Sprintf("the lag test did not run as designed: %s after %d empty lookups", got.State, r.f.lags.Load()), ev)
	}
	if got, err = d.reconcile(ctx, r, got, 0); err != nil {
		return broken(err)
	}
	ev["final"] = string(got.State)
	return pass(fmt.Sprintf("UNKNOWN through %d empty lookups; %s once the target answered", rounds, got.State), ev)
}

// 6. Unmatched or cross-tenant inbound event: quarantine, no state change.
func (d *drill) inboundUnmatched(ctx context.Context) result {
	if d.c.Webhook == nil {
		return notApplicable(true, "the contract has no webhook block: settle accepts no inbound events for this target")
	}
	r := d.rig()
	// An UNKNOWN operation, which a matching event would move.
	op, err := d.create(ctx, "inbound")
	if err != nil {
		return broken(err)
	}
	claimed, err := d.claim(ctx, op, 0)
	if err != nil {
		return broken(err)
	}
	r.f.drop.Store(true)
	op, err = d.record(ctx, r.exec.Send(ctx, claimed))
	r.f.drop.Store(false)
	if err != nil {
		return broken(err)
	}
	before, err := d.Store.Events(ctx, op.Tenant, op.ID)
	if err != nil {
		return broken(err)
	}
	ev := map[string]any{"operation_id": op.ID}
	events := []struct{ name, reference, tenant string }{
		{"unmatched", "drill-unmatched-" + randomHex(8), d.Tenant},
		{"cross_tenant", op.RemoteKey, otherTenant(d.Tenant)},
	}
	for _, e := range events {
		body, err := d.event(op, e.reference, e.tenant)
		if err != nil {
			return broken(err)
		}
		id, _, err := d.Store.Receive(ctx, d.c.Name, body)
		if err != nil {
			return broken(fmt.Errorf("receive: %w", err))
		}
		if err := d.inbox.Process(ctx, ledger.Delivery{ID: id, Target: d.c.Name, Body: body}); err != nil {
			return broken(fmt.Errorf("process: %w", err))
		}
		items, err := d.Store.ListQuarantine(ctx, ledger.QuarantineFilter{AllTenants: true, Unattributed: true})
		if err != nil {
			return broken(err)
		}
		var item *ledger.QuarantineItem
		for i := range items {
			if items[i].DeliveryID == id {
				item = &items[i]
			}
		}
		if item == nil {
			ev[e.name] = "not quarantined"
			return fail(fmt.Sprintf("the %s event was not quarantined", strings.ReplaceAll(e.name, "_", "-")), ev)
		}
		ev[e.name] = map[string]any{"quarantine_id": item.ID, "reason": item.Reason}
	}
	after, err := d.Store.Get(ctx, op.Tenant, op.ID)
	if err != nil {
		return broken(err)
	}
	evs, err := d.Store.Events(ctx, op.Tenant, op.ID)
	if err != nil {
		return broken(err)
	}
	ev["state_after"] = string(after.State)
	if after.State != ledger.Unknown || len(evs) != len(before) {
		return fail(fmt.Sprintf("the events changed the operation: %s with %d events, was UNKNOWN with %d", after.State, len(evs), len(before)), ev)
	}
	if after, err = d.reconcile(ctx, r, after, 0); err != nil {
		return broken(err)
	}
	ev["final"] = string(after.State)
	return pass("both events quarantined; the operation they named stayed UNKNOWN until reconciled", ev)
}

// otherTenant is a tenant that is not the drill's.
func otherTenant(t string) string {
	if len(t) > 50 {
		t = t[:50]
	}
	return t + "-elsewhere"
}

// event is an inbound event whose object looks like op's remote object
// (its payload, an id, a succeeded status) but claims reference and tenant.
func (d *drill) event(op ledger.Operation, reference, tenant string) ([]byte, error) {
	var obj map[string]any
	if err := json.Unmarshal(op.Payload, &obj); err != nil {
		return nil, fmt.Errorf("drill event: %w", err)
	}
	set := func(path string, v any) {
		if path != "" {
			setPath(obj, path, v)
		}
	}
	set(d.c.ReferenceField, reference)
	set(d.c.TenantField, tenant)
	set(d.c.Response.IDField, "drill_obj_"+randomHex(8))
	for _, s := range d.c.Response.Statuses {
		if s.Value != "" && string(s.Outcome) == "succeeded" {
			set(d.c.Response.StatusField, s.Value)
			break
		}
	}
	event := map[string]any{}
	setPath(event, or(d.c.Webhook.EventIDField, "id"), "drill_evt_"+randomHex(8))
	setPath(event, or(d.c.Webhook.ObjectField, "data"), obj)
	return json.Marshal(event)
}

// setPath writes v at a dotted path, making objects on the way.
func setPath(m map[string]any, path string, v any) {
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
}

func or(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

// 7 (control 11). Two identical-looking operations with different intent
// references both execute.
func (d *drill) legitimateRepeat(ctx context.Context) result {
	r := d.rig()
	var ops []ledger.Operation
	for _, what := range []string{"repeat-a", "repeat-b"} {
		op, err := d.create(ctx, what)
		if err != nil {
			return broken(err)
		}
		if op, err = d.execute(ctx, r, op); err != nil {
			return broken(err)
		}
		ops = append(ops, op)
	}
	a, b := ops[0], ops[1]
	ev := map[string]any{"operations": []string{a.ID, b.ID}, "states": []string{string(a.State), string(b.State)},
		"remote_refs": []string{a.RemoteRef, b.RemoteRef}, "sends": r.f.sends.Load()}
	if a.State != ledger.Succeeded || b.State != ledger.Succeeded {
		return fail(fmt.Sprintf("the two operations ended %s and %s, not both SUCCEEDED", a.State, b.State), ev)
	}
	if a.RemoteRef == b.RemoteRef {
		return fail("both operations point at the same remote object: the second was deduplicated into the first", ev)
	}
	for i, op := range ops {
		if n, _ := d.remoteObjects(ctx, r, op); n >= 0 {
			ev[fmt.Sprintf("remote_objects_%c", 'a'+i)] = n
			if n != 1 {
				return fail(fmt.Sprintf("the target holds %d objects for one of the two references", n), ev)
			}
		}
	}
	return pass("both executed: two SUCCEEDED operations, two remote objects", ev)
}
