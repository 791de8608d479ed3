package ledger

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"sync/atomic"
)

// maxBatch bounds one group commit: a statement of 128 rows is still one
// short write, and a burst larger than that is several batches.
const maxBatch = 128

// committer coalesces concurrent creations into group commits: one
// transaction, one multi-row insert, one flush of the log for many
// requests. The first request that finds it idle is written at once;
// those that arrive while a batch is being written wait for it to commit
// and go together as the next. A goroutine writes batches while there are
// any and ends when the queue is empty, so an idle committer holds
// nothing.
type committer struct {
	insert func(ctx context.Context, rows []CreationRow) ([]Operation, error)

	mu      sync.Mutex
	queue   []*pending
	writing bool // a goroutine is writing batches
}

// pending is one creation waiting for its batch. The writer sets the
// answer and then closes done.
type pending struct {
	ctx context.Context
	row CreationRow
	key string // the intent: tenant, type, intent reference

	done     chan struct{}
	inserted Operation // when it was created in its batch
	created  bool
	err      error // its batch failed, and it was the batch's only row
}

// create hands op to the next batch and waits for it to commit. created
// is false when the batch did not create op: its intent exists, another
// request of the batch has it, or the batch failed as a whole. The caller
// then creates op on its own (CreateIn), which decides what each of those
// means. err is the batch's error when op was its only row, or ctx's.
func (g *committer) create(ctx context.Context, op Operation) (Operation, bool, error) {
	p := &pending{ctx: ctx, row: CreationRow{Operation: op, Evidence: CreationEvidence(ctx)},
		key: op.Tenant + "\x00" + op.Type + "\x00" + op.IntentRef, done: make(chan struct{})}
	g.mu.Lock()
	g.queue = append(g.queue, p)
	start := !g.writing
	g.writing = true
	g.mu.Unlock()
	if start {
		go g.write()
	}
	select {
	case <-p.done:
		return p.inserted, p.created, p.err
	case <-ctx.Done():
		// The batch, if it has started, commits or rolls back as a whole.
		return Operation{}, false, ctx.Err()
	}
}

// write writes batches until the queue is empty.
func (g *committer) write() {
	for {
		g.mu.Lock()
		n := min(len(g.queue), maxBatch)
		batch := slices.Clone(g.queue[:n])
		g.queue = slices.Delete(g.queue, 0, n)
		if n == 0 {
			g.writing = false
		}
		g.mu.Unlock()
		if n == 0 {
			return
		}
		g.commit(batch)
	}
}

// commit writes one batch in one transaction and answers its requests. A
// request whose caller has already given up is not written; of requests
// of the same intent only the first is, the others resolved by their
// callers once it has committed.
func (g *committer) commit(batch []*pending) {
	var (
		rows    []CreationRow
		members []*pending
		repeats []*pending // of an intent already in the batch
		intents = make(map[string]bool, len(batch))
	)
	for _, p := range batch {
		if err := p.ctx.Err(); err != nil {
			p.err = err
			close(p.done)
			continue
		}
		if intents[p.key] {
			repeats = append(repeats, p)
			continue
		}
		intents[p.key] = true
		members = append(members, p)
	}
	if len(members) == 0 {
		return
	}
	// In the order of their intents, so that two replicas' batches over
	// the same intents wait for each other rather than deadlock.
	slices.SortFunc(members, func(a, b *pending) int { return cmp.Compare(a.key, b.key) })
	for _, p := range members {
		rows = append(rows, p.row)
	}
	ctx, stop := batchContext(members)
	defer stop()
	got, err := g.insert(ctx, rows)
	created := make(map[string]Operation, len(got))
	for _, op := range got {
		created[op.ID] = op
	}
	for _, p := range members {
		p.inserted, p.created = created[p.row.ID]
		if err != nil && len(members) == 1 {
			p.err = err // alone, its batch's failure is its own
		}
		close(p.done)
	}
	for _, p := range repeats {
		close(p.done) // not created: its caller finds what the batch made
	}
}

// batchContext is the context of a batch's write: it carries the first
// member's values and ends only when every member's context has ended.
// While one caller waits, the batch is written to the end; once none
// does, it may stop, and rolls back as a whole.
func batchContext(members []*pending) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(members[0].ctx))
	var waiting atomic.Int64
	waiting.Store(int64(len(members)))
	stops := make([]func() bool, len(members))
	for i, p := range members {
		stops[i] = context.AfterFunc(p.ctx, func() {
			if waiting.Add(-1) == 0 {
				cancel()
			}
		})
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}
