package reconciler

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"settle/ledger"
)

// queued is a claimed operation waiting for a worker, and the last moment
// (on this process's monotonic clock) a worker may still start its send.
type queued struct {
	op     ledger.Operation
	sendBy time.Time
}

// sendQueue is the executor's small local queue of claimed operations: the
// claimer fills it in whole batches, the workers drain it. How many
// operations may wait in it follows the measured send time, so that a full
// queue still starts within the queue allowance of its claims: a slow
// target shrinks it to nothing (each claim then takes only free workers, as
// an executor without a queue would), a fast one lets it grow to its
// capacity.
type sendQueue struct {
	ops     chan queued
	wake    chan struct{} // the claimer's doorbell: a worker took an operation or finished a send
	busy    atomic.Int64  // workers between taking an operation and finishing with it
	workers int
	max     int           // Executor.Queue
	wait    time.Duration // the shortest queue allowance of any target

	mu   sync.Mutex
	send time.Duration // moving average of a send's duration; zero until one is measured
}

func newSendQueue(workers, max int, wait time.Duration) *sendQueue {
	return &sendQueue{ops: make(chan queued, max+workers), wake: make(chan struct{}, 1),
		workers: workers, max: max, wait: wait}
}

// depth is how many operations may wait for a worker now: as many as the
// workers can start within half the queue allowance at the measured send
// time, at most the queue's capacity. None until a send has been measured.
func (q *sendQueue) depth() int {
	q.mu.Lock()
	send := q.send
	q.mu.Unlock()
	if send <= 0 {
		return 0
	}
	return int(min(int64(q.max), int64(q.workers)*int64(q.wait)/(2*int64(send))))
}

// want is how many operations the claimer should claim now, or 0 when it
// should wait for the doorbell: it refills only once the queue is down to
// its low-water mark (one round of work for the workers, or a quarter of
// its depth when that is less), so that claims come in full batches rather
// than one per freed worker, while the workers still have work during the
// claim's round trip.
func (q *sendQueue) want(batch int) int {
	depth, waiting := q.depth(), len(q.ops)
	free := q.workers - int(q.busy.Load())
	if waiting > min(q.workers, depth/4) {
		return 0
	}
	return max(0, min(batch, depth+free-waiting))
}

// observe adds a send's duration to the moving average.
func (q *sendQueue) observe(d time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.send == 0 {
		q.send = max(d, time.Microsecond)
		return
	}
	q.send += (d - q.send) / 8
	q.send = max(q.send, time.Microsecond)
}

// ring wakes the claimer, if it waits.
func (q *sendQueue) ring() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// await waits for the doorbell or the end of ctx.
func (q *sendQueue) await(ctx context.Context) {
	select {
	case <-q.wake:
	case <-ctx.Done():
	}
}
