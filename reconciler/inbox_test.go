package reconciler_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"settle/auth"
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
	url   string // settle's webhook endpoint for the target
}

func newHookRig(t *testing.T, h ledgertest.Harness, cfg sim.Config) *hookRig {
	t.Helper()
	var handler http.Handler = http.NotFoundHandler()
	var mu sync.Mutex
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		hd := handler
		mu.Unlock()
		hd.ServeHTTP(w, req)
	}))
	t.Cleanup(front.Close)
	cfg.WebhookURL, cfg.WebhookSecret = front.URL+"/webhooks/payments", string(whSecret)
	r := newRig(t, h, cfg, func(c *target.Contract) {
		c.Webhook = &target.Webhook{SecretEnv: "X", Tolerance: 5 * time.Minute,
			SignatureHeader: sim.SignatureHeader, ObjectField: "data", EventIDField: "id"}
	})
	inbox := r.store.(ledger.InboxStore)
	e := web.New(web.Config{Store: r.store, Tokens: r.store.(auth.TokenStore), Contracts: r.set,
		WebhookSecrets: map[string][]byte{"payments": whSecret}, Inbox: inbox})
	mu.Lock()
	handler = e
	mu.Unlock()
	return &hookRig{rig: r, inbox: inbox, url: cfg.WebhookURL}
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
	items, err := r.inbox.ListQuarantine(r.ctx, true)
	if err != nil {
		r.t.Fatal(err)
	}
	return items
}

// The simulator's own signed webhook confirms an UNKNOWN operation, with
// the reconciler switched off; a duplicate delivery is processed once.
func TestInbox_WebhookConfirmsUnknown(t *testing.T) {
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newHookRig(t, h, sim.Config{Class: "B", WebhookDuplicates: 1})
		r.sim.Script(sim.DropAfterCommit)
		op := r.create("acme", "order-1", 500)
		r.runUntil("SUCCEEDED by webhook", 10*time.Second, r.isIn(op, ledger.Succeeded), r.executor(r.store), r.processor())
		ev := r.lastEvent(op)
		if ev.Actor != reconciler.ActorWebhook || !strings.Contains(string(ev.Evidence), "evt_") {
			t.Fatalf("last event %+v", ev)
		}
		if got := r.get(op); got.RemoteRef != r.sim.Objects()[0].ID {
			t.Fatalf("remote ref %q", got.RemoteRef)
		}
		time.Sleep(300 * time.Millisecond) // let the duplicate arrive
		ds, _ := r.inbox.ClaimDeliveries(r.ctx, 10, time.Minute)
		if len(ds) != 0 || len(r.quarantined()) != 0 {
			t.Fatalf("%d deliveries left, %d quarantined", len(ds), len(r.quarantined()))
		}
	})
}

// Unknown operation, another tenant, no tenant, no object: quarantine,
// nothing changes. Mismatched fields: escalated. All over real HTTP.
func TestInbox_EvidenceRules(t *testing.T) {
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newHookRig(t, h, sim.Config{Class: "D"})
		r.sim.Script(sim.FailBeforeCommit, sim.FailBeforeCommit)
		op := r.create("acme", "order-1", 500)
		other := r.create("acme", "order-2", 700)
		r.runUntil("UNKNOWN", 5*time.Second, func() bool {
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
		r.runUntil("four quarantined", 5*time.Second, func() bool { return len(r.quarantined()) == 4 }, r.processor())
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
		r.runUntil("ESCALATED", 5*time.Second, r.isIn(other, ledger.Escalated), r.processor())
		if ev := r.lastEvent(other); !strings.Contains(string(ev.Evidence), "amount") {
			t.Fatalf("evidence %s", ev.Evidence)
		}
	})
}

// A crash between the inbox write (and the 2xx) and processing loses
// nothing: a processor started later finds the delivery.
func TestInbox_CrashBetweenReceiptAndProcessing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newHookRig(t, h, sim.Config{Class: "D"})
		r.sim.Script(sim.FailBeforeCommit)
		op := r.create("acme", "order-1", 500)
		r.runUntil("UNKNOWN", 5*time.Second, r.isIn(op, ledger.Unknown), r.executor(r.store))
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
		r.runUntil("SUCCEEDED", 5*time.Second, r.isIn(op, ledger.Succeeded), r.processor())
	})
}

// Out of order: an event that arrives while the sender still holds the
// operation waits for it; an event contradicting a final state is
// quarantined against that operation and changes nothing.
func TestInbox_OrderAndContradiction(t *testing.T) {
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newHookRig(t, h, sim.Config{Class: "D"})
		op := r.create("acme", "order-1", 500)
		claimed, err := r.store.Claim(r.ctx, op.Tenant, op.ID, op.PayloadHash, 300*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		r.post("evt_early", chargeObject("ch_1", op.RemoteKey, "acme", 500, "succeeded"))
		proc := r.processor()
		ctx, cancel := context.WithCancel(r.ctx)
		done := make(chan struct{})
		go func() { _ = proc.Run(ctx); close(done) }()
		time.Sleep(150 * time.Millisecond)
		if got := r.get(op); got.State != ledger.InFlight || got.Fence != claimed.Fence {
			t.Fatalf("the event overrode the sender: %s", got.State)
		}
		// The sender's lease expires into UNKNOWN; the waiting event confirms.
		r.runUntil("SUCCEEDED", 5*time.Second, r.isIn(op, ledger.Succeeded), r.sweeper())
		cancel()
		<-done
		if got := r.get(op); got.RemoteRef != "ch_1" {
			t.Fatalf("ref %q", got.RemoteRef)
		}
		// Same reference, another object: a contradiction of SUCCEEDED.
		r.post("evt_dup", chargeObject("ch_2", op.RemoteKey, "acme", 500, "succeeded"))
		// And the original event again in a new delivery: consistent.
		r.post("evt_again", chargeObject("ch_1", op.RemoteKey, "acme", 500, "succeeded"))
		r.runUntil("one quarantined", 5*time.Second, func() bool { return len(r.quarantined()) == 1 }, r.processor())
		time.Sleep(100 * time.Millisecond)
		q := r.quarantined()
		if len(q) != 1 || q[0].OperationID != op.ID || q[0].RemoteID != "ch_2" || !strings.Contains(q[0].Reason, "SUCCEEDED") {
			t.Fatalf("quarantine %+v", q)
		}
		if got := r.get(op); got.State != ledger.Succeeded || got.RemoteRef != "ch_1" {
			t.Fatal("a contradicting event changed a final operation")
		}
	})
}
