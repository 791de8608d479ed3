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

// replica is one Elector running in the background on a clock of its
// own, which only the test moves: the replica makes one lease attempt when
// it starts and one more at each step, and none in between.
type replica struct {
	t      *testing.T
	name   string
	leases *leases
	gauge  prometheus.Gauge
	clock  *ledgertest.Clock
	stop   func()
}

// The test clock drives the loops.
var _ reconciler.Clock = (*ledgertest.Clock)(nil)

func runElector(t *testing.T, name string, ls ledger.LeaderStore, d *duty, ttl time.Duration, crash bool) *replica {
	t.Helper()
	g := reconciler.NewLeaderGauge(prometheus.NewRegistry()).WithLabelValues("auditor")
	r := &replica{t: t, name: name, leases: &leases{LeaderStore: ls, noRelease: crash}, gauge: g, clock: ledgertest.NewClock()}
	e := &reconciler.Elector{Leases: r.leases, Duty: "auditor", Holder: name, Work: d.work(name),
		Log: slog.New(slog.DiscardHandler), Leading: g, TTL: ttl, Clock: r.clock}
	r.stop = runInBackground(t, e.Run)
	r.clock.WaitTimers(t, 1) // the first attempt is over
	return r
}

// runInBackground runs run until the test ends or calls the stop it
// returns, which waits until run has returned; stop may be called twice.
func runInBackground(t *testing.T, run func(context.Context) error) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = run(ctx) }()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return stop
}

// step lets the replica make its next lease attempt and returns when the
// attempt and what it started or stopped are over: when the elector
// sleeps again.
func (r *replica) step() {
	r.t.Helper()
	if r.clock.Next() == 0 {
		r.t.Fatalf("%s: nothing waits on its clock", r.name)
	}
	r.clock.WaitTimers(r.t, 1)
}

func gaugeValue(t *testing.T, g prometheus.Gauge) float64 {
	t.Helper()
	var m dtoMetric
	if err := g.Write(&m.Metric); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}

// receive waits for what a duty's goroutine sends. The deadline is a
// safety net against a hang, never what decides a test: the elector has
// already started or stopped the duty when this is called.
func receive(t *testing.T, ch <-chan string, what string) string {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Minute):
		t.Fatalf("%s: not within a minute", what)
		return ""
	}
}

// steps makes r attempt n times, and checks each time that it did not
// lead: the lease was another's.
func steps(t *testing.T, r *replica, d *duty, n int) {
	t.Helper()
	before := r.leases.attempts.Load()
	for range n {
		r.step()
		if gaugeValue(t, r.gauge) != 0 {
			t.Fatalf("%s leads while another replica holds the lease", r.name)
		}
	}
	if got := r.leases.attempts.Load() - before; got != int64(n) {
		t.Fatalf("%s made %d lease attempts in %d steps", r.name, got, n)
	}
	noneStarted(t, d)
}

func noneStarted(t *testing.T, d *duty) {
	t.Helper()
	select {
	case h := <-d.started:
		t.Fatalf("%s started the duty while another replica leads it", h)
	default:
	}
}

// ttl is the leases' in these tests. An attempt may take TTL/6 of real
// time (Every/2), however the test clocks stand: a generous bound for a
// database query on a loaded machine.
const ttl = 3 * time.Minute

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
			"replica-a": runElector(t, "replica-a", sa, d, ttl, false),
			"replica-b": runElector(t, "replica-b", sb, d, ttl, false),
		}
		first := receive(t, d.started, "a leader")
		leader, other := rs[first], rs["replica-a"]
		if first == "replica-a" {
			other = rs["replica-b"]
		}
		if g := gaugeValue(t, leader.gauge); g != 1 {
			t.Fatalf("settle_leader of the leader: %v, want 1", g)
		}
		steps(t, other, d, 5)
		leader.step() // renews
		steps(t, other, d, 1)

		leader.stop()
		if got := receive(t, d.stopped, "the leader's duty stopped"); got != first {
			t.Fatalf("%s stopped; want %s", got, first)
		}
		other.step()
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
		a := runElector(t, "replica-a", sa, d, ttl, true)
		if got := receive(t, d.started, "a leads"); got != "replica-a" {
			t.Fatalf("%s leads; want replica-a", got)
		}
		a.stop() // dies: its lease stays behind
		receive(t, d.stopped, "a's duty stopped")

		b := runElector(t, "replica-b", sb, d, ttl, false)
		steps(t, b, d, 5)
		clk.Advance(ttl - time.Millisecond)
		steps(t, b, d, 3)

		clk.Advance(time.Millisecond)
		b.step()
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
			a := runElector(t, "replica-a", sa, d, ttl, false)
			receive(t, d.started, "a leads")
			// The lease expires at the frozen clock + TTL; there, with a
			// asleep until its next step, an intruder takes it.
			clk.Advance(ttl)
			if ok, err := sb.AcquireLeader(context.Background(), "auditor", "intruder", ttl); err != nil || !ok {
				t.Fatalf("intruder: %v, %v", ok, err)
			}
			if gaugeValue(t, a.gauge) != 1 {
				t.Fatal("a stopped leading before its next renewal")
			}
			a.step()
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
			a := runElector(t, "replica-a", sa, d, ttl, false)
			receive(t, d.started, "a leads")
			a.step() // a renewal: the lease now lasts until this attempt + TTL
			confirmed := a.clock.Now()
			a.leases.failing.Store(true)
			for gaugeValue(t, a.gauge) == 1 {
				if a.clock.Now().Sub(confirmed) >= ttl {
					t.Fatalf("the duty still ran %s after the last renewal; the lease lasts %s", a.clock.Now().Sub(confirmed), ttl)
				}
				a.step()
			}
			// Stopping returns once the duty has returned: it sent first.
			select {
			case <-d.stopped:
			default:
				t.Fatal("settle_leader is 0 while the duty still runs")
			}
			// The attempt that gave up may itself have taken Every/2 (TTL/6)
			// of real time: it too must end before the lease expires.
			if took := a.clock.Now().Sub(confirmed); took+ttl/6 >= ttl {
				t.Fatalf("the duty ran %s after the last renewal; the lease lasts %s, and an attempt may take %s", took, ttl, ttl/6)
			}
		})
	})
}

func TestElector_Work(t *testing.T) {
	t.Parallel()
	// A duty that returns by itself is started again while the replica
	// leads, at the next renewal and not at once, one run at a time.
	clk := ledgertest.NewClock()
	s := storetest.SQLite().New(t, clk.Now).(ledger.LeaderStore)
	g := reconciler.NewLeaderGauge(prometheus.NewRegistry()).WithLabelValues("digest")
	tick := ledgertest.NewClock()
	var runs atomic.Int64
	ran := make(chan string, 8)
	e := &reconciler.Elector{Leases: s, Duty: "digest", Holder: "replica-a", Log: slog.New(slog.DiscardHandler),
		TTL: time.Minute, Clock: tick, Leading: g,
		Work: func(ctx context.Context) error {
			n := runs.Add(1)
			ran <- fmt.Sprint(n)
			return fmt.Errorf("run %d failed", n)
		}}
	stop := runInBackground(t, e.Run)
	if n := receive(t, ran, "the first run"); n != "1" {
		t.Fatalf("run %s first", n)
	}
	// The elector sees the duty return while it sleeps; only the gauge
	// says when.
	for deadline := time.Now().Add(time.Minute); gaugeValue(t, g) != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("settle_leader still 1 a minute after the duty returned")
		}
	}
	if len(ran) != 0 || tick.Timers() != 1 {
		t.Fatalf("the duty ran again before the next renewal (%d runs, %d timers)", runs.Load(), tick.Timers())
	}
	tick.Next()
	tick.WaitTimers(t, 1)
	if n := receive(t, ran, "the run after the renewal"); n != "2" {
		t.Fatalf("run %s after the renewal", n)
	}
	stop()
	if _, err := s.CurrentLeader(context.Background(), "digest"); ledger.ErrorCode(err) != ledger.ENotFound {
		t.Fatalf("lease after a clean stop: %v; want released", err)
	}
}

// dtoMetric holds one metric written by a collector.
type dtoMetric struct{ dto.Metric }
