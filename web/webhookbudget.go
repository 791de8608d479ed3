package web

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"
)

// Webhook reading limits (see README, "Limits").
const (
	// DefaultWebhookReadBytes bounds the bytes reserved by webhook bodies
	// being read or held at once in one replica: each delivery reserves
	// its Content-Length, or its target's body limit when it sends none.
	DefaultWebhookReadBytes = DefaultMaxWebhookReads * WebhookBodyLimit
	// DefaultWebhookBodyTimeout is how long a webhook body may take to
	// arrive whole. Providers send small bodies at once, so a body still
	// arriving after it is a trickle, cut with 408.
	DefaultWebhookBodyTimeout = 2 * time.Second
)

// webhookBudget bounds webhook bodies in progress by bytes reserved and by
// count. A delivery that does not fit sheds the oldest bodies still being
// read, so that a flood of trickled bodies with forged (but well-formed)
// signatures cannot keep a provider's real delivery out: the forgeries
// shed each other, and a real body, which arrives at once, is read before
// it becomes the oldest. Bodies read whole (being verified and stored)
// are never shed; only they can make a delivery wait and then get 503.
type webhookBudget struct {
	bytes, count int64
	wait         time.Duration

	mu    sync.Mutex
	used  int64
	held  []*hookRead // oldest first
	freed chan struct{}
}

// hookRead is one delivery's place in the budget.
type hookRead struct {
	size int64
	cut  func() // stops the body's reading at once

	// Guarded by the budget's mu.
	reading bool
	shed    bool
	// heir is the delivery this one was shed for: when this one goes, its
	// place is handed to the heir, not to whichever delivery asks next.
	// Without it a forger redialling at that moment could take the place
	// a real delivery had freed, and the real one wait out its time.
	heir    *hookRead
	waiting bool          // acquire is waiting for a place
	in      bool          // holds a place (set by acquire, or by release's hand-off)
	handed  chan struct{} // closed when release hands this delivery a place
}

func newWebhookBudget(bytes int64, count int, wait time.Duration) *webhookBudget {
	return &webhookBudget{bytes: bytes, count: int64(count), wait: wait, freed: make(chan struct{})}
}

// acquire reserves size bytes (at most the whole budget) for a body
// about to be read, shedding the oldest bodies still being read when it
// does not fit and waiting up to the budget's wait for them, or for
// others, to go; ok false means nothing was reserved.
func (b *webhookBudget) acquire(ctx context.Context, size int64, cut func()) (r *hookRead, ok bool) {
	size = min(max(size, 1), b.bytes)
	r = &hookRead{size: size, cut: cut, reading: true, handed: make(chan struct{})}
	t := time.NewTimer(b.wait)
	defer t.Stop()
	for {
		b.mu.Lock()
		if r.in || b.fits(r) {
			b.admit(r)
			b.mu.Unlock()
			return r, true
		}
		victims := b.shedFor(size)
		for _, v := range victims {
			v.heir = r
		}
		r.waiting = true
		freed := b.freed
		b.mu.Unlock()
		for _, v := range victims {
			v.cut()
		}
		select {
		case <-freed:
		case <-r.handed:
		case <-t.C:
			return r, b.giveUp(r)
		case <-ctx.Done():
			return r, b.giveUp(r)
		}
	}
}

// fits says whether r would fit in the budget now. Called with mu held.
func (b *webhookBudget) fits(r *hookRead) bool {
	return b.used+r.size <= b.bytes && int64(len(b.held)) < b.count
}

// admit gives r its place (if release has not handed it one already).
// Called with mu held.
func (b *webhookBudget) admit(r *hookRead) {
	r.waiting = false
	if !r.in {
		r.in = true
		b.used += r.size
		b.held = append(b.held, r)
	}
}

// giveUp ends r's wait: false, unless release handed it a place just
// before, which it then keeps (and its caller releases).
func (b *webhookBudget) giveUp(r *hookRead) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	r.waiting = false
	return r.in
}

// shedFor marks the oldest bodies still being read as shed until, once
// they go, size bytes and one place would be free; it returns those newly
// marked. Bodies already shed count as going. Called with mu held.
func (b *webhookBudget) shedFor(size int64) []*hookRead {
	used, n := b.used, int64(len(b.held))
	for _, h := range b.held {
		if h.shed {
			used, n = used-h.size, n-1
		}
	}
	var victims []*hookRead
	for _, h := range b.held {
		if used+size <= b.bytes && n < b.count {
			break
		}
		if h.reading && !h.shed {
			h.shed = true
			victims = append(victims, h)
			used, n = used-h.size, n-1
		}
	}
	return victims
}

// read marks r's body as read whole: from now on it is not shed.
func (b *webhookBudget) read(r *hookRead) {
	b.mu.Lock()
	r.reading = false
	b.mu.Unlock()
}

// wasShed says whether r's reading was cut to admit another delivery.
func (b *webhookBudget) wasShed(r *hookRead) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return r.shed
}

// release gives r's place back and wakes deliveries waiting for one.
func (b *webhookBudget) release(r *hookRead) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, h := range b.held {
		if h == r {
			b.held = append(b.held[:i], b.held[i+1:]...)
			b.used -= r.size
			if heir := r.heir; heir != nil && heir.waiting && !heir.in && b.fits(heir) {
				b.admit(heir)
				close(heir.handed)
			}
			close(b.freed)
			b.freed = make(chan struct{})
			return
		}
	}
}

// cutBody stops a request body's reading: the flag makes every later Read
// fail, and a read deadline in the past ends one blocked now. The flag is
// checked after each Read too, because paceBodies may move the deadline
// on again just after it was set.
type cutBody struct {
	body interface{ Read([]byte) (int, error) }
	rc   *http.ResponseController

	mu  sync.Mutex
	cut bool
}

func (c *cutBody) stop() {
	c.mu.Lock()
	c.cut = true
	c.mu.Unlock()
	_ = c.rc.SetReadDeadline(time.Now().Add(-time.Second))
}

func (c *cutBody) stopped() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cut
}

func (c *cutBody) Read(p []byte) (int, error) {
	if c.stopped() {
		return 0, errBodyCut
	}
	n, err := c.body.Read(p)
	if err == nil && c.stopped() {
		return n, errBodyCut
	}
	return n, err
}

// errBodyCut is a body's Read after cutBody.stop.
var errBodyCut = errors.New("webhook body reading cut")
