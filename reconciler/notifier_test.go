package reconciler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strconv"
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
)

// cbReceiver is a client's callback endpoint on loopback. It checks every
// request's signature and records it; its fields script the answers.
type cbReceiver struct {
	t      *testing.T
	srv    *httptest.Server
	secret []byte

	mu       sync.Mutex
	fail     int           // answer 500 to this many more requests
	redirect int           // answer 307 to this many more requests
	drop     bool          // close the connection without an answer
	hang     bool          // hold each request until the sender gives up
	delay    time.Duration // answer after this long, or when the sender gives up
	got      []cbRequest
	strays   int // requests to any other path
}

type cbRequest struct {
	at      time.Time
	eventID string
	sig     string
	sigErr  error
	body    []byte
	status  int       // what was answered; 0 when nothing was
	end     time.Time // when the request ended, answered or given up
}

func newCBReceiver(t *testing.T) *cbReceiver {
	secret, err := ledger.NewCallbackSecret()
	if err != nil {
		t.Fatal(err)
	}
	rc := &cbReceiver{t: t, secret: []byte(secret)}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

// url is the endpoint; its query token must never show up in logs.
func (rc *cbReceiver) url() string { return rc.srv.URL + "/hooks/settle?token=sekrit-query-token" }

func (rc *cbReceiver) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/hooks/settle" {
		rc.mu.Lock()
		rc.strays++
		rc.mu.Unlock()
		return
	}
	body, _ := io.ReadAll(r.Body)
	sig := r.Header.Get(reconciler.CallbackSignatureHeader)
	req := cbRequest{at: time.Now(), eventID: r.Header.Get(reconciler.CallbackEventIDHeader), body: body, sig: sig,
		sigErr: target.Verify(sig, body, rc.secret, time.Minute, time.Now())}
	rc.mu.Lock()
	hang, drop, delay := rc.hang, rc.drop, rc.delay
	switch {
	case hang || drop:
	case rc.redirect > 0:
		rc.redirect--
		req.status = http.StatusTemporaryRedirect
	case rc.fail > 0:
		rc.fail--
		req.status = http.StatusInternalServerError
	default:
		req.status = http.StatusNoContent
	}
	rc.got = append(rc.got, req)
	i := len(rc.got) - 1
	rc.mu.Unlock()
	defer func() {
		rc.mu.Lock()
		rc.got[i].end = time.Now()
		rc.mu.Unlock()
	}()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	switch {
	case hang:
		<-r.Context().Done()
	case drop:
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	case req.status == http.StatusTemporaryRedirect:
		http.Redirect(w, r, "/elsewhere", req.status)
	default:
		w.WriteHeader(req.status)
	}
}

func (rc *cbReceiver) set(fn func(rc *cbReceiver)) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	fn(rc)
}

func (rc *cbReceiver) requests() []cbRequest {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

// acked counts the 2xx answers per Settle-Event-Id.
func (rc *cbReceiver) acked() map[string]int {
	out := map[string]int{}
	for _, req := range rc.requests() {
		if req.status >= 200 && req.status < 300 {
			out[req.eventID]++
		}
	}
	return out
}

func (rc *cbReceiver) ackedAll(n int) func() bool {
	return func() bool { return len(rc.acked()) >= n }
}

// withCallbacks points tenant's callbacks at rc.
func (r *rig) withCallbacks(tenant string, rc *cbReceiver) ledger.CallbackStore {
	r.t.Helper()
	cs, ok := r.store.(ledger.CallbackStore)
	if !ok {
		r.t.Fatal("store does not implement ledger.CallbackStore")
	}
	admin := ledger.NewContextWithActor(r.ctx, ledger.Actor{Subject: "cli:test", Name: "test", Role: "admin"})
	if err := cs.SetCallback(admin, tenant, rc.url(), rc.secret, time.Now()); err != nil {
		r.t.Fatal(err)
	}
	return cs
}

// notifier returns a fast notifier over s that logs into logs, if given.
func (r *rig) notifier(s ledger.Store, reg prometheus.Registerer, logs io.Writer) *reconciler.Notifier {
	log := r.log
	if logs != nil {
		log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return &reconciler.Notifier{Store: s, Callbacks: &countingCallbacks{CallbackStore: s.(ledger.CallbackStore)},
		Contracts: r.set, Log: log, Metrics: reg, TenantLabels: true, Batch: 5, Workers: 4, Tick: 20 * time.Millisecond, Lease: 3 * time.Second, // outlasts a request on a loaded -race run
		MinBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
		// The test receivers are plain http on loopback.
		Policy: ledger.CallbackPolicy{AllowHTTP: true, Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}
}

// cbNotification returns op's one notification.
func (r *rig) cbNotification(op ledger.Operation) ledger.Notification {
	r.t.Helper()
	ns, err := r.store.(ledger.CallbackStore).Notifications(r.ctx, op.Tenant, op.ID)
	if err != nil || len(ns) != 1 {
		r.t.Fatalf("notifications of %s: %+v, %v", op.ID, ns, err)
	}
	return ns[0]
}

// cbCounter reads a settle_callbacks_* counter of tenant acme.
func cbCounter(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if mf.GetName() == name && l.GetName() == "tenant" && l.GetValue() == "acme" {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// The endpoint gets a body signed with the tenant's secret that says what
// the client API says about the operation, and never its payload; once it
// acknowledges, nobody sends it again.
func TestNotifier_SignedWithoutPayload(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "A"}, nil)
		rc := newCBReceiver(t)
		r.withCallbacks("acme", rc)
		op := r.confirmed("acme")[0]
		escalated := r.create("acme", "order-escalated", 700)
		claimed, err := r.store.Claim(r.ctx, escalated.Tenant, escalated.ID, escalated.PayloadHash, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.store.Record(r.ctx, ledger.Outcome{Tenant: "acme", OperationID: escalated.ID,
			Fence: claimed.Fence, From: ledger.InFlight, To: ledger.Escalated, Actor: ledger.ActorExecutor}); err != nil {
			t.Fatal(err)
		}
		reg := prometheus.NewRegistry()
		r.runUntil("two acknowledgements", rc.ackedAll(2), r.notifier(r.store, reg, nil))

		byOp := map[string]map[string]any{}
		for _, req := range rc.requests() {
			if req.sigErr != nil {
				t.Fatalf("signature: %v", req.sigErr)
			}
			if target.Verify(req.sig, req.body, []byte("scs_wrong"), time.Minute, time.Now()) == nil {
				t.Fatal("the signature verifies with another secret")
			}
			for _, leak := range []string{"amount", "EUR", "payload", "metadata", op.RemoteKey} {
				if bytes.Contains(req.body, []byte(leak)) {
					t.Fatalf("body carries %q: %s", leak, req.body)
				}
			}
			var m struct {
				Event     string         `json:"event"`
				Operation map[string]any `json:"operation"`
				SentAt    time.Time      `json:"sent_at"`
			}
			dec := json.NewDecoder(bytes.NewReader(req.body))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&m); err != nil || m.Event != reconciler.CallbackEvent || m.SentAt.IsZero() {
				t.Fatalf("body %s: %v", req.body, err)
			}
			byOp[m.Operation["operation_id"].(string)] = m.Operation
			n := r.cbNotification(ledger.Operation{Tenant: "acme", ID: m.Operation["operation_id"].(string)})
			if req.eventID != strconv.FormatInt(n.ID, 10) {
				t.Fatalf("Settle-Event-Id %q, want %d", req.eventID, n.ID)
			}
		}
		got := byOp[op.ID]
		want := map[string]any{"operation_id": op.ID, "tenant": "acme", "target": "payments",
			"operation_type": "charge", "intent_ref": op.IntentRef, "state": "SUCCEEDED", "status": "Confirmed",
			"remote_ref": op.RemoteRef, "updated_at": op.UpdatedAt.Format(time.RFC3339Nano)}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("operation\n got %v\nwant %v", got, want)
		}
		esc := byOp[escalated.ID]
		if esc["state"] != "ESCALATED" || esc["status"] != "Under review by "+r.c.Owner.Team || esc["remote_ref"] != nil {
			t.Fatalf("escalated: %v", esc)
		}
		if n := r.cbNotification(op); n.DeliveredAt == nil || n.LastStatus != http.StatusNoContent || n.Attempts != 1 {
			t.Fatalf("after delivery: %+v", n)
		}
		if got := cbCounter(t, reg, "settle_callbacks_delivered_total"); got != 2 {
			t.Fatalf("delivered counter %v", got)
		}
		// Another replica, later: nothing to send.
		later := r.notifier(h.Sibling(t, r.store, time.Now), nil, nil)
		r.runUntil("a quiet while", quietFor(300*time.Millisecond, later), later)
		if n := len(rc.requests()); n != 2 {
			t.Fatalf("%d requests after the acknowledgements, want 2", n)
		}
	})
}

// countingCallbacks counts a notifier's claim passes.
type countingCallbacks struct {
	ledger.CallbackStore
	claims atomic.Int64
}

func (c *countingCallbacks) ClaimNotifications(ctx context.Context, n int, lease time.Duration, skipTenants ...string) ([]ledger.Notification, error) {
	ns, err := c.CallbackStore.ClaimNotifications(ctx, n, lease, skipTenants...)
	if err == nil {
		c.claims.Add(1)
	}
	return ns, err
}

// quietFor is a condition for a while in which nothing should be sent: it
// holds once d has passed and each notifier has claimed three more times
// than when quietFor was called, so that on a slow machine the notifiers
// have really looked (and the deliveries of a pass before the last have
// finished), not just been given the time to.
func quietFor(d time.Duration, nts ...*reconciler.Notifier) func() bool {
	end := time.Now().Add(d)
	from := make([]int64, len(nts))
	for i, nt := range nts {
		from[i] = nt.Callbacks.(*countingCallbacks).claims.Load()
	}
	return func() bool {
		for i, nt := range nts {
			if nt.Callbacks.(*countingCallbacks).claims.Load() < from[i]+3 {
				return false
			}
		}
		return time.Now().After(end)
	}
}

// A failing endpoint is retried with growing, jittered delays until it
// acknowledges, then never again. Logs and stored errors carry neither the
// secret nor the URL's token.
func TestNotifier_RetriesWithBackoffUntilAcknowledged(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "A"}, nil)
		rc := newCBReceiver(t)
		rc.set(func(rc *cbReceiver) { rc.fail, rc.redirect = 3, 1 })
		r.withCallbacks("acme", rc)
		op := r.confirmed("acme")[0]
		reg := prometheus.NewRegistry()
		var logs syncBuffer
		nt := r.notifier(r.store, reg, &logs)
		r.runUntil("acknowledgement", rc.ackedAll(1), nt)
		r.runUntil("a quiet while", quietFor(4*nt.MaxBackoff, nt), nt)

		reqs := rc.requests()
		if len(reqs) != 5 || reqs[4].status != http.StatusNoContent {
			t.Fatalf("%d requests, want 1 redirect + 3 failures + 1 success", len(reqs))
		}
		rc.set(func(rc *cbReceiver) {
			if rc.strays != 0 {
				t.Error("a redirect was followed")
			}
		})
		for i := 1; i < len(reqs); i++ {
			floor := time.Duration(0.75 * float64(min(nt.MinBackoff<<(i-1), nt.MaxBackoff)))
			if gap := reqs[i].at.Sub(reqs[i-1].at); gap < floor {
				t.Fatalf("attempt %d came %s after the previous, want at least %s", i+1, gap, floor)
			}
			if reqs[i].eventID != reqs[0].eventID {
				t.Fatal("the event id changed between retries")
			}
		}
		n := r.cbNotification(op)
		if n.Attempts != 5 || n.DeliveredAt == nil || n.LastStatus != http.StatusNoContent || n.LastError != "" {
			t.Fatalf("after delivery: %+v", n)
		}
		if f, d := cbCounter(t, reg, "settle_callbacks_failed_total"), cbCounter(t, reg, "settle_callbacks_delivered_total"); f != 4 || d != 1 {
			t.Fatalf("failed %v delivered %v, want 4 and 1", f, d)
		}
		out := logs.String()
		if !strings.Contains(out, "endpoint answered 500") {
			t.Fatalf("failures not logged:\n%s", out)
		}
		for _, secret := range []string{string(rc.secret), "sekrit-query-token", "amount"} {
			if strings.Contains(out, secret) {
				t.Fatalf("logs carry %q:\n%s", secret, out)
			}
		}
	})
}

// The test: callbacks survive a restart. The notifier stops after
// the transition and before any acknowledgement — the endpoint is down, it
// is stopped in the middle of a request, or it died right after claiming —
// and a new process on the same database delivers the notification, once.
func TestNotifier_SurvivesRestart(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		for _, c := range []struct {
			name string
			down func(rc *cbReceiver)
			stop func(r *rig, rc *cbReceiver)
		}{
			{"EndpointDown", func(rc *cbReceiver) { rc.drop = true }, stopAfterAttempt},
			{"StoppedMidRequest", func(rc *cbReceiver) { rc.hang = true }, stopAfterAttempt},
			{"DiedAfterClaim", nil, func(r *rig, rc *cbReceiver) {
				dead := r.h.Sibling(r.t, r.store, time.Now).(ledger.CallbackStore)
				if ns, err := dead.ClaimNotifications(r.ctx, 10, time.Second); err != nil || len(ns) != 1 {
					r.t.Fatalf("claim: %+v, %v", ns, err)
				}
			}},
		} {
			t.Run(c.name, func(t *testing.T) {
				r := newRig(t, h, sim.Config{Class: "A"}, nil)
				rc := newCBReceiver(t)
				if c.down != nil {
					rc.set(c.down)
				}
				r.withCallbacks("acme", rc)
				op := r.confirmed("acme")[0]
				// Before the stop, so before any claim it makes: a lease
				// taken in c.stop runs out no sooner than a lease's length
				// after this, however slowly the claim returns.
				stopping := time.Now()
				c.stop(r, rc)
				n := r.cbNotification(op)
				if n.DeliveredAt != nil || strings.Contains(n.LastError, "sekrit") ||
					(c.down != nil && (n.LastError == "" || n.Attempts == 0)) {
					t.Fatalf("before the restart: %+v (a stopped notifier records the attempt it made)", n)
				}

				// A new process: its own connections, its own notifier.
				rc.set(func(rc *cbReceiver) { rc.drop, rc.hang = false, false })
				nt := r.notifier(h.Sibling(t, r.store, time.Now), nil, nil)
				r.runUntil("delivery after the restart", rc.ackedAll(1), nt)
				r.runUntil("a quiet while", quietFor(500*time.Millisecond, nt), nt)
				reqs := rc.requests()
				if acked := rc.acked(); len(acked) != 1 || slices.Max(mapValues(acked)) != 1 ||
					reqs[len(reqs)-1].status != http.StatusNoContent {
					t.Fatalf("acknowledged %v in %d requests, want one notification acknowledged once, last", acked, len(reqs))
				}
				attempts := len(reqs)
				if c.down == nil {
					attempts++ // the dead process's claim
				}
				if n := r.cbNotification(op); n.DeliveredAt == nil || n.Attempts != attempts {
					t.Fatalf("after the restart: %+v, %d requests", n, len(reqs))
				}
				// (A millisecond of slack for the store's microsecond times.)
				if c.name == "DiedAfterClaim" && reqs[0].at.Sub(stopping) < time.Second-time.Millisecond {
					t.Fatalf("delivered %s after a claim with a 1s lease", reqs[0].at.Sub(stopping))
				}
			})
		}
	})
}

// stopAfterAttempt runs a notifier until the endpoint has seen a request,
// then stops it. A request in progress is let finish (here: time out) and
// its failure is recorded.
func stopAfterAttempt(r *rig, rc *cbReceiver) {
	r.runUntil("a delivery attempt", func() bool { return len(rc.requests()) > 0 },
		r.notifier(r.store, nil, nil))
}

// Two replicas' notifiers over one database deliver each notification
// exactly once.
func TestNotifier_TwoReplicasDeliverEachOnce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "A"}, nil)
		rc := newCBReceiver(t)
		r.withCallbacks("acme", rc)
		r.withCallbacks("globex", rc)
		const each = 15
		r.confirmed(repeat("acme", each)...)
		r.confirmed(repeat("globex", each)...)
		a, b := r.notifier(r.store, nil, nil), r.notifier(h.Sibling(t, r.store, time.Now), nil, nil)
		r.runUntil("every acknowledgement", rc.ackedAll(2*each), a, b)
		r.runUntil("a quiet while", quietFor(300*time.Millisecond, a, b), a, b)
		seen := map[string]int{}
		for _, req := range rc.requests() {
			seen[req.eventID]++
		}
		if len(seen) != 2*each || slices.Max(mapValues(seen)) != 1 {
			t.Fatalf("requests per event id: %v, want %d ids once each", seen, 2*each)
		}
	})
}

// A replica whose endpoint answers slowly never holds a notification past
// its claim: however long a batch takes, no other replica delivers a
// notification while this one still waits for an answer about it. (A POST
// cut off at the claim's window is delivered again later: at least once.)
func TestNotifier_SlowEndpointNoOverlappingDeliveries(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "A"}, nil)
		rc := newCBReceiver(t)
		rc.set(func(rc *cbReceiver) { rc.delay = 250 * time.Millisecond })
		r.withCallbacks("acme", rc)
		const n = 8
		r.confirmed(repeat("acme", n)...)
		a, b := r.notifier(r.store, nil, nil), r.notifier(h.Sibling(t, r.store, time.Now), nil, nil)
		for _, nt := range []*reconciler.Notifier{a, b} {
			// One worker and a batch of five: five answers of 250 ms
			// outlast half the 1 s lease, and before the window the last
			// of them ran past the whole of it.
			nt.Workers, nt.Batch = 1, 5
		}
		r.runUntil("every acknowledgement", rc.ackedAll(n), a, b)
		byID := map[string][]cbRequest{}
		for _, req := range rc.requests() {
			byID[req.eventID] = append(byID[req.eventID], req)
		}
		for id, reqs := range byID {
			for i := range reqs {
				for j := i + 1; j < len(reqs); j++ {
					if reqs[i].at.Before(reqs[j].end) && reqs[j].at.Before(reqs[i].end) {
						t.Errorf("event %s delivered twice at once: %s–%s and %s–%s", id,
							reqs[i].at.Format("15:04:05.000"), reqs[i].end.Format("15:04:05.000"),
							reqs[j].at.Format("15:04:05.000"), reqs[j].end.Format("15:04:05.000"))
					}
				}
			}
		}
	})
}

func mapValues(m map[string]int) []int {
	var out []int
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// syncBuffer is a bytes.Buffer safe for concurrent log writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
