package sim

import (
	"errors"
	"fmt"
	"time"
)

// Fault is a failure injected into one create request.
type Fault int

// The faults. Those "after commit" leave an object behind although the
// client never learns it: exactly the ambiguous outcome settle must resolve.
const (
	// None lets the request through untouched.
	None Fault = iota
	// DropAfterCommit commits the object, then closes the connection
	// without writing any response.
	DropAfterCommit
	// FailAfterCommit commits the object, then answers 500.
	FailAfterCommit
	// FailBeforeCommit answers 503 without creating anything.
	FailBeforeCommit
	// Slow commits the object and holds the normal answer back for
	// Config.SlowDelay, so a client with a shorter timeout gives up.
	Slow
	// Reset aborts the TCP connection (RST) before committing anything.
	Reset
	// RateLimited answers 429 before doing anything, class A keys included:
	// the request had no effect, which says nothing about an earlier
	// request with the same key. Only scripted, never drawn.
	RateLimited
)

var faultNames = [...]string{"None", "DropAfterCommit", "FailAfterCommit", "FailBeforeCommit", "Slow", "Reset", "RateLimited"}

// String returns the fault's Go name.
func (f Fault) String() string {
	if f < 0 || int(f) >= len(faultNames) {
		return fmt.Sprintf("Fault(%d)", int(f))
	}
	return faultNames[f]
}

type faultOdds struct {
	fault Fault
	p     float64
}

// faultOdds lists the configured probabilities in the fixed order in which
// one uniform draw is mapped onto them.
func (c Config) faultOdds() []faultOdds {
	return []faultOdds{
		{FailBeforeCommit, c.FailBeforeCommit},
		{Reset, c.Reset},
		{DropAfterCommit, c.DropAfterCommit},
		{FailAfterCommit, c.FailAfterCommit},
		{Slow, c.Slow},
	}
}

// Script queues faults for the next valid create requests, one each, in
// order. Scripted faults take precedence over the configured probabilities;
// when the queue is empty the probabilities apply again. Script panics on a
// value that is not one of the Fault constants, a programming error.
func (s *Sim) Script(faults ...Fault) {
	for _, f := range faults {
		if f < None || f > RateLimited {
			panic("sim: Script: unknown " + f.String())
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, faults...)
}

// nextFault takes the fault for one valid create request.
func (s *Sim) nextFault() Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nextFaultLocked()
}

// nextFaultLocked is nextFault with s.mu held.
func (s *Sim) nextFaultLocked() Fault {
	if len(s.script) > 0 {
		f := s.script[0]
		s.script = s.script[1:]
		return f
	}
	odds := s.cfg.faultOdds()
	total := 0.0
	for _, o := range odds {
		total += o.p
	}
	if total == 0 {
		return None // draw nothing, so enabling webhooks alone keeps a seed's sequence
	}
	r := s.rng.Float64()
	for _, o := range odds {
		if r < o.p {
			return o.fault
		}
		r -= o.p
	}
	return None
}

// SetLookupLag changes how long after commit objects become visible to
// lookups (in FlavorStripe, to search); it applies at once to every object,
// old or new. Negative means 0.
func (s *Sim) SetLookupLag(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lag = max(d, 0)
}

// Requests returns how many create requests (POST /v1/charges, in
// FlavorStripe POST /v1/payment_intents) have arrived, including invalid,
// unauthorised and faulted ones.
func (s *Sim) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// Objects returns a copy of every object ever created, visible or not, in
// creation order.
func (s *Sim) Objects() []Object {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Object, len(s.objects))
	for i, rec := range s.objects {
		out[i] = rec.obj.clone()
	}
	return out
}

// ErrNotFound is returned by Duplicate when no object carries the reference.
var ErrNotFound = errors.New("sim: no object with that reference")

// Duplicate creates, behind the client's back, a second succeeded object
// copying the first object that carries reference: the silent duplicate a
// periodic audit must find. The copy gets a new ID, is committed now (so
// LookupLag applies to it), belongs to the original's account and emits a
// webhook like any success. It returns ErrNotFound if no object carries
// reference.
func (s *Sim) Duplicate(reference string) (Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, orig := range s.objects {
		if orig.obj.Reference != reference {
			continue
		}
		now := s.cfg.Now()
		rec := &record{committed: now, obj: orig.obj.clone(), intent: orig.intent}
		rec.obj.ID = newID(s.idPrefix())
		rec.obj.Status = StatusSucceeded
		rec.obj.Created = now.Unix()
		rec.obj.Version = 1
		s.addLocked(rec)
		s.emitLocked(rec.obj)
		return rec.obj.clone(), nil
	}
	return Object{}, fmt.Errorf("duplicate %q: %w", reference, ErrNotFound)
}
