package ledgertest

import (
	"context"
	"sync"
	"testing"

	"settle/ledger"
)

// created is one answer of a concurrent Create.
type created struct {
	op      ledger.Operation
	created bool
	err     error
}

// createAll runs Create of every n at once, one goroutine each, and
// returns the answers in ns's order.
func (f *fixture) createAll(ctx context.Context, ns []ledger.NewOperation) []created {
	out := make([]created, len(ns))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, n := range ns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			op, ok, err := f.store.Create(ctx, n)
			out[i] = created{op, ok, err}
		}()
	}
	close(start)
	wg.Wait()
	return out
}

// wantCreated fails unless a was created, with its one creation event.
func (f *fixture) wantCreated(a created) {
	f.t.Helper()
	if a.err != nil || !a.created {
		f.t.Fatalf("create: created=%v err=%v", a.created, a.err)
	}
	evs, err := f.store.Events(f.ctx, a.op.Tenant, a.op.ID)
	if err != nil || len(evs) != 1 || evs[0].From != "" || evs[0].To != ledger.Prepared {
		f.t.Fatalf("events of %s: %+v %v", a.op.ID, evs, err)
	}
	sameOp(f.t, a.op, f.get(a.op))
}

// testGroupCommit: concurrent creations are coalesced into group commits
// (ledger.Ledger.Create) and each is still decided as if it were alone —
// created once with its event, an existing intent returned, a changed
// payload refused and recorded, a row the database refuses failing only
// itself — and told to the observer once.
func testGroupCommit(t *testing.T, h Harness) {
	t.Run("ManyConcurrent", func(t *testing.T) {
		f := setup(t, h)
		obs := &observed{}
		f.store.(ledger.Observable).SetObserver(obs)
		var ns []ledger.NewOperation
		for i := range 200 {
			ns = append(ns, f.newOp([]string{"acme", "globex", "initech"}[i%3]))
		}
		answers := f.createAll(f.ctx, ns)
		told := map[string]int{}
		widest := 0
		obs.mu.Lock()
		defer obs.mu.Unlock()
		for _, c := range obs.commits {
			widest = max(widest, len(c.Transitions))
			for _, tr := range c.Transitions {
				told[tr.OperationID]++
			}
		}
		for _, a := range answers {
			f.wantCreated(a)
			if told[a.op.ID] != 1 {
				t.Fatalf("the observer was told of %s's creation %d times", a.op.ID, told[a.op.ID])
			}
		}
		if len(told) != len(ns) {
			t.Fatalf("the observer was told of %d creations, want %d", len(told), len(ns))
		}
		if widest < 2 {
			t.Errorf("200 concurrent creations were committed one by one (%d commits)", len(obs.commits))
		}
	})

	t.Run("SameIntent", func(t *testing.T) {
		f := setup(t, h)
		n := f.newOp("acme")
		ns := make([]ledger.NewOperation, 32)
		for i := range ns {
			ns[i] = n
		}
		answers := f.createAll(f.ctx, ns)
		var first created
		winners := 0
		for _, a := range answers {
			if a.err != nil {
				t.Fatal(a.err)
			}
			if a.created {
				winners++
				first = a
			}
		}
		if winners != 1 {
			t.Fatalf("%d of 32 creations of one intent created it, want 1", winners)
		}
		f.wantCreated(first)
		for _, a := range answers {
			if a.op.ID != first.op.ID {
				t.Fatalf("a creation of the intent got %s, want %s", a.op.ID, first.op.ID)
			}
		}
		if c, _ := f.store.PayloadConflicts(f.ctx, "acme", ledger.Since(f.clk.Now().AddDate(-1, 0, 0))); c != 0 {
			t.Fatalf("payload conflicts = %d, want 0", c)
		}
	})

	// A changed payload of an existing intent, and two payloads of one new
	// intent, among fresh creations: each conflict is refused and recorded,
	// the rest created.
	t.Run("PayloadConflict", func(t *testing.T) {
		f := setup(t, h)
		existing := f.newOp("acme")
		if _, _, err := f.store.Create(f.ctx, existing); err != nil {
			t.Fatal(err)
		}
		changed := existing
		changed.Payload = []byte(`{"amount": 1}`)
		fresh := f.newOp("acme")
		rival := fresh
		rival.Payload = []byte(`{"amount": 2}`)
		ns := []ledger.NewOperation{changed, fresh, rival}
		for range 29 {
			ns = append(ns, f.newOp("acme"))
		}
		answers := f.createAll(f.ctx, ns)
		wantCode(t, answers[0].err, ledger.EPayloadConflict)
		if (answers[1].err == nil) == (answers[2].err == nil) {
			t.Fatalf("two payloads of one new intent: %v and %v, want one created and one refused",
				answers[1].err, answers[2].err)
		}
		for _, a := range answers[1:3] {
			if a.err != nil {
				wantCode(t, a.err, ledger.EPayloadConflict)
			} else {
				f.wantCreated(a)
			}
		}
		for _, a := range answers[3:] {
			f.wantCreated(a)
		}
		if c, _ := f.store.PayloadConflicts(f.ctx, "acme", ledger.Since(f.clk.Now().AddDate(-1, 0, 0))); c != 2 {
			t.Fatalf("payload conflicts = %d, want 2", c)
		}
	})

	// A row the database refuses fails its batch's statement; the batch's
	// other rows are then created one by one.
	t.Run("RefusedByDatabase", func(t *testing.T) {
		if h.RefuseIntentRef == nil {
			t.Skip("the harness cannot make its database refuse a row")
		}
		f := setup(t, h)
		h.RefuseIntentRef(t, f.store, "refused")
		var ns []ledger.NewOperation
		for range 32 {
			ns = append(ns, f.newOp("acme"))
		}
		ns[7].IntentRef = "refused"
		answers := f.createAll(f.ctx, ns)
		if answers[7].err == nil {
			t.Fatal("the refused row reports no error")
		}
		if _, err := f.store.GetByIntent(f.ctx, "acme", "charge", "refused"); ledger.ErrorCode(err) != ledger.ENotFound {
			t.Fatalf("the refused row: %v, want not found", err)
		}
		for i, a := range answers {
			if i != 7 {
				f.wantCreated(a)
			}
		}
	})

	// A caller that has given up before its batch is written is not
	// written at all.
	t.Run("CancelledBeforeBatch", func(t *testing.T) {
		f := setup(t, h)
		ctx, cancel := context.WithCancel(f.ctx)
		cancel()
		n := f.newOp("acme")
		if _, _, err := f.store.Create(ctx, n); err == nil {
			t.Fatal("a cancelled creation reports no error")
		}
		if _, err := f.store.GetByIntent(f.ctx, n.Tenant, n.Type, n.IntentRef); ledger.ErrorCode(err) != ledger.ENotFound {
			t.Fatalf("a cancelled creation was written: %v", err)
		}
		f.wantCreated(f.createAll(f.ctx, []ledger.NewOperation{n})[0])
	})
}
