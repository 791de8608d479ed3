package ledger

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// gate is a committer's insert that holds each batch until released and
// reports the batches it was given.
type gate struct {
	batches chan []CreationRow
	release chan error
	ctxs    chan context.Context
}

func newGate() *gate {
	return &gate{batches: make(chan []CreationRow, 16), release: make(chan error), ctxs: make(chan context.Context, 16)}
}

func (g *gate) insert(ctx context.Context, rows []CreationRow) ([]Operation, error) {
	g.batches <- rows
	g.ctxs <- ctx
	if err := <-g.release; err != nil {
		return nil, err
	}
	ops := make([]Operation, len(rows))
	for i, r := range rows {
		ops[i] = r.Operation
	}
	return ops, nil
}

func op(intent string) Operation {
	return Operation{Tenant: "acme", ID: "id-" + intent, Type: "charge", IntentRef: intent}
}

type answer struct {
	op      Operation
	created bool
	err     error
}

func (c *committer) start(ctx context.Context, o Operation) chan answer {
	out := make(chan answer, 1)
	go func() {
		got, created, err := c.create(ctx, o)
		out <- answer{got, created, err}
	}()
	return out
}

// waitQueued waits until n requests are queued behind the batch being
// written.
func (c *committer) waitQueued(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		c.mu.Lock()
		queued := len(c.queue)
		c.mu.Unlock()
		if queued == n {
			return
		}
	}
	t.Fatalf("%d requests never queued", n)
}

// TestCommitter: the first request is written alone and at once; those
// that queue meanwhile go as one batch, a repeated intent once; a caller
// that gives up while queued is not written, one that gives up while its
// batch is written does not stop it; a failed batch sends its rows back
// to their callers, except a batch of one, whose error is its own.
func TestCommitter(t *testing.T) {
	g := newGate()
	c := &committer{insert: g.insert}
	ctx := context.Background()

	first := c.start(ctx, op("a"))
	if rows := <-g.batches; len(rows) != 1 || rows[0].IntentRef != "a" {
		t.Fatalf("first batch %v, want a alone", rows)
	}
	batchCtx := <-g.ctxs

	// Queued behind a: b, c twice, and d, whose caller gives up.
	gone, giveUp := context.WithCancel(ctx)
	b, c1 := c.start(ctx, op("b")), c.start(ctx, op("c"))
	c.waitQueued(t, 2)
	c2 := c.start(ctx, Operation{Tenant: "acme", ID: "id-c2", Type: "charge", IntentRef: "c"})
	c.waitQueued(t, 3)
	d := c.start(gone, op("d"))
	c.waitQueued(t, 4)
	giveUp()
	if a := <-d; !errors.Is(a.err, context.Canceled) {
		t.Fatalf("d, given up: %+v", a)
	}
	if batchCtx.Err() != nil {
		t.Fatal("the batch being written was stopped by another caller")
	}
	g.release <- nil
	if a := <-first; !a.created || a.err != nil || a.op.ID != "id-a" {
		t.Fatalf("a: %+v", a)
	}

	rows := <-g.batches
	<-g.ctxs
	if got := fmt.Sprint(intentsOf(rows)); got != "[b c]" {
		t.Fatalf("second batch %s, want [b c]: d given up, c once", got)
	}
	select {
	case a := <-c2:
		t.Fatalf("the repeated c was answered before its batch committed: %+v", a)
	case <-time.After(20 * time.Millisecond):
	}
	g.release <- nil
	for name, ch := range map[string]chan answer{"b": b, "c": c1} {
		if a := <-ch; !a.created || a.err != nil {
			t.Fatalf("%s: %+v", name, a)
		}
	}
	if a := <-c2; a.created || a.err != nil {
		t.Fatalf("the repeated c: %+v, want not created, for its caller to resolve", a)
	}

	// A failed batch of two: both back to their callers, no error.
	e := c.start(ctx, op("e"))
	<-g.batches
	<-g.ctxs
	f, h := c.start(ctx, op("f")), c.start(ctx, op("h"))
	c.waitQueued(t, 2)
	g.release <- nil
	<-e
	<-g.batches
	<-g.ctxs
	g.release <- errors.New("refused")
	for _, ch := range []chan answer{f, h} {
		if a := <-ch; a.created || a.err != nil {
			t.Fatalf("a row of a failed batch: %+v, want not created, no error", a)
		}
	}
	// A failed batch of one: its error.
	alone := c.start(ctx, op("i"))
	<-g.batches
	<-g.ctxs
	g.release <- errors.New("refused")
	if a := <-alone; a.err == nil {
		t.Fatal("a failed batch of one reported no error")
	}

	// Every caller of a batch gives up: the batch's context ends.
	mine, leave := context.WithCancel(ctx)
	j := c.start(mine, op("j"))
	<-g.batches
	bctx := <-g.ctxs
	leave()
	<-j
	select {
	case <-bctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the batch's context outlived every caller")
	}
	g.release <- bctx.Err()
}

func intentsOf(rows []CreationRow) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.IntentRef
	}
	return out
}
