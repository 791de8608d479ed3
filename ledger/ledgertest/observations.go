package ledgertest

import (
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"settle/ledger"
)

// RunObservations checks ledger.ObservationStore: what a process serving
// no metrics records is drained once, in order, by exactly one drainer,
// and goes with its tenant's erasure.
func RunObservations(t *testing.T, h Harness) {
	t.Run("RecordAndDrain", func(t *testing.T) { testObservationsDrain(t, h) })
	t.Run("Recorder", func(t *testing.T) { testObservationsRecorder(t, h) })
	t.Run("ConcurrentDrainers", func(t *testing.T) { testObservationsConcurrent(t, h) })
	t.Run("EraseTenant", func(t *testing.T) { testObservationsErase(t, h) })
}

func observationsOf(t *testing.T, s ledger.Store) ledger.ObservationStore {
	t.Helper()
	o, ok := s.(ledger.ObservationStore)
	if !ok {
		t.Fatal("store does not implement ledger.ObservationStore")
	}
	return o
}

// lines is c as take writes it, one line per transition or refusal, in
// c's order.
func lines(c ledger.Commit) []string {
	var out []string
	for _, t := range c.Transitions {
		out = append(out, fmt.Sprintf("%s/%s %s→%s %s %s", t.Tenant, t.OperationID, t.From, t.To, t.Target,
			t.At.UTC().Format(time.RFC3339Nano)))
	}
	for _, tenant := range c.Refused {
		out = append(out, "refused "+tenant)
	}
	return out
}

func testObservationsDrain(t *testing.T, h Harness) {
	f := setup(t, h)
	store := observationsOf(t, f.store)
	if _, err := store.DrainObservations(f.ctx, 0); ledger.ErrorCode(err) != ledger.EInvalid {
		t.Fatalf("limit 0: %v, want EInvalid", err)
	}
	if c, err := store.DrainObservations(f.ctx, 10); err != nil || c.Len() != 0 {
		t.Fatalf("empty: %+v %v", c, err)
	}
	if err := store.RecordObservations(f.ctx, ledger.Commit{}); err != nil {
		t.Fatalf("nothing to record: %v", err)
	}
	at := f.clk.Now().Add(-time.Minute)
	first := ledger.Commit{Transitions: []ledger.Transition{
		{Tenant: "acme", OperationID: "op-1", Target: "payments", From: "", To: ledger.Prepared, At: at},
		{Tenant: "acme", OperationID: "op-1", Target: "payments", From: ledger.Prepared, To: ledger.InFlight, At: at.Add(time.Second)},
	}, Refused: []string{"globex"}}
	second := ledger.Commit{Transitions: []ledger.Transition{
		{Tenant: "globex", OperationID: "op-2", Target: "mail", From: ledger.Escalated, To: ledger.Succeeded, At: at.Add(2 * time.Second)},
	}}
	for _, c := range []ledger.Commit{first, second} {
		if err := store.RecordObservations(f.ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	// Drained oldest first, in batches of at most the limit, each once.
	got, err := store.DrainObservations(f.ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := ledger.Commit{Transitions: first.Transitions}
	if g, w := strings.Join(lines(got), "\n"), strings.Join(lines(want), "\n"); g != w {
		t.Fatalf("first batch:\n%s\nwant\n%s", g, w)
	}
	got, err = store.DrainObservations(f.ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	want = ledger.Commit{Transitions: second.Transitions, Refused: first.Refused}
	if g, w := strings.Join(lines(got), "\n"), strings.Join(lines(want), "\n"); g != w {
		t.Fatalf("second batch:\n%s\nwant\n%s", g, w)
	}
	if c, err := store.DrainObservations(f.ctx, 10); err != nil || c.Len() != 0 {
		t.Fatalf("drained twice: %v %v", lines(c), err)
	}
}

// testObservationsRecorder makes ledger.Recorder a store's observer, as
// the CLI does, and finds each committed transition stored once.
func testObservationsRecorder(t *testing.T, h Harness) {
	f := setup(t, h)
	store := observationsOf(t, f.store)
	f.store.(ledger.Observable).SetObserver(ledger.Recorder{Store: store, Log: slog.New(slog.DiscardHandler)})
	n := f.newOp("acme")
	op, _, err := f.store.Create(f.ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	claimed, err := f.store.Claim(f.ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	done := f.record(claimed, ledger.InFlight, ledger.Succeeded)
	conflict := n
	conflict.Payload = []byte(`{"amount": 1, "currency": "EUR"}`)
	if _, _, err := f.store.Create(f.ctx, conflict); ledger.ErrorCode(err) != ledger.EPayloadConflict {
		t.Fatalf("conflict: %v", err)
	}
	got, err := store.DrainObservations(f.ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		fmt.Sprintf("%s %s→%s", op.Tenant+"/"+op.ID, "", ledger.Prepared),
		fmt.Sprintf("%s %s→%s", op.Tenant+"/"+op.ID, ledger.Prepared, ledger.InFlight),
		fmt.Sprintf("%s %s→%s", op.Tenant+"/"+op.ID, ledger.InFlight, ledger.Succeeded),
		"refused acme",
	}
	var short []string
	for _, l := range lines(got) {
		fs := strings.Fields(l)
		if len(fs) > 2 {
			if fs[2] != "payments" {
				t.Errorf("%s: target %s, want payments", l, fs[2])
			}
			fs = fs[:2]
		}
		short = append(short, strings.Join(fs, " "))
	}
	if g, w := strings.Join(short, "\n"), strings.Join(want, "\n"); g != w {
		t.Fatalf("recorded:\n%s\nwant\n%s", g, w)
	}
	if last := got.Transitions[len(got.Transitions)-1]; !last.At.Equal(done.UpdatedAt) {
		t.Fatalf("outcome at %s, want %s", last.At, done.UpdatedAt)
	}
}

// testObservationsConcurrent drains one backlog from several stores over
// the same database at once: every row reaches exactly one drainer.
func testObservationsConcurrent(t *testing.T, h Harness) {
	f := setup(t, h)
	const rows = 300
	var c ledger.Commit
	for i := range rows {
		c.Transitions = append(c.Transitions, ledger.Transition{Tenant: "acme", OperationID: fmt.Sprintf("op-%03d", i),
			Target: "payments", From: ledger.Prepared, To: ledger.InFlight, At: f.clk.Now()})
	}
	if err := observationsOf(t, f.store).RecordObservations(f.ctx, c); err != nil {
		t.Fatal(err)
	}
	drainers := []ledger.ObservationStore{observationsOf(t, f.store)}
	for range 3 {
		s := f.store
		if h.Sibling != nil {
			s = h.Sibling(t, f.store, f.clk.Now)
		}
		drainers = append(drainers, observationsOf(t, s))
	}
	var (
		mu   sync.Mutex
		seen = map[string]int{}
		wg   sync.WaitGroup
		errs = make(chan error, len(drainers))
	)
	for _, d := range drainers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				got, err := d.DrainObservations(f.ctx, 7)
				if err != nil {
					errs <- err
					return
				}
				if got.Len() == 0 {
					return
				}
				mu.Lock()
				for _, t := range got.Transitions {
					seen[t.OperationID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var twice []string
	for id, n := range seen {
		if n != 1 {
			twice = append(twice, fmt.Sprintf("%s×%d", id, n))
		}
	}
	sort.Strings(twice)
	if len(seen) != rows || len(twice) > 0 {
		t.Fatalf("drained %d distinct rows of %d; more than once: %v", len(seen), rows, twice)
	}
}

func testObservationsErase(t *testing.T, h Harness) {
	f := setup(t, h)
	store := observationsOf(t, f.store)
	at := f.clk.Now()
	if err := store.RecordObservations(f.ctx, ledger.Commit{Transitions: []ledger.Transition{
		{Tenant: "acme", OperationID: "op-1", Target: "payments", From: ledger.Prepared, To: ledger.InFlight, At: at},
		{Tenant: "globex", OperationID: "op-2", Target: "payments", From: ledger.Prepared, To: ledger.InFlight, At: at},
	}, Refused: []string{"acme", "globex"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.(ledger.TenantEraser).EraseTenant(f.ctx, "acme", false); err != nil {
		t.Fatal(err)
	}
	got, err := store.DrainObservations(f.ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"globex/op-2 PREPARED→IN_FLIGHT payments " + at.UTC().Format(time.RFC3339Nano), "refused globex"}
	if g, w := strings.Join(lines(got), "\n"), strings.Join(want, "\n"); g != w {
		t.Fatalf("after acme's erasure:\n%s\nwant\n%s", g, w)
	}
}
