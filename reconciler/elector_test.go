package reconciler_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/reconciler"
)

// leases wraps a replica's LeaderStore: it counts attempts, can fail them,
// and can skip the release, as a replica that dies does.
type leases struct {
	ledger.LeaderStore
	attempts  atomic.Int64
	failing   atomic.Bool
	noRelease bool
}

func (l *leases) AcquireLeader(ctx context.Context, duty, holder string, ttl time.Duration) (bool, error) {
	l.attempts.Add(1)
	if l.failing.Load() {
		return false, errors.New("connection refused")
	}
	return l.LeaderStore.AcquireLeader(ctx, duty, holder, ttl)
}

func (l *leases) ReleaseLeader(ctx context.Context, duty, holder string) error {
	if l.noRelease {
		return nil
	}
	return l.LeaderStore.ReleaseLeader(ctx, duty, holder)
}

// duty records which replicas run it, and how many at once.
type duty struct {
	mu               sync.Mutex
	running, most    int
	started, stopped chan string
}

func newDuty() *duty { return &duty{started: make(chan string, 16), stopped: make(chan string, 16)} }

func (d *duty) work(holder string) func(context.Context) error {
	return func(ctx context.Context) error {
		d.mu.Lock()
		d.running++
		d.most = max(d.most, d.running)
		d.mu.Unlock()
		d.started <- holder
		<-ctx.Done()
		d.mu.Lock()
		d.running--
		d.mu.Unlock()
		d.stopped <- holder
		return nil
	}
}

func (d *duty) concurrent() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.most
}

// replica is one Elector running in the background.
type replica struct {
	name   string
	leases *leases
	gauge  prometheus.Gauge
	stop   context.CancelFunc
	done   chan struct{}
}

func runElector(t *testing.T, name string, ls ledger.LeaderStore, d *duty, ttl time.Duration, crash bool) *replica {
	t.Helper()
	g := reconciler.NewLeaderGauge(prometheus.NewRegistry()).WithLabelValues("auditor")
	r := &replica{name: name, leases: &leases{LeaderStore: ls, noRelease: crash}, gauge: g, done: make(chan struct{})}
	e := &reconciler.Elector{Leases: r.leases, Duty: "auditor", Holder: name, Work: d.work(name),
		Log: slog.New(slog.DiscardHandler), Leading: g, TTL: ttl, Every: 20 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = func() { cancel(); <-r.done }
	go func() { defer close(r.done); _ = e.Run(ctx) }()
	t.Cleanup(r.stop)
	return r
}

func gaugeValue(t *testing.T, g prometheus.Gauge) float64 {
	t.Helper()
	var m dtoMetric
	if err := g.Write(&m.Metric); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}

func receive(t *testing.T, ch <-chan string, what string) string {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: not within 10s", what)
		return ""
	}
}

// waitAttempts waits until r has asked for the lease n more times: proof
// that it was free to take it over and did not.
func waitAttempts(t *testing.T, r *replica, n int64) {
	t.Helper()
	target := r.leases.attempts.Load() + n
	deadline := time.Now().Add(10 * time.Second)
	for r.leases.attempts.Load() < target {
		if time.Now().After(deadline) {
			t.Fatalf("%s made %d lease attempts, want %d", r.name, r.leases.attempts.Load(), target)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func noneStarted(t *testing.T, d *duty) {
	t.Helper()
	select {
	case h := <-d.started:
		t.Fatalf("%s started the duty while another replica leads it", h)
	default:
	}
}

func pair(t *testing.T, h ledgertest.Harness) (*ledgertest.Clock, ledger.LeaderStore, ledger.LeaderStore) {
	clk := ledgertest.NewClock()
	s := h.New(t, clk.Now)
	return clk, s.(ledger.LeaderStore), h.Sibling(t, s, clk.Now).(ledger.LeaderStore)
}

// Two replicas, each with its own connections: one runs the duty; the
// other keeps asking and does not. When the leader stops cleanly it
// releases the lease and the other takes over at its next attempt, with
// the store's clock standing still: no waiting for the expiry.
func TestElector_OneLeaderAtATime(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		t.Parallel()
		_, sa, sb := pair(t, h)
		d := newDuty()
		rs := map[string]*replica{
			"replica-a": runElector(t, "replica-a", sa, d, time.Minute, false),
			"replica-b": runElector(t, "replica-b", sb, d, time.Minute, false),
		}
		first := receive(t, d.started, "a leader")
		leader, other := rs[first], rs["replica-a"]
		if first == "replica-a" {
			other = rs["replica-b"]
		}
		waitAttempts(t, other, 5)
		noneStarted(t, d)
		if g, o := gaugeValue(t, leader.gauge), gaugeValue(t, other.gauge); g != 1 || o != 0 {
			t.Fatalf("settle_leader: leader %v, other %v; want 1 and 0", g, o)
		}

		leader.stop()
		if got := receive(t, d.stopped, "the leader's duty stopped"); got != first {
			t.Fatalf("%s stopped; want %s", got, first)
		}
		if got := receive(t, d.started, "the takeover"); got != other.name {
			t.Fatalf("%s took over; want %s", got, other.name)
		}
		if d.concurrent() != 1 {
			t.Fatalf("%d replicas ran the duty at once", d.concurrent())
		}
		if g, o := gaugeValue(t, leader.gauge), gaugeValue(t, other.gauge); g != 0 || o != 1 {
			t.Fatalf("settle_leader after the takeover: old %v, new %v; want 0 and 1", g, o)
		}
	})
}

// A leader that dies without releasing keeps the lease until it expires:
// the other replica takes over then, and not before.
func TestElector_TakeoverAfterExpiry(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		t.Parallel()
		clk, sa, sb := pair(t, h)
		d := newDuty()
		a := runElector(t, "replica-a", sa, d, 30*time.Second, true)
		if got := receive(t, d.started, "a leads"); got != "replica-a" {
			t.Fatalf("%s leads; want replica-a", got)
		}
		a.stop() // dies: its lease stays behind
		receive(t, d.stopped, "a's duty stopped")

		b := runElector(t, "replica-b", sb, d, 30*time.Second, false)
		waitAttempts(t, b, 5)
		noneStarted(t, d)
		clk.Advance(30*time.Second - time.Millisecond)
		waitAttempts(t, b, 3)
		noneStarted(t, d)

		clk.Advance(time.Millisecond)
		if got := receive(t, d.started, "b takes over"); got != "replica-b" {
			t.Fatalf("%s took over; want replica-b", got)
		}
	})
}

// A leader whose lease was taken (it paused past the expiry) stops the
// duty at its next renewal; one whose renewals fail stops it before its
// lease can have expired.
func TestElector_StopsWhenLeadershipIsLost(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		t.Parallel()
		t.Run("Taken", func(t *testing.T) {
			t.Parallel()
			clk, sa, sb := pair(t, h)
			d := newDuty()
			a := runElector(t, "replica-a", sa, d, 30*time.Second, false)
			receive(t, d.started, "a leads")
			// Renewals moved the expiry to the frozen clock + TTL; past it,
			// an intruder takes the lease.
			clk.Advance(30 * time.Second)
			if ok, err := sb.AcquireLeader(context.Background(), "auditor", "intruder", 30*time.Second); err != nil || !ok {
				t.Fatalf("intruder: %v, %v", ok, err)
			}
			if got := receive(t, d.stopped, "a's duty stopped"); got != "replica-a" {
				t.Fatal(got)
			}
			if gaugeValue(t, a.gauge) != 0 {
				t.Fatal("settle_leader still 1 after losing the lease")
			}
		})
		t.Run("RenewalsFail", func(t *testing.T) {
			t.Parallel()
			_, sa, _ := pair(t, h)
			d := newDuty()
			ttl := 300 * time.Millisecond
			a := runElector(t, "replica-a", sa, d, ttl, false)
			receive(t, d.started, "a leads")
			cut := time.Now()
			a.leases.failing.Store(true)
			receive(t, d.stopped, "a's duty stopped")
			if took := time.Since(cut); took >= ttl {
				t.Fatalf("the duty ran %s after renewals began to fail; the lease lasts %s", took, ttl)
			}
		})
	})
}

func TestElector_Work(t *testing.T) {
	t.Parallel()
	// A duty that returns by itself is started again while the replica
	// leads, one run at a time.
	clk := ledgertest.NewClock()
	s := storetest.SQLite().New(t, clk.Now).(ledger.LeaderStore)
	var runs atomic.Int64
	again := make(chan struct{}, 8)
	e := &reconciler.Elector{Leases: s, Duty: "digest", Holder: "replica-a", Log: slog.New(slog.DiscardHandler),
		TTL: time.Minute, Every: 5 * time.Millisecond,
		Work: func(ctx context.Context) error {
			if runs.Add(1) > 1 {
				again <- struct{}{}
			}
			return fmt.Errorf("run %d failed", runs.Load())
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = e.Run(ctx) }()
	select {
	case <-again:
	case <-time.After(10 * time.Second):
		t.Fatal("the duty was not started again")
	}
	cancel()
	<-done
	if _, err := s.CurrentLeader(context.Background(), "digest"); ledger.ErrorCode(err) != ledger.ENotFound {
		t.Fatalf("lease after a clean stop: %v; want released", err)
	}
}

// dtoMetric holds one metric written by a collector.
type dtoMetric struct{ dto.Metric }
