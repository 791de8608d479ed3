package reconciler_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/target"
	"settle/target/sim"
)

// hangingServer answers no request until the test ends (or the client
// gives up), and counts the requests it holds at once.
type hangingServer struct {
	mu                  sync.Mutex
	now, most, received int
	ended               int // requests that returned, answered or given up
}

func (h *hangingServer) start(t *testing.T, release <-chan struct{}) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		h.mu.Lock()
		h.now++
		h.received++
		h.most = max(h.most, h.now)
		h.mu.Unlock()
		defer func() {
			h.mu.Lock()
			h.now--
			h.ended++
			h.mu.Unlock()
		}()
		select {
		case <-release:
		case <-req.Context().Done():
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (h *hangingServer) counts() (most, received, ended int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.most, h.received, h.ended
}

// A target that hangs holds only its own reconcile slots: the healthy
// target's UNKNOWN operations are all resolved while every lookup of the
// hung one is still held, the hung target never has more than its
// reconcile.concurrency of them in flight, and its other due operations
// are not leased (they stay due, untouched, for another replica). Before
// per-target slots the reconciler leased both targets' operations in one
// batch, its workers filled up with hung lookups and the healthy target
// waited for the hung one's timeout.
func TestReconciler_HungTargetHoldsOnlyItsSlots(t *testing.T) {
	t.Parallel()
	const healthy, hung, limit = 20, 10, 2
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		clk := ledgertest.NewClock()
		r := newRigAt(t, h, sim.Config{Class: "B"}, nil, clk.Now)
		// The hung target is the simulator's contract under another name,
		// pointed at a server that never answers.
		two := append(r.srv.Contract("payments"), bytes.SplitN(r.srv.Contract("hung"), []byte("targets:\n"), 2)[1]...)
		set, err := target.Parse("sim.yaml", two)
		if err != nil {
			t.Fatal(err)
		}
		r.set = set
		r.c, _ = set.Get("payments")
		r.c.Timeout = 1500 * time.Millisecond
		release, open := r.latch()
		held := &hangingServer{}
		hc, _ := set.Get("hung")
		hc.BaseURL = held.start(t, release).URL
		hc.Timeout = target.MaxTimeout // longer than the test: only its end releases a lookup
		hc.Reconcile.Concurrency = limit

		var ops []ledger.Operation
		for i := range healthy {
			op := r.create("acme", fmt.Sprintf("healthy-%d", i), 100+i)
			// The charge exists at the target: a lookup finds it.
			resp, err := http.Post(r.srv.URL()+"/v1/charges", "application/json", bytes.NewReader(op.Payload))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			ops = append(ops, op)
		}
		var stuck []ledger.Operation
		for i := range hung {
			n := r.newOp("acme", fmt.Sprintf("hung-%d", i), 500+i)
			n.Target, n.Bind = hc.Name, hc.Bind
			op, _, err := r.store.Create(r.ctx, n)
			if err != nil {
				t.Fatal(err)
			}
			stuck = append(stuck, op)
		}
		// Every operation becomes UNKNOWN without a send: claimed, then its
		// lease runs out; the hung target's are the older.
		for claimed := 0; claimed < healthy+hung; {
			got, err := r.store.ClaimBatch(r.ctx, ledger.MaxListLimit, time.Minute)
			if err != nil || len(got) == 0 {
				t.Fatalf("claimed %d, %v", claimed, err)
			}
			claimed += len(got)
		}
		clk.Advance(2 * time.Minute)
		if swept, err := r.store.SweepExpired(r.ctx); err != nil || swept != healthy+hung {
			t.Fatalf("swept %d, %v", swept, err)
		}
		for i := range stuck {
			stuck[i] = r.get(stuck[i])
		}

		rec := r.reconciler()
		rec.Now = clk.Now
		stop := r.start(rec)
		r.waitFor("the healthy target's operations SUCCEEDED", func() bool {
			for _, op := range ops {
				if r.get(op).State != ledger.Succeeded {
					return false
				}
			}
			return true
		})
		r.waitFor("the hung target's slots taken", func() bool { _, received, _ := held.counts(); return received >= limit })
		time.Sleep(100 * time.Millisecond) // room for a lease that should not happen
		most, received, ended := held.counts()
		leased := 0
		for _, op := range stuck {
			got := r.get(op)
			if got.Fence != op.Fence {
				leased++
				continue
			}
			if got.State != ledger.Unknown || !got.NextReconcileAt.Equal(*op.NextReconcileAt) || !got.UpdatedAt.Equal(op.UpdatedAt) {
				t.Errorf("a hung operation not leased was touched: %+v", got)
			}
		}
		open()
		stop()
		t.Logf("hung target: %d lookups received, at most %d at once, %d of %d operations leased", received, most, leased, hung)
		if ended != 0 {
			t.Errorf("%d of the hung target's lookups ended before the healthy target was resolved", ended)
		}
		if most > limit || received != limit || leased != limit {
			t.Errorf("the hung target had %d lookups at once (%d in all, %d operations leased), want at most its limit %d",
				most, received, leased, limit)
		}
	})
}

// A tenant's endpoint that hangs holds only its own delivery slots: the
// other tenant's notifications are all delivered while every request to
// the hung endpoint is still held, and the hung endpoint never has more
// than PerEndpoint of them at once. Before, the notifier claimed a batch
// across tenants and waited for all of it, so the healthy tenant's next
// batch waited for the hung endpoint's requests to be cut off.
func TestNotifier_HungEndpointHoldsOnlyItsSlots(t *testing.T) {
	t.Parallel()
	const healthy, hung, limit = 10, 6, 2
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "A"}, nil)
		held, fine := newCBReceiver(t), newCBReceiver(t)
		held.set(func(rc *cbReceiver) { rc.hang = true })
		r.withCallbacks("acme", held)
		r.withCallbacks("globex", fine)
		r.confirmed(append(repeat("acme", hung), repeat("globex", healthy)...)...)
		nt := r.notifier(r.store, nil, nil)
		// A window of a minute: only the test's end cuts a hung request off.
		nt.Workers, nt.PerEndpoint, nt.Lease = 4, limit, 2*time.Minute
		stop := r.start(nt)
		r.waitFor("the healthy endpoint's acknowledgements", fine.ackedAll(healthy))
		r.waitFor("the hung endpoint's slots taken", func() bool { return len(held.requests()) >= limit })
		time.Sleep(100 * time.Millisecond) // room for a request that should not come
		reqs := held.requests()
		// Let the held requests go, and answer any later one at once.
		held.set(func(rc *cbReceiver) { rc.hang = false })
		held.srv.CloseClientConnections()
		stop()
		ended := 0
		for _, req := range reqs {
			if !req.end.IsZero() {
				ended++
			}
		}
		t.Logf("hung endpoint: %d requests, %d ended, while %d notifications were delivered elsewhere", len(reqs), ended, healthy)
		if ended != 0 || len(reqs) != limit {
			t.Errorf("the hung endpoint got %d requests (%d ended) before the healthy one was done, want %d held", len(reqs), ended, limit)
		}
	})
}
