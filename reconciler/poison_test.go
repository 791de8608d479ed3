package reconciler_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/target/sim"
)

// A delivery the store cannot hold as text — "\u0000" in its settle
// reference, which PostgreSQL refuses in text columns and SQLite would
// store raw — is quarantined at once with the reference escaped for a
// reader, and the processor goes on to the next delivery. Control
// characters and overlong values are treated alike.
func TestInbox_UnstorableReferenceQuarantined(t *testing.T) {
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newHookRig(t, h, sim.Config{Class: "D"})
		nul := `{"id":"ch_nul","amount":5,"currency":"EUR","status":"succeeded","metadata":{"settle_ref":"ab\u0000cd","settle_tenant":"acme"}}`
		if s := r.post("evt_nul", nul); s != http.StatusOK {
			t.Fatalf("NUL delivery: %d", s)
		}
		if s := r.post("evt_next", chargeObject("ch_next", "6f1c2f7e-0d7b-4a47-9b8e-2f0b1d1a9c11", "acme", 5, "succeeded")); s != http.StatusOK {
			t.Fatalf("next delivery: %d", s)
		}
		// A line break and a bidi override in the event id, an overlong
		// reference: stored, but never as they came.
		r.post("evt_\n\u202e", chargeObject("ch_ctl", "6f1c2f7e-0d7b-4a47-9b8e-2f0b1d1a9c11", "acme", 5, "succeeded"))
		r.post("evt_long", chargeObject("ch_long", strings.Repeat("r", 300), "acme", 5, "succeeded"))
		r.runUntil("all quarantined", func() bool { return len(r.quarantined()) == 4 }, r.processor())
		byEvent := map[string]ledger.QuarantineItem{}
		for _, q := range r.quarantined() {
			byEvent[q.EventID] = q
		}
		if q, ok := byEvent[`"evt_\n\u202e"`]; !ok || !strings.Contains(q.Reason, "event id is not plain text") {
			t.Fatalf("control characters in the event id: %+v", r.quarantined())
		}
		if q := byEvent["evt_long"]; !strings.Contains(q.Reason, "settle reference is not plain text") ||
			!strings.HasSuffix(q.Reference, "(300 bytes)") {
			t.Fatalf("an overlong reference: %+v", q)
		}
		q, ok := byEvent["evt_nul"]
		if !ok {
			t.Fatalf("the NUL delivery was not quarantined: %+v", r.quarantined())
		}
		if strings.ContainsRune(q.Reference, 0) || !strings.Contains(q.Reference, `\x00`) {
			t.Fatalf("reference %q; want it escaped (\\x00), without a NUL", q.Reference)
		}
		if !strings.Contains(q.Reason, "reference") || !strings.Contains(q.Reason, "NUL") {
			t.Fatalf("reason %q does not say what is wrong", q.Reason)
		}
		if next := byEvent["evt_next"]; next.Reason != "no operation of the named tenant carries the reference" {
			t.Fatalf("the next delivery: %+v", next)
		}
		if ds, _ := r.inbox.ClaimDeliveries(r.ctx, 10, time.Minute); len(ds) != 0 {
			t.Fatalf("%d deliveries still due", len(ds))
		}
	})
}

// poisonStore fails every look-up of one reference, as a database that
// rejects the query would; the inbox and everything else are real.
type poisonStore struct {
	ledger.Store
	ref   string
	finds atomic.Int32
}

func (p *poisonStore) Find(ctx context.Context, tenant, ref string) ([]ledger.Operation, error) {
	if ref == p.ref {
		p.finds.Add(1)
		return nil, errors.New("ERROR: the database rejected the query (SQLSTATE XX000)")
	}
	return p.Store.Find(ctx, tenant, ref)
}

// A delivery whose processing always fails is tried MaxAttempts times,
// backing off between them, then quarantined with the last error; other
// deliveries are processed meanwhile.
func TestInbox_PoisonDeliveryGivesUp(t *testing.T) {
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newHookRig(t, h, sim.Config{Class: "D"})
		const ref = "6f1c2f7e-0d7b-4a47-9b8e-000000000bad"
		poison := &poisonStore{Store: r.store, ref: ref}
		proc := r.processor()
		proc.Store, proc.MaxAttempts = poison, 3
		r.post("evt_poison", chargeObject("ch_p", ref, "acme", 5, "succeeded"))
		r.post("evt_fine", chargeObject("ch_f", "6f1c2f7e-0d7b-4a47-9b8e-2f0b1d1a9c11", "acme", 5, "succeeded"))
		r.runUntil("both quarantined", func() bool { return len(r.quarantined()) == 2 }, proc)
		var q ledger.QuarantineItem
		for _, item := range r.quarantined() {
			if item.EventID == "evt_poison" {
				q = item
			}
		}
		if want := fmt.Sprintf("processing failed %d times", 3); !strings.Contains(q.Reason, want) ||
			!strings.Contains(q.Reason, "the database rejected the query") {
			t.Fatalf("reason %q; want %q and the last error", q.Reason, want)
		}
		if n := poison.finds.Load(); n != 3 {
			t.Fatalf("processed %d times, want 3", n)
		}
		if ds, _ := r.inbox.ClaimDeliveries(r.ctx, 10, time.Minute); len(ds) != 0 {
			t.Fatalf("%d deliveries still due", len(ds))
		}
	})
}
