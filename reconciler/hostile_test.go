package reconciler_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/target"
	"settle/target/sim"
)

// hostileIDs are the object ids a hostile (or broken) provider gives the
// objects of one tenant each: a NUL, an id too long for an index entry,
// one too long for an event's evidence.
var hostileIDs = map[string]string{
	"mallory-nul":  "ch_\x00evil",
	"mallory-long": "ch_" + strings.Repeat("l", 3000),
	"mallory-huge": "ch_" + strings.Repeat("h", 5000),
	// A plain id that the test's database refuses (RefuseRemoteRef).
	"mallory-refused": "ch_refused",
}

// One provider's bad answer never costs other operations their outcome.
// A class-B target answers every object of three tenants with a hostile id
// (on the create and on every lookup) and everyone else's normally; the
// operations of all of them are claimed in one batch, sent, and their
// verdicts recorded in one RecordBatch. The neighbours, other tenants', end
// SUCCEEDED with the 201 in their event log; each hostile one is UNKNOWN
// with evidence saying why its id is unusable (the id shown escaped, never
// raw), is looked up again and again, and is ESCALATED once past its
// deadline.
func TestHostileProviderIDsIsolated(t *testing.T) {
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "B"}, func(c *target.Contract) { c.Deadline = 4 * time.Second })
		r.proxy(hostileAnswers)

		var good, bad []ledger.Operation
		for i := range 15 {
			tenant := []string{"acme", "globex", "initech"}[i%3]
			good = append(good, r.create(tenant, fmt.Sprintf("%s-order-%d", tenant, i), 100+i))
			if i%5 == 2 {
				tenant := []string{"mallory-nul", "mallory-long", "mallory-huge"}[i/5]
				bad = append(bad, r.create(tenant, tenant+"-order", 7))
			}
		}
		claimed, err := r.store.ClaimBatch(r.ctx, 50, 10*time.Second)
		if err != nil || len(claimed) != len(good)+len(bad) {
			t.Fatalf("claimed %d of %d: %v", len(claimed), len(good)+len(bad), err)
		}
		ex := r.executor(r.store)
		outs := make([]ledger.Outcome, len(claimed))
		var wg sync.WaitGroup
		for i, op := range claimed {
			wg.Go(func() { outs[i] = ex.Send(r.ctx, op) })
		}
		wg.Wait()
		errs, err := r.store.RecordBatch(r.ctx, outs)
		if err != nil {
			t.Fatalf("the batch failed as a whole: %v", err)
		}
		for i, e := range errs {
			if e != nil {
				t.Errorf("outcome of %s (%s) not recorded: %v", claimed[i].ID, claimed[i].Tenant, e)
			}
		}
		for _, op := range good {
			got := r.get(op)
			ev := r.lastEvent(op)
			var m map[string]any
			_ = json.Unmarshal(ev.Evidence, &m)
			if got.State != ledger.Succeeded || !strings.HasPrefix(got.RemoteRef, "ch_") || m["status"] != 201.0 {
				t.Fatalf("neighbour %s of %s: %s %q, last event %s", op.ID, op.Tenant, got.State, got.RemoteRef, ev.Evidence)
			}
		}
		for _, op := range bad {
			got := r.get(op)
			ev := r.lastEvent(op)
			if got.State != ledger.Unknown || got.RemoteRef != "" {
				t.Fatalf("hostile %s: %s %q, want UNKNOWN without a remote ref", op.Tenant, got.State, got.RemoteRef)
			}
			wantUnusableEvidence(t, op.Tenant, ev)
		}

		r.runUntil("every hostile operation ESCALATED", func() bool {
			for _, op := range bad {
				if r.get(op).State != ledger.Escalated {
					return false
				}
			}
			return true
		}, r.reconciler(), r.sweeper())
		for _, op := range bad {
			got, ev := r.get(op), r.lastEvent(op)
			if !strings.Contains(got.Reason, "past its deadline") || !strings.Contains(got.Reason, "cannot use") ||
				got.RemoteRef != "" || got.Deadline == nil || ev.At.Before(*got.Deadline) {
				t.Fatalf("hostile %s escalated with %q at %s (deadline %v)", op.Tenant, got.Reason, ev.At, got.Deadline)
			}
			wantUnusableEvidence(t, op.Tenant, ev)
			if lookups := len(r.history(op)); lookups < 3 {
				t.Fatalf("hostile %s: history %v; it was never looked up again", op.Tenant, r.history(op))
			}
			for _, s := range r.history(op) {
				if s == ledger.Succeeded {
					t.Fatalf("hostile %s was SUCCEEDED on an unusable id: %v", op.Tenant, r.history(op))
				}
			}
		}
	})
}

// A verdict the database itself refuses — here a plain id that a trigger
// rejects, at the send and at every lookup — never keeps its operation
// from its deadline: settle records UNKNOWN instead ("the database refused
// it"), asks again, and escalates once past the deadline, while another
// tenant's operation beside it is confirmed.
func TestRefusedVerdictEscalatesAtDeadline(t *testing.T) {
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "B"}, func(c *target.Contract) { c.Deadline = 4 * time.Second })
		r.proxy(hostileAnswers)
		h.RefuseRemoteRef(t, r.store, "ch_refused")
		good := r.create("acme", "acme-order-1", 100)
		bad := r.create("mallory-refused", "mallory-refused-order", 7)
		r.runUntil("the refused operation ESCALATED", r.isIn(bad, ledger.Escalated),
			r.executor(r.store), r.reconciler(), r.sweeper())
		if got := r.get(good); got.State != ledger.Succeeded {
			t.Fatalf("the neighbour: %s", got.State)
		}
		got, ev := r.get(bad), r.lastEvent(bad)
		if !strings.Contains(got.Reason, "past its deadline") || !strings.Contains(got.Reason, "database refused") ||
			got.RemoteRef != "" || ev.At.Before(*got.Deadline) {
			t.Fatalf("escalated with %q at %s (deadline %s)", got.Reason, ev.At, got.Deadline)
		}
		hist := r.history(bad)
		if len(hist) < 4 || hist[2] != ledger.Unknown {
			t.Fatalf("history %v; want UNKNOWN recorded for the refused verdict first", hist)
		}
	})
}

// wantUnusableEvidence checks that an event's evidence says the id is
// unusable and shows it escaped and cut short, never raw.
func wantUnusableEvidence(t *testing.T, tenant string, ev ledger.Event) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(ev.Evidence, &m); err != nil {
		t.Fatal(err)
	}
	why, _ := m["remote_id_unusable"].(string)
	shown, _ := m["remote_id_shown"].(string)
	if why == "" || !strings.HasPrefix(shown, `"ch_`) || len(shown) > 100 || strings.ContainsRune(shown, 0) {
		t.Fatalf("hostile %s: evidence %s; want why the id is unusable and the id escaped", tenant, ev.Evidence)
	}
	if strings.Contains(string(ev.Evidence), `\u0000`) || len(ev.Evidence) > 1000 {
		t.Fatalf("hostile %s: the raw id reached the evidence: %.200s", tenant, ev.Evidence)
	}
}

// hostileAnswers hands every request to the target and rewrites the id of
// every object of a hostile tenant in its answer.
func hostileAnswers(w http.ResponseWriter, req *http.Request, next http.Handler) {
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, req)
	body := rec.Body.Bytes()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) == nil && rewriteIDs(v) {
		body, _ = json.Marshal(v)
	}
	for k, vs := range rec.Header() {
		if k != "Content-Length" {
			w.Header()[k] = vs
		}
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(body)
}

// rewriteIDs replaces, in place, the id of every object in v whose tenant
// is hostile, and reports whether it changed any.
func rewriteIDs(v any) bool {
	changed := false
	switch x := v.(type) {
	case map[string]any:
		if tenant, _ := x["tenant"].(string); hostileIDs[tenant] != "" {
			if _, ok := x["id"]; ok {
				x["id"], changed = hostileIDs[tenant], true
			}
		}
		for _, c := range x {
			changed = rewriteIDs(c) || changed
		}
	case []any:
		for _, c := range x {
			changed = rewriteIDs(c) || changed
		}
	}
	return changed
}
