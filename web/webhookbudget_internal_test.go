package web

import (
	"context"
	"testing"
	"time"
)

// The budget holds bytes and places: deliveries that fit are admitted at
// once; one that does not sheds the oldest bodies still being read, as
// many as it needs and no more, and is admitted once they go; bodies read
// whole are never shed, so a delivery finding only those waits out the
// wait and is refused.
func TestWebhookBudget_BoundsBytesAndShedsOldestReading(t *testing.T) {
	b := newWebhookBudget(3000, 10, 100*time.Millisecond)
	ctx := context.Background()
	cut := map[string]bool{}
	take := func(name string, size int64) *hookRead {
		t.Helper()
		r, ok := b.acquire(ctx, size, func() { cut[name] = true })
		if !ok {
			t.Fatalf("%s refused", name)
		}
		return r
	}
	a, bb, c := take("a", 1000), take("b", 1000), take("c", 1000)
	b.read(a) // a is being stored: not to be shed
	// d needs 1500 bytes: b (the oldest still reading) and c must go.
	go func() {
		time.Sleep(20 * time.Millisecond)
		b.release(bb)
		b.release(c)
	}()
	d := take("d", 1500)
	if cut["a"] || !cut["b"] || !cut["c"] {
		t.Fatalf("cut %v, want b and c", cut)
	}
	if !b.wasShed(bb) || b.wasShed(a) || b.wasShed(d) {
		t.Fatal("wasShed disagrees with the cuts")
	}
	if b.used != 2500 || len(b.held) != 2 {
		t.Fatalf("used %d bytes in %d places", b.used, len(b.held))
	}
	b.read(d)
	start := time.Now()
	if _, ok := b.acquire(ctx, 1000, func() {}); ok {
		t.Fatal("admitted beyond the budget with nothing to shed")
	}
	if w := time.Since(start); w < 90*time.Millisecond {
		t.Errorf("refused after %s, want the 100ms wait", w)
	}
	// A body larger than the whole budget reserves the whole budget.
	b.release(a)
	b.release(d)
	e := take("e", 1<<30)
	if b.used != 3000 {
		t.Fatalf("used %d", b.used)
	}
	b.release(e)
	if b.used != 0 || len(b.held) != 0 {
		t.Fatalf("left %d bytes in %d places", b.used, len(b.held))
	}
}

// The count bounds places whatever the bytes: the eleventh small body
// sheds the oldest of ten.
func TestWebhookBudget_BoundsPlaces(t *testing.T) {
	b := newWebhookBudget(1<<20, 10, 100*time.Millisecond)
	var first *hookRead
	shed := make(chan struct{})
	for i := range 10 {
		r, ok := b.acquire(context.Background(), 10, func() {
			if i == 0 {
				close(shed)
			}
		})
		if !ok {
			t.Fatal("refused")
		}
		if i == 0 {
			first = r
		}
	}
	go func() { <-shed; b.release(first) }()
	if _, ok := b.acquire(context.Background(), 10, func() {}); !ok {
		t.Fatal("eleventh refused")
	}
	if len(b.held) != 10 {
		t.Fatalf("%d places held", len(b.held))
	}
}

// The place a shed body frees goes to the delivery it was shed for, in
// the release itself, not to whichever waiting delivery runs first: a
// forger redialling at that moment cannot take it.
func TestWebhookBudget_HandsShedPlaceToItsHeir(t *testing.T) {
	b := newWebhookBudget(1<<20, 1, time.Second)
	ctx := context.Background()
	cutForged := make(chan struct{})
	forged, ok := b.acquire(ctx, 10, func() { close(cutForged) })
	if !ok {
		t.Fatal("first refused")
	}
	real := make(chan bool)
	go func() { _, ok := b.acquire(ctx, 10, func() {}); real <- ok }()
	<-cutForged
	b.release(forged)
	b.mu.Lock()
	heir := forged.heir
	handed := heir != nil && heir.in && len(b.held) == 1 && b.held[0] == heir
	b.mu.Unlock()
	if !handed {
		t.Fatal("release left the place free for anyone: the delivery the body was shed for does not hold it")
	}
	if !<-real {
		t.Fatal("the delivery the forged body was shed for was refused")
	}
}
