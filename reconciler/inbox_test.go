package reconciler_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/reconciler"
	"settle/target"
	"settle/target/sim"
	"settle/web"
)

var whSecret = []byte("whsec-inbox-test")

// hookRig is a rig whose simulator sends signed webhooks to a real settle
// HTTP server on loopback, which stores them in the inbox.
type hookRig struct {
	*rig
	inbox ledger.InboxStore
	url   string        // settle's webhook endpoint for the target
	acked *atomic.Int64 // deliveries settle answered with a 2xx
}

func newHookRig(t *testing.T, h ledgertest.Harness, cfg sim.Config) *hookRig {
	t.Helper()
	var handler http.Handler = http.NotFoundHandler()
	var mu sync.Mutex
	acked := new(atomic.Int64)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		hd := handler
		mu.Unlock()
		sw := &statusWriter{ResponseWriter: w}
		hd.ServeHTTP(sw, req)
		if sw.status == 0 || sw.status/100 == 2 {
			acked.Add(1)
		}
	}))
	t.Cleanup(front.Close)
	cfg.WebhookURL, cfg.WebhookSecret = front.URL+"/webhooks/payments", string(whSecret)
	r := newRig(t, h, cfg, func(c *target.Contract) {
		c.Webhook = &target.Webhook{SecretEnv: "X", Tolerance: 5 * time.Minute,
			SignatureHeader: sim.SignatureHeader, ObjectField: "data", EventIDField: "id"}
		// A failed object, as a "payment failed" event shows it.
		c.Response.Statuses = append(c.Response.Statuses,
			target.StatusRule{Value: "failed", Outcome: target.ObjectFailed, Documentation: "https://example.test/failed"})
	})
	inbox := r.store.(ledger.InboxStore)
	e := web.New(web.Config{Store: r.store.(web.Store), Contracts: r.set,
		WebhookSecrets: map[string][]byte{"payments": whSecret}})
	mu.Lock()
	handler = e
	mu.Unlock()
	return &hookRig{rig: r, inbox: inbox, url: cfg.WebhookURL, acked: acked}
}

// statusWriter remembers the status a handler answered.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	w.status = status
	w.ResponseWriter.WriteHeader(status)
}

func (r *hookRig) processor() *reconciler.Inbox {
	return &reconciler.Inbox{Store: r.store, Inbox: r.inbox, Contracts: r.set, Log: r.log,
		Tick: 20 * time.Millisecond, Defer: 50 * time.Millisecond, Lease: 2 * time.Second}
}

// post delivers a signed event as a provider would.
func (r *hookRig) post(eventID string, object string) int {
	r.t.Helper()
	body := []byte(fmt.Sprintf(`{"id":%q,"type":"charge.succeeded","data":%s}`, eventID, object))
	req, _ := http.NewRequest(http.MethodPost, r.url, bytes.NewReader(body))
	req.Header.Set(sim.SignatureHeader, target.Sign(whSecret, time.Now(), body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func chargeObject(id, ref, tenant string, amount int, status string) string {
	return fmt.Sprintf(`{"id":%q,"amount":%d,"currency":"EUR","status":%q,"metadata":{"order":"order-1","settle_ref":%q,"settle_tenant":%q}}`,
		id, amount, status, ref, tenant)
}

func (r *hookRig) quarantined() []ledger.QuarantineItem {
	r.t.Helper()
	items, err := r.inbox.ListQuarantine(r.ctx, ledger.QuarantineFilter{Open: true, AllTenants: true, Unattributed: true})
	if err != nil {
		r.t.Fatal(err)
	}
	return items
}

// countedProcessor is a processor whose counters can be read from reg.
func (r *hookRig) countedProcessor() (*reconciler.Inbox, *prometheus.Registry) {
	reg := prometheus.NewRegistry()
	p := r.processor()
	p.Metrics = reg
	return p, reg
}

// processed reads settle_webhook_events_processed_total of one outcome
// ("finished" or "quarantined").
func processed(t *testing.T, reg *prometheus.Registry, outcome string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "settle_webhook_events_processed_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" && l.GetValue() == outcome {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// processEach claims the stored deliveries of the named events and has p
// process them one at a time, so that each one's outcome is known: it
// returns "finished", "quarantined" or "deferred" by event id.
func (r *hookRig) processEach(p *reconciler.Inbox, reg *prometheus.Registry, events ...string) map[string]string {
	r.t.Helper()
	got := map[string]string{}
	r.waitFor(fmt.Sprintf("deliveries of %v", events), func() bool {
		ds, err := r.inbox.ClaimDeliveries(r.ctx, 10, patience)
		if err != nil {
			r.t.Fatal(err)
		}
		for _, d := range ds {
			id, _ := r.c.EventParts(d.Body)
			finished, quarantined := processed(r.t, reg, "finished"), processed(r.t, reg, "quarantined")
			if err := p.Process(r.ctx, d); err != nil {
				r.t.Fatalf("processing %s: %v", id, err)
			}
			switch {
			case processed(r.t, reg, "finished") > finished:
				got[id] = "finished"
			case processed(r.t, reg, "quarantined") > quarantined:
				got[id] = "quarantined"
			default:
				got[id] = "deferred"
			}
		}
		for _, id := range events {
			if got[id] == "" {
				return false
			}
		}
		return true
	})
	return got
}

// The simulator's own signed webhook confirms an UNKNOWN operation, with
// the reconciler switched off; a duplicate delivery is processed once.
func TestInbox_WebhookConfirmsUnknown(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newHookRig(t, h, sim.Config{Class: "B", WebhookDuplicates: 1})
		r.sim.Script(sim.DropAfterCommit)
		op := r.create("acme", "order-1", 500)
		proc, reg := r.countedProcessor()
		// Both copies of the event reach settle and are acknowledged, and
		// one is processed.
		r.runUntil("SUCCEEDED by webhook, both copies acknowledged", func() bool {
			return r.get(op).State == ledger.Succeeded && r.acked.Load() >= 2 && processed(t, reg, "finished") >= 1
		}, r.executor(r.store), proc)
		ev := r.lastEvent(op)
		if ev.Actor != reconciler.ActorWebhook || !strings.Contains(string(ev.Evidence), "evt_") {
			t.Fatalf("last event %+v", ev)
		}
		if got := r.get(op); got.RemoteRef != r.sim.Objects()[0].ID {
			t.Fatalf("remote ref %q", got.RemoteRef)
		}
		if f, q := processed(t, reg, "finished"), processed(t, reg, "quarantined"); f != 1 || q != 0 {
			t.Fatalf("%v deliveries finished and %v quarantined, want the event processed once", f, q)
		}
		ds, _ := r.inbox.ClaimDeliveries(r.ctx, 10, time.Minute)
		if len(ds) != 0 || len(r.quarantined()) != 0 {
			t.Fatalf("%d deliveries left, %d quarantined", len(ds), len(r.quarantined()))
		}
	})
}

// Unknown operation, another tenant, no tenant, no object: quarantine,
// nothing changes. Mismatched fields: escalated. All over real HTTP.
func TestInbox_EvidenceRules(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newHookRig(t, h, sim.Config{Class: "D"})
		r.sim.Script(sim.FailBeforeCommit, sim.FailBeforeCommit)
		op := r.create("acme", "order-1", 500)
		other := r.create("acme", "order-2", 700)
		r.runUntil("UNKNOWN", func() bool {
			return r.get(op).State == ledger.Unknown && r.get(other).State == ledger.Unknown
		}, r.executor(r.store))
		before := r.get(op)
		for i, object := range []string{
			chargeObject("ch_a", "6f1c2f7e-0d7b-4a47-9b8e-2f0b1d1a9c11", "acme", 500, "succeeded"), // unknown reference
			chargeObject("ch_b", op.RemoteKey, "globex", 500, "succeeded"),                         // another tenant
			chargeObject("ch_c", op.RemoteKey, "", 500, "succeeded"),                               // no tenant
			`"not an object"`,
		} {
			if s := r.post(fmt.Sprintf("evt_q%d", i), object); s != http.StatusOK {
				t.Fatalf("delivery %d: %d", i, s)
			}
		}
		r.runUntil("four quarantined", func() bool { return len(r.quarantined()) == 4 }, r.processor())
		after := r.get(op)
		if after.State != before.State || after.Fence != before.Fence {
			t.Fatal("unattributable evidence changed the operation")
		}
		for _, q := range r.quarantined() {
			if q.OperationID != "" || q.Reason == "" || q.EventID == "" {
				t.Fatalf("quarantine item %+v", q)
			}
		}
		// The tenant's own operation, with the amount changed.
		r.post("evt_m", chargeObject("ch_m", other.RemoteKey, "acme", 999, "succeeded"))
		r.runUntil("ESCALATED", r.isIn(other, ledger.Escalated), r.processor())
		if ev := r.lastEvent(other); !strings.Contains(string(ev.Evidence), "amount") {
			t.Fatalf("evidence %s", ev.Evidence)
		}
	})
}

// A crash between the inbox write (and the 2xx) and processing loses
// nothing: a processor started later finds the delivery.
func TestInbox_CrashBetweenReceiptAndProcessing(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newHookRig(t, h, sim.Config{Class: "D"})
		r.sim.Script(sim.FailBeforeCommit)
		op := r.create("acme", "order-1", 500)
		r.runUntil("UNKNOWN", r.isIn(op, ledger.Unknown), r.executor(r.store))
		if s := r.post("evt_1", chargeObject("ch_1", op.RemoteKey, "acme", 500, "succeeded")); s != 200 {
			t.Fatalf("delivery: %d", s)
		}
		// "Crash": a processor that claims it and dies without finishing.
		ds, err := r.inbox.ClaimDeliveries(r.ctx, 10, 200*time.Millisecond)
		if err != nil || len(ds) != 1 {
			t.Fatalf("claimed %d, %v", len(ds), err)
		}
		// A new process starts; once the dead claim's lease runs out the
		// delivery is processed.
		r.runUntil("SUCCEEDED", r.isIn(op, ledger.Succeeded), r.processor())
	})
}

// Out of order: an event that arrives while the sender still holds the
// operation waits for it; an event contradicting a final state is
// quarantined against that operation and changes nothing, while the same
// object again in a new event is consistent and simply processed.
func TestInbox_OrderAndContradiction(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newHookRig(t, h, sim.Config{Class: "D"})
		op := r.create("acme", "order-1", 500)
		claimed, err := r.store.Claim(r.ctx, op.Tenant, op.ID, op.PayloadHash, 300*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		r.post("evt_early", chargeObject("ch_1", op.RemoteKey, "acme", 500, "succeeded"))
		proc, reg := r.countedProcessor()
		if got := r.processEach(proc, reg, "evt_early"); got["evt_early"] != "deferred" {
			t.Fatalf("the early event was %s, want deferred", got["evt_early"])
		}
		if got := r.get(op); got.State != ledger.InFlight || got.Fence != claimed.Fence {
			t.Fatalf("the event overrode the sender: %s", got.State)
		}
		// The sender's lease expires into UNKNOWN; the waiting event confirms.
		r.runUntil("SUCCEEDED by the waiting event", func() bool {
			return r.get(op).State == ledger.Succeeded && processed(t, reg, "finished") >= 1
		}, r.sweeper(), proc)
		before := r.get(op)
		if before.RemoteRef != "ch_1" {
			t.Fatalf("ref %q", before.RemoteRef)
		}
		events := len(r.history(op))

		// Same reference, another object: a contradiction of SUCCEEDED.
		r.post("evt_dup", chargeObject("ch_2", op.RemoteKey, "acme", 500, "succeeded"))
		// And the original object again in a new event: consistent.
		r.post("evt_again", chargeObject("ch_1", op.RemoteKey, "acme", 500, "succeeded"))
		proc, reg = r.countedProcessor()
		got := r.processEach(proc, reg, "evt_dup", "evt_again")
		if got["evt_dup"] != "quarantined" || got["evt_again"] != "finished" {
			t.Fatalf("evt_dup was %s and evt_again %s, want quarantined and finished", got["evt_dup"], got["evt_again"])
		}
		q := r.quarantined()
		if len(q) != 1 || q[0].EventID != "evt_dup" || q[0].OperationID != op.ID || q[0].RemoteID != "ch_2" ||
			!strings.Contains(q[0].Reason, "SUCCEEDED") {
			t.Fatalf("quarantine %+v", q)
		}
		after := r.get(op)
		if after.State != ledger.Succeeded || after.RemoteRef != "ch_1" || after.Fence != before.Fence ||
			!after.UpdatedAt.Equal(before.UpdatedAt) || len(r.history(op)) != events {
			t.Fatal("an event about a final operation changed it")
		}
	})
}

// A "payment failed" event about an operation already FAILED_TERMINAL
// agrees with it when it names the stored remote reference and its status
// is documented as failed: the delivery is finished as consistent, not
// quarantined. The same event naming another object, or the stored object
// with a success status, still goes to quarantine. Nothing changes the
// operation.
func TestInbox_FailedEventAgreesWithFailedTerminal(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newHookRig(t, h, sim.Config{Class: "D"})
		op := r.create("acme", "order-failed", 500)
		claimed, err := r.store.Claim(r.ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.store.Record(r.ctx, ledger.Outcome{Tenant: op.Tenant, OperationID: op.ID, Fence: claimed.Fence,
			From: ledger.InFlight, To: ledger.FailedTerminal, RemoteRef: "ch_1", Reason: "declined", Actor: "test"}); err != nil {
			t.Fatal(err)
		}
		before := r.get(op)
		events := len(r.history(op))
		r.post("evt_failed", chargeObject("ch_1", op.RemoteKey, "acme", 500, "failed"))
		r.post("evt_other", chargeObject("ch_2", op.RemoteKey, "acme", 500, "failed"))
		r.post("evt_won", chargeObject("ch_1", op.RemoteKey, "acme", 500, "succeeded"))
		proc, reg := r.countedProcessor()
		got := r.processEach(proc, reg, "evt_failed", "evt_other", "evt_won")
		if got["evt_failed"] != "finished" || got["evt_other"] != "quarantined" || got["evt_won"] != "quarantined" {
			t.Fatalf("outcomes %v; want evt_failed finished, the others quarantined", got)
		}
		if q := r.quarantined(); len(q) != 2 {
			t.Fatalf("quarantine %+v", q)
		}
		after := r.get(op)
		if after.State != ledger.FailedTerminal || after.RemoteRef != "ch_1" || after.Fence != before.Fence || len(r.history(op)) != events {
			t.Fatal("an event about a final operation changed it")
		}
	})
}
