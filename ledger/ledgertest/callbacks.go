package ledgertest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"settle/ledger"
)

// RunCallbacks checks ledger.CallbackStore on the stores h makes: endpoint
// configuration, the notification queued with each transition to a state
// tenants are told about (and no other), claims and their leases, and
// delivery bookkeeping.
func RunCallbacks(t *testing.T, h Harness) {
	t.Run("Configure", func(t *testing.T) { testCallbackConfig(t, h) })
	t.Run("Enqueue", func(t *testing.T) { testCallbackEnqueue(t, h) })
	t.Run("Claim", func(t *testing.T) { testCallbackClaim(t, h) })
	t.Run("Mark", func(t *testing.T) { testCallbackMark(t, h) })
	t.Run("GiveUp", func(t *testing.T) { testCallbackGiveUp(t, h) })
	t.Run("DeliveryStatus", func(t *testing.T) { testCallbackDelivery(t, h) })
	t.Run("Atomicity", func(t *testing.T) { testCallbackAtomicity(t, h) })
}

// testCallbackDelivery checks the tenant's delivery status: the last
// attempt and the last success follow the marks, failures since the last
// success are counted, a late failure on a delivered notification and an
// older report are left out, pending notifications are counted, and a new
// endpoint starts afresh.
func testCallbackDelivery(t *testing.T, h Harness) {
	f := setup(t, h)
	cs := f.callbacks()
	wantCode(t, func() error { _, err := cs.CallbackDelivery(f.ctx, "acme"); return err }(), ledger.ENotFound)
	cs = f.withCallback("acme")
	status := func() ledger.CallbackDelivery {
		t.Helper()
		d, err := cs.CallbackDelivery(f.ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if d := status(); d.LastAttemptAt != nil || d.LastSuccessAt != nil || d.FailuresSinceSuccess != 0 || d.Pending != 0 {
		t.Fatalf("fresh endpoint: %+v", d)
	}
	a, b := f.settled("acme"), f.settled("acme")
	f.withCallback("globex")
	f.settled("globex") // another tenant's notification is not acme's
	if d := status(); d.Pending != 2 {
		t.Fatalf("pending = %d, want 2", d.Pending)
	}
	if err := cs.MarkFailed(f.ctx, a.ID, 503, "endpoint answered 503", f.clk.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	failedAt := f.clk.Now()
	d := status()
	if d.LastAttemptAt == nil || !d.LastAttemptAt.Equal(failedAt) || d.LastStatus != 503 ||
		d.LastError != "endpoint answered 503" || d.LastSuccessAt != nil || d.FailuresSinceSuccess != 1 {
		t.Fatalf("after a failure: %+v", d)
	}
	f.clk.Advance(time.Minute)
	okAt := f.clk.Now()
	if err := cs.MarkDelivered(f.ctx, b.ID, 204, okAt); err != nil {
		t.Fatal(err)
	}
	// A late failure report on the delivered notification, and a report
	// older than the last recorded, change nothing.
	if err := cs.MarkFailed(f.ctx, b.ID, 500, "late", okAt.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := cs.GiveUpNotification(f.ctx, a.ID, 0, "older", okAt.Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	d = status()
	if !d.LastAttemptAt.Equal(okAt) || d.LastStatus != 204 || d.LastError != "" || d.LastSuccessAt == nil ||
		!d.LastSuccessAt.Equal(okAt) || d.FailuresSinceSuccess != 0 || d.Pending != 0 {
		t.Fatalf("after a success: %+v", d)
	}
	f.clk.Advance(time.Minute)
	if err := cs.SetCallback(f.ctx, "acme", "https://hooks.example.com/new", cbSecret, f.clk.Now()); err != nil {
		t.Fatal(err)
	}
	if d := status(); d.LastAttemptAt != nil || d.LastSuccessAt != nil {
		t.Fatalf("a new endpoint keeps the old status: %+v", d)
	}
}

var cbSecret = []byte("scs_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG")

// callbacks returns the fixture's store as a CallbackStore.
func (f *fixture) callbacks() ledger.CallbackStore {
	f.t.Helper()
	cs, ok := f.store.(ledger.CallbackStore)
	if !ok {
		f.t.Fatal("store does not implement ledger.CallbackStore")
	}
	return cs
}

// withCallback configures a callback for tenant.
func (f *fixture) withCallback(tenant string) ledger.CallbackStore {
	f.t.Helper()
	cs := f.callbacks()
	if err := cs.SetCallback(f.ctx, tenant, "https://hooks.example.com/settle?k=1", cbSecret, f.clk.Now()); err != nil {
		f.t.Fatalf("set callback: %v", err)
	}
	return cs
}

func (f *fixture) notifications(op ledger.Operation) []ledger.Notification {
	f.t.Helper()
	ns, err := f.callbacks().Notifications(f.ctx, op.Tenant, op.ID)
	if err != nil {
		f.t.Fatalf("notifications: %v", err)
	}
	return ns
}

// settled drives a new operation of tenant to a final state and returns its
// one notification.
func (f *fixture) settled(tenant string) ledger.Notification {
	f.t.Helper()
	op := f.inState(tenant, ledger.Succeeded)
	ns := f.notifications(op)
	if len(ns) != 1 {
		f.t.Fatalf("notifications = %+v, want one", ns)
	}
	return ns[0]
}

func testCallbackConfig(t *testing.T, h Harness) {
	t.Run("SetGetRemove", func(t *testing.T) {
		f := setup(t, h)
		cs := f.withCallback("acme")
		first := f.clk.Now()
		got, err := cs.GetCallback(f.ctx, "acme")
		if err != nil || got.Tenant != "acme" || got.URL != "https://hooks.example.com/settle?k=1" ||
			string(got.Secret) != string(cbSecret) || !got.CreatedAt.Equal(first) || !got.UpdatedAt.Equal(first) {
			t.Fatalf("get = %+v, %v", got, err)
		}
		f.clk.Advance(time.Minute)
		secret2 := []byte(strings.Repeat("z", 40))
		if err := cs.SetCallback(f.ctx, "acme", "http://10.0.0.7:8080/hook", secret2, f.clk.Now()); err != nil {
			t.Fatal(err)
		}
		got, _ = cs.GetCallback(f.ctx, "acme")
		if got.URL != "http://10.0.0.7:8080/hook" || string(got.Secret) != string(secret2) ||
			!got.CreatedAt.Equal(first) || !got.UpdatedAt.Equal(f.clk.Now()) {
			t.Fatalf("replaced = %+v", got)
		}
		_, err = cs.GetCallback(f.ctx, "globex")
		wantCode(t, err, ledger.ENotFound)
		if err := cs.RemoveCallback(f.ctx, "acme"); err != nil {
			t.Fatal(err)
		}
		_, err = cs.GetCallback(f.ctx, "acme")
		wantCode(t, err, ledger.ENotFound)
		wantCode(t, cs.RemoveCallback(f.ctx, "acme"), ledger.ENotFound)

		// Both are human actions: refused without an actor, nothing
		// changed, and recorded (newest first) with one.
		wantCode(t, cs.SetCallback(context.Background(), "acme", "https://a.example/", secret2, f.clk.Now()), ledger.EInvalid)
		_, err = cs.GetCallback(f.ctx, "acme")
		wantCode(t, err, ledger.ENotFound)
		if err := cs.SetCallback(f.ctx, "acme", "https://a.example/", secret2, f.clk.Now()); err != nil {
			t.Fatal(err)
		}
		wantCode(t, cs.RemoveCallback(context.Background(), "acme"), ledger.EInvalid)
		if _, err := cs.GetCallback(f.ctx, "acme"); err != nil {
			t.Fatalf("a refused removal removed: %v", err)
		}
		acts, err := f.store.(ledger.ActionStore).Actions(f.ctx, ledger.ActionFilter{Tenant: "acme"})
		want := []ledger.ActionKind{ledger.ActionCallbackSet, ledger.ActionCallbackRemove, ledger.ActionCallbackSet, ledger.ActionCallbackSet}
		if err != nil || len(acts) != len(want) {
			t.Fatalf("actions %+v, %v", acts, err)
		}
		// Each names the endpoint set or removed (issue 25: recent changes
		// show the URL), never a secret.
		for i, a := range acts {
			if a.Kind != want[i] || a.Subject != testActor.Subject || a.Role != testActor.Role || a.Object != "acme" ||
				!strings.HasPrefix(a.Reason, "http") || strings.Contains(a.Reason, string(secret2)) {
				t.Fatalf("action %d: %+v, want %s with the URL", i, a, want[i])
			}
		}
	})

	t.Run("Invalid", func(t *testing.T) {
		f := setup(t, h)
		cs := f.callbacks()
		for name, c := range map[string]struct {
			tenant, url string
			secret      []byte
		}{
			"Tenant":      {"Not A Tenant", "https://h.example/x", cbSecret},
			"Empty":       {"acme", "", cbSecret},
			"Relative":    {"acme", "/hooks", cbSecret},
			"NoHost":      {"acme", "https:///hooks", cbSecret},
			"Scheme":      {"acme", "ftp://h.example/x", cbSecret},
			"JavaScript":  {"acme", "javascript:alert(1)", cbSecret},
			"UserInfo":    {"acme", "https://user:pw@h.example/x", cbSecret},
			"Fragment":    {"acme", "https://h.example/x#frag", cbSecret},
			"Control":     {"acme", "https://h.example/x\n", cbSecret},
			"TooLong":     {"acme", "https://h.example/" + strings.Repeat("a", 2100), cbSecret},
			"ShortSecret": {"acme", "https://h.example/x", []byte("short")},
			"SchemeOnly":  {"acme", "https:", cbSecret},
		} {
			err := cs.SetCallback(f.ctx, c.tenant, c.url, c.secret, f.clk.Now())
			if ledger.ErrorCode(err) != ledger.EInvalid {
				t.Errorf("%s: err = %v, want invalid", name, err)
			}
			if err != nil && strings.Contains(err.Error(), "pw@") {
				t.Errorf("%s: error quotes the URL: %v", name, err)
			}
		}
		_, err := cs.GetCallback(f.ctx, "acme")
		wantCode(t, err, ledger.ENotFound)
	})
}

func testCallbackEnqueue(t *testing.T, h Harness) {
	for _, to := range ledger.CallbackStates() {
		t.Run("FromInFlight/"+string(to), func(t *testing.T) {
			f := setup(t, h)
			f.withCallback("acme")
			op := f.record(f.claim("acme"), ledger.InFlight, to)
			ns := f.notifications(op)
			if len(ns) != 1 {
				t.Fatalf("notifications = %+v, want exactly one", ns)
			}
			n := ns[0]
			if n.Tenant != "acme" || n.OperationID != op.ID || n.State != to || n.Fence != op.Fence ||
				n.Attempts != 0 || n.DeliveredAt != nil || !n.CreatedAt.Equal(op.UpdatedAt) ||
				!n.NextAttemptAt.Equal(op.UpdatedAt) || n.ID == 0 {
				t.Fatalf("notification = %+v for %+v", n, op)
			}
		})
		t.Run("FromUnknown/"+string(to), func(t *testing.T) {
			f := setup(t, h)
			f.withCallback("acme")
			op := f.record(f.lease(f.unknown("acme")), ledger.Unknown, to)
			if ns := f.notifications(op); len(ns) != 1 || ns[0].State != to || ns[0].Fence != op.Fence {
				t.Fatalf("notifications = %+v", ns)
			}
		})
	}

	t.Run("NoCallbackNoNotification", func(t *testing.T) {
		f := setup(t, h)
		f.withCallback("acme")
		op := f.inState("globex", ledger.Succeeded)
		if ns := f.notifications(op); len(ns) != 0 {
			t.Fatalf("tenant without a callback: %+v", ns)
		}
	})

	t.Run("NotForOtherStates", func(t *testing.T) {
		f := setup(t, h)
		f.withCallback("acme")
		inFlight := f.claim("acme")
		toUnknown := f.record(f.claim("acme"), ledger.InFlight, ledger.Unknown)
		swept := f.unknown("acme") // IN_FLIGHT → UNKNOWN by the sweeper
		rescheduled := f.record(f.lease(swept), ledger.Unknown, ledger.Unknown)
		for _, op := range []ledger.Operation{f.create("acme"), inFlight, toUnknown, rescheduled} {
			if ns := f.notifications(f.get(op)); len(ns) != 0 {
				t.Fatalf("%s: %+v", f.get(op).State, ns)
			}
		}
	})

	t.Run("StaleFence", func(t *testing.T) {
		f := setup(t, h)
		f.withCallback("acme")
		op := f.claim("acme")
		o := outcome(op, ledger.InFlight, ledger.Succeeded)
		o.Fence--
		_, err := f.store.Record(f.ctx, o)
		wantCode(t, err, ledger.EStaleFence)
		if ns := f.notifications(op); len(ns) != 0 {
			t.Fatalf("stale verdict queued %+v", ns)
		}
	})

	t.Run("Batch", func(t *testing.T) {
		f := setup(t, h)
		f.withCallback("acme")
		ok1, ok2, stale, unknown := f.claim("acme"), f.claim("acme"), f.claim("acme"), f.claim("acme")
		bad := outcome(stale, ledger.InFlight, ledger.Succeeded)
		bad.Fence++
		errs, err := f.store.RecordBatch(f.ctx, []ledger.Outcome{
			outcome(ok1, ledger.InFlight, ledger.Succeeded), bad,
			outcome(ok2, ledger.InFlight, ledger.FailedTerminal), outcome(unknown, ledger.InFlight, ledger.Unknown),
		})
		if err != nil || errs[0] != nil || errs[1] == nil || errs[2] != nil || errs[3] != nil {
			t.Fatalf("batch: %v %v", errs, err)
		}
		for _, c := range []struct {
			op   ledger.Operation
			want int
		}{{ok1, 1}, {ok2, 1}, {stale, 0}, {unknown, 0}} {
			if ns := f.notifications(c.op); len(ns) != c.want {
				t.Fatalf("%s: %d notifications, want %d", c.op.ID, len(ns), c.want)
			}
		}
	})

	t.Run("RemoveDiscardsPending", func(t *testing.T) {
		f := setup(t, h)
		cs := f.withCallback("acme")
		delivered, pending := f.settled("acme"), f.settled("acme")
		if err := cs.MarkDelivered(f.ctx, delivered.ID, 200, f.clk.Now()); err != nil {
			t.Fatal(err)
		}
		if err := cs.RemoveCallback(f.ctx, "acme"); err != nil {
			t.Fatal(err)
		}
		got, err := cs.ClaimNotifications(f.ctx, 10, time.Minute)
		if err != nil || len(got) != 0 {
			t.Fatalf("claimed after removal: %+v, %v", got, err)
		}
		if ns, _ := cs.Notifications(f.ctx, "acme", pending.OperationID); len(ns) != 0 {
			t.Fatalf("pending notification kept: %+v", ns)
		}
		if ns, _ := cs.Notifications(f.ctx, "acme", delivered.OperationID); len(ns) != 1 {
			t.Fatalf("delivered notification lost: %+v", ns)
		}
	})
}

func testCallbackClaim(t *testing.T, h Harness) {
	t.Run("LeaseAndDueAgain", func(t *testing.T) {
		f := setup(t, h)
		cs := f.withCallback("acme")
		a, b := f.settled("acme"), f.settled("acme")
		first, err := cs.ClaimNotifications(f.ctx, 1, time.Minute)
		if err != nil || len(first) != 1 || first[0].ID != a.ID || first[0].Attempts != 1 ||
			!first[0].NextAttemptAt.Equal(f.clk.Now().Add(time.Minute)) {
			t.Fatalf("first claim = %+v, %v", first, err)
		}
		other := cs
		if h.Sibling != nil {
			other = h.Sibling(t, f.store, f.clk.Now).(ledger.CallbackStore)
		}
		second, err := other.ClaimNotifications(f.ctx, 10, time.Minute)
		if err != nil || len(second) != 1 || second[0].ID != b.ID {
			t.Fatalf("second claim = %+v, %v (a claimed row must not be handed out twice)", second, err)
		}
		if none, _ := cs.ClaimNotifications(f.ctx, 10, time.Minute); len(none) != 0 {
			t.Fatalf("claimed under lease: %+v", none)
		}
		f.clk.Advance(time.Minute)
		again, err := other.ClaimNotifications(f.ctx, 10, time.Minute)
		if err != nil || len(again) != 2 || again[0].Attempts != 2 || again[1].Attempts != 2 {
			t.Fatalf("after the lease: %+v, %v", again, err)
		}
		_, err = cs.ClaimNotifications(f.ctx, 0, time.Minute)
		wantCode(t, err, ledger.EInvalid)
		_, err = cs.ClaimNotifications(f.ctx, 1, 0)
		wantCode(t, err, ledger.EInvalid)
	})

	t.Run("FairAcrossTenants", func(t *testing.T) {
		f := setup(t, h)
		cs := f.withCallback("acme")
		f.withCallback("globex")
		for i := 0; i < 10; i++ {
			f.settled("acme")
		}
		f.clk.Advance(time.Second)
		g := f.settled("globex")
		got, err := cs.ClaimNotifications(f.ctx, 2, time.Minute)
		if err != nil || len(got) != 2 || (got[0].ID != g.ID && got[1].ID != g.ID) {
			t.Fatalf("claim = %+v, %v; want one of each tenant", got, err)
		}
	})

	// A notifier whose slots for a tenant's endpoint are all taken names
	// it: that tenant's due notifications stay due and untouched, and the
	// others are claimed, even behind an older backlog of the skipped one.
	t.Run("SkipsTenants", func(t *testing.T) {
		f := setup(t, h)
		cs := f.withCallback("acme")
		f.withCallback("globex")
		var held []ledger.Notification
		for i := 0; i < 5; i++ {
			held = append(held, f.settled("acme"))
		}
		f.clk.Advance(time.Second)
		g := f.settled("globex")
		got, err := cs.ClaimNotifications(f.ctx, 10, time.Minute, "acme")
		if err != nil || len(got) != 1 || got[0].ID != g.ID {
			t.Fatalf("claim = %+v, %v; want globex's one alone", got, err)
		}
		for _, n := range held {
			ns, err := cs.Notifications(f.ctx, "acme", n.OperationID)
			if err != nil || len(ns) != 1 || ns[0].Attempts != 0 || !ns[0].NextAttemptAt.Equal(n.NextAttemptAt) {
				t.Fatalf("a skipped tenant's notification was touched: %+v, %v", ns, err)
			}
		}
		if got, err := cs.ClaimNotifications(f.ctx, 10, time.Minute, "globex", "acme"); err != nil || len(got) != 0 {
			t.Fatalf("claimed %d with every tenant skipped, %v", len(got), err)
		}
		if got, err := cs.ClaimNotifications(f.ctx, 10, time.Minute, "globex"); err != nil || len(got) != len(held) {
			t.Fatalf("claimed %d of the %d skipped before, %v", len(got), len(held), err)
		}
	})

	t.Run("ConcurrentClaimersEachOnce", func(t *testing.T) {
		f := setup(t, h)
		f.withCallback("acme")
		f.withCallback("globex")
		const total = 120
		want := map[int64]bool{}
		for i := 0; i < total; i++ {
			want[f.settled([]string{"acme", "globex"}[i%2]).ID] = true
		}
		var (
			mu      sync.Mutex
			claimed = map[int64]int{}
			wg      sync.WaitGroup
			errs    []error
		)
		stores := f.stores(h)
		for g := 0; g < 8; g++ {
			cs := stores[g%len(stores)].(ledger.CallbackStore)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					got, err := cs.ClaimNotifications(f.ctx, 7+g, time.Hour)
					mu.Lock()
					if err != nil {
						errs = append(errs, err)
					}
					for _, n := range got {
						claimed[n.ID]++
					}
					mu.Unlock()
					if err != nil || len(got) == 0 {
						return
					}
				}
			}()
		}
		wg.Wait()
		if len(errs) > 0 {
			t.Fatal(errs[0])
		}
		for id := range want {
			if claimed[id] != 1 {
				t.Fatalf("notification %d claimed %d times", id, claimed[id])
			}
		}
		if len(claimed) != total {
			t.Fatalf("claimed %d, want %d", len(claimed), total)
		}
	})
}

func testCallbackMark(t *testing.T, h Harness) {
	t.Run("Delivered", func(t *testing.T) {
		f := setup(t, h)
		cs := f.withCallback("acme")
		n := f.settled("acme")
		if _, err := cs.ClaimNotifications(f.ctx, 10, time.Minute); err != nil {
			t.Fatal(err)
		}
		at := f.clk.Now()
		if err := cs.MarkDelivered(f.ctx, n.ID, 204, at); err != nil {
			t.Fatal(err)
		}
		f.clk.Advance(time.Hour)
		if err := cs.MarkDelivered(f.ctx, n.ID, 200, f.clk.Now()); err != nil {
			t.Fatal(err)
		}
		// A late failure report (a notifier whose lease ran out) must not
		// undo the acknowledgement.
		if err := cs.MarkFailed(f.ctx, n.ID, 500, "late", f.clk.Now()); err != nil {
			t.Fatal(err)
		}
		if got, _ := cs.ClaimNotifications(f.ctx, 10, time.Minute); len(got) != 0 {
			t.Fatalf("delivered notification claimed again: %+v", got)
		}
		ns, _ := cs.Notifications(f.ctx, "acme", n.OperationID)
		if len(ns) != 1 || ns[0].DeliveredAt == nil || !ns[0].DeliveredAt.Equal(at) || ns[0].LastError != "" {
			t.Fatalf("after delivery: %+v", ns)
		}
		wantCode(t, cs.MarkDelivered(f.ctx, n.ID+1000, 200, at), ledger.ENotFound)
	})

	t.Run("Failed", func(t *testing.T) {
		f := setup(t, h)
		cs := f.withCallback("acme")
		n := f.settled("acme")
		if _, err := cs.ClaimNotifications(f.ctx, 10, time.Minute); err != nil {
			t.Fatal(err)
		}
		next := f.clk.Now().Add(5 * time.Second)
		if err := cs.MarkFailed(f.ctx, n.ID, 503, strings.Repeat("é", 400), next); err != nil {
			t.Fatal(err)
		}
		ns, _ := cs.Notifications(f.ctx, "acme", n.OperationID)
		if len(ns) != 1 || ns[0].LastStatus != 503 || len(ns[0].LastError) > ledger.MaxCallbackError ||
			!strings.HasPrefix(ns[0].LastError, "éé") || !ns[0].NextAttemptAt.Equal(next) || ns[0].DeliveredAt != nil {
			t.Fatalf("after failure: %+v", ns)
		}
		if got, _ := cs.ClaimNotifications(f.ctx, 10, time.Minute); len(got) != 0 {
			t.Fatalf("claimed before its next attempt: %+v", got)
		}
		f.clk.Advance(5 * time.Second)
		got, err := cs.ClaimNotifications(f.ctx, 10, time.Minute)
		if err != nil || len(got) != 1 || got[0].Attempts != 2 || got[0].LastStatus != 503 {
			t.Fatalf("retry claim = %+v, %v", got, err)
		}
		if err := cs.MarkFailed(f.ctx, n.ID, 0, "connection refused", f.clk.Now()); err != nil {
			t.Fatal(err)
		}
		if ns, _ := cs.Notifications(f.ctx, "acme", n.OperationID); ns[0].LastStatus != 0 || ns[0].LastError != "connection refused" {
			t.Fatalf("transport failure: %+v", ns[0])
		}
		wantCode(t, cs.MarkFailed(f.ctx, n.ID+1000, 500, "x", next), ledger.ENotFound)
	})

	t.Run("OtherTenant", func(t *testing.T) {
		f := setup(t, h)
		cs := f.withCallback("acme")
		n := f.settled("acme")
		if ns, err := cs.Notifications(f.ctx, "globex", n.OperationID); err != nil || len(ns) != 0 {
			t.Fatalf("another tenant sees %+v, %v", ns, err)
		}
	})
}

// testCallbackAtomicity checks that a transition and its callback
// notification commit together: the harness makes the store's database
// reject inserts into the notification queue (each dialect its own way;
// PostgreSQL writes both in one statement, SQLite in one transaction), and
// then a record to SUCCEEDED must fail and leave the operation untouched.
func testCallbackAtomicity(t *testing.T, h Harness) {
	if h.RefuseCallbacks == nil {
		t.Skip("the harness cannot make its database refuse a notification")
	}
	f := setup(t, h)
	s := f.store
	cbs := s.(ledger.CallbackStore)
	secret := []byte("scs_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG")
	if err := cbs.SetCallback(f.ctx, "acme", "https://hooks.example.com/settle", secret, time.Now()); err != nil {
		t.Fatal(err)
	}
	op, _, err := s.Create(f.ctx, ledger.NewOperation{Tenant: "acme", Type: "charge", IntentRef: "order-1",
		Target: "payments", Payload: []byte(`{"amount":100}`)})
	if err != nil {
		t.Fatal(err)
	}
	if op, err = s.Claim(f.ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute); err != nil {
		t.Fatal(err)
	}
	h.RefuseCallbacks(t, s)
	_, err = s.Record(f.ctx, ledger.Outcome{Tenant: op.Tenant, OperationID: op.ID, Fence: op.Fence,
		From: ledger.InFlight, To: ledger.Succeeded, RemoteRef: "ch_1", Actor: ledger.ActorExecutor})
	if err == nil {
		t.Fatal("record succeeded although its notification could not be written")
	}
	got, err := s.Get(f.ctx, op.Tenant, op.ID)
	if err != nil || got.State != ledger.InFlight || got.Fence != op.Fence {
		t.Fatalf("after the failed record: %s fence %d, %v", got.State, got.Fence, err)
	}
	if evs, _ := s.Events(f.ctx, op.Tenant, op.ID); len(evs) != 2 {
		t.Fatalf("events = %+v, want creation and claim only", evs)
	}
}

// testCallbackGiveUp: a notification given up is never claimed again, is
// listed (for its tenant only) until retried, and a retry makes it due with
// its attempts counted afresh.
func testCallbackGiveUp(t *testing.T, h Harness) {
	f := setup(t, h)
	cs := f.withCallback("acme")
	f.withCallback("other")
	n := f.settled("acme")
	kept := f.settled("acme")
	f.settled("other")
	for range 3 {
		got, err := cs.ClaimNotifications(f.ctx, 10, time.Minute)
		if err != nil || len(got) != 3 {
			t.Fatalf("claim = %+v, %v", got, err)
		}
		for _, g := range got {
			if err := cs.MarkFailed(f.ctx, g.ID, 500, "status 500", f.clk.Now()); err != nil {
				t.Fatal(err)
			}
		}
	}
	at := f.clk.Now()
	if err := cs.GiveUpNotification(f.ctx, n.ID, 502, "status 502", at); err != nil {
		t.Fatal(err)
	}
	// Giving up twice keeps the first time.
	f.clk.Advance(time.Second)
	if err := cs.GiveUpNotification(f.ctx, n.ID, 502, "status 502", f.clk.Now()); err != nil {
		t.Fatal(err)
	}
	wantCode(t, cs.GiveUpNotification(f.ctx, n.ID+1000, 0, "x", at), ledger.ENotFound)
	f.clk.Advance(time.Hour)
	got, err := cs.ClaimNotifications(f.ctx, 10, time.Minute)
	if err != nil || len(got) != 2 {
		t.Fatalf("claim after give-up = %+v, %v", got, err)
	}
	for _, g := range got {
		if g.ID == n.ID {
			t.Fatalf("given-up notification claimed again: %+v", g)
		}
	}
	g, err := cs.GivenUpNotifications(f.ctx, "acme", 5)
	if err != nil || g.Count != 1 || len(g.Latest) != 1 {
		t.Fatalf("given up = %+v, %v", g, err)
	}
	l := g.Latest[0]
	if l.ID != n.ID || l.Attempts != 3 || l.LastStatus != 502 || l.LastError != "status 502" ||
		l.GaveUpAt == nil || !l.GaveUpAt.Equal(at) || l.DeliveredAt != nil {
		t.Fatalf("given-up row = %+v", l)
	}
	if g, err := cs.GivenUpNotifications(f.ctx, "other", 5); err != nil || g.Count != 0 || len(g.Latest) != 0 {
		t.Fatalf("other tenant's given up = %+v, %v", g, err)
	}
	// A give-up reported late, after another replica delivered, changes
	// nothing.
	if err := cs.MarkDelivered(f.ctx, kept.ID, 200, f.clk.Now()); err != nil {
		t.Fatal(err)
	}
	if err := cs.GiveUpNotification(f.ctx, kept.ID, 500, "late", f.clk.Now()); err != nil {
		t.Fatal(err)
	}
	if g, _ := cs.GivenUpNotifications(f.ctx, "acme", 5); g.Count != 1 {
		t.Fatalf("delivered notification counted as given up: %+v", g)
	}

	if k, err := cs.RetryGivenUp(f.ctx, "other", f.clk.Now()); err != nil || k != 0 {
		t.Fatalf("retry other = %d, %v", k, err)
	}
	f.clk.Advance(time.Hour)
	_, err = cs.RetryGivenUp(context.Background(), "acme", f.clk.Now())
	wantCode(t, err, ledger.EInvalid) // a retry is a person's action: no actor, nothing queued
	if g, _ := cs.GivenUpNotifications(f.ctx, "acme", 5); g.Count != 1 {
		t.Fatalf("a retry without an actor queued: %+v", g)
	}
	k, err := cs.RetryGivenUp(f.ctx, "acme", f.clk.Now())
	if err != nil || k != 1 {
		t.Fatalf("retry = %d, %v", k, err)
	}
	f.wantRetryAction(ledger.ActionCallbackRetry, "acme", "1 queued again")
	if g, _ := cs.GivenUpNotifications(f.ctx, "acme", 5); g.Count != 0 {
		t.Fatalf("given up after retry: %+v", g)
	}
	got, err = cs.ClaimNotifications(f.ctx, 10, time.Minute)
	var again *ledger.Notification
	for i := range got {
		if got[i].ID == n.ID {
			again = &got[i]
		}
	}
	if err != nil || again == nil || again.Attempts != 1 || again.GaveUpAt != nil {
		t.Fatalf("claim after retry = %+v, %v", got, err)
	}
}

// wantRetryAction checks that the tenant's latest action is a retry of
// kind by the fixture's actor, with reason.
func (f *fixture) wantRetryAction(kind ledger.ActionKind, tenant, reason string) {
	f.t.Helper()
	acts, err := f.store.(ledger.ActionStore).Actions(f.ctx, ledger.ActionFilter{Tenant: tenant, Limit: 1})
	if err != nil || len(acts) != 1 {
		f.t.Fatalf("actions = %+v, %v", acts, err)
	}
	if a := acts[0]; a.Kind != kind || a.Subject != testActor.Subject || a.Role != testActor.Role ||
		a.Object != tenant || a.Reason != reason {
		f.t.Fatalf("retry action = %+v, want %s by %s: %q", a, kind, testActor.Subject, reason)
	}
}
