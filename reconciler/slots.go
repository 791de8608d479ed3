package reconciler

import (
	"context"
	"slices"
	"sync"
)

// slots bounds a loop's work in progress: at most total items at once, and
// at most limit(key) of one key (a target, a tenant's callback endpoint),
// so that a key whose calls hang holds only its own slots while the others
// go on. The loop asks room how much to claim and which keys to leave out
// of the claim, and takes a slot for each item it claimed: room promises
// that every one finds a slot at once, so no claimed item waits (and no
// lease runs out) behind another.
type slots struct {
	total int
	// floor is the smallest limit of any key, which bounds a claim that
	// may return items of keys with nothing in progress yet.
	floor int
	limit func(key string) int

	mu    sync.Mutex
	used  int
	busy  map[string]int
	freed chan struct{} // a token when a release lets a claim take more
}

func newSlots(total, floor int, limit func(key string) int) *slots {
	return &slots{total: total, floor: max(1, floor), limit: limit, busy: map[string]int{},
		freed: make(chan struct{}, 1)}
}

// room is how many items a claim may take now, and the keys it must leave
// out because all their slots are taken. The count is no more than the
// free slots, nor than the free slots of any key not left out, so that
// every item claimed can start at once.
func (s *slots) room() (n int, full []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n = min(s.total-s.used, s.floor)
	for k, b := range s.busy {
		l := s.limit(k)
		if b >= l {
			full = append(full, k)
			continue
		}
		n = min(n, l-b)
	}
	slices.Sort(full)
	return max(n, 0), full
}

// take holds one of key's slots, for an item room allowed.
func (s *slots) take(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used++
	s.busy[key]++
}

// release frees one of key's slots. When that lets a claim take something
// it could not (the key or the whole loop was full), a loop waiting in
// wait or idle is woken.
func (s *slots) release(key string) {
	s.mu.Lock()
	wake := s.used == s.total || s.busy[key] >= s.limit(key)
	s.used--
	if s.busy[key]--; s.busy[key] <= 0 {
		delete(s.busy, key)
	}
	s.mu.Unlock()
	if wake {
		select {
		case s.freed <- struct{}{}:
		default: // a wake-up is pending already
		}
	}
}

// wait returns once a release made room, or ctx is done.
func (s *slots) wait(ctx context.Context) {
	select {
	case <-s.freed:
	case <-ctx.Done():
	}
}

// woken receives when a release made room for work the last claim had to
// leave out (pause.idleOr).
func (s *slots) woken() <-chan struct{} { return s.freed }
