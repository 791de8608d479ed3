package target

import (
	"fmt"
	"time"
)

// ShortLeaseError is CheckLeases' answer when the reconciler's lease does
// not outlast one of the targets' sends.
type ShortLeaseError struct {
	Target  string
	Lease   time.Duration // the reconciler's lease
	Timeout time.Duration // the target's timeout
}

// Error describes the shortfall in words, with the numbers.
func (e *ShortLeaseError) Error() string {
	return fmt.Sprintf("the reconciler's lease %s must exceed target %s's timeout (%s) by at least %s",
		e.Lease, e.Target, e.Timeout, LeaseMargin)
}

// CheckLeases refuses a configuration in which a lease does not fit its
// target. The reconciler's lease must outlast a replay or lookup (the
// target's claim Lease), or another reconciler would take the operation
// while the answer is on its way: a *ShortLeaseError. A send's claim is
// leased per target, and on a class A target a send cut off by a crash
// must still be replayable inside the retention window once that lease has
// expired (Contract.CheckReplayRoom).
func (s *Set) CheckLeases(reconcilerLease time.Duration) error {
	for _, name := range s.names {
		c := s.byName[name]
		if reconcilerLease < c.Lease() {
			return &ShortLeaseError{Target: name, Lease: reconcilerLease, Timeout: c.Timeout}
		}
		if err := c.CheckReplayRoom(); err != nil {
			return err
		}
	}
	return nil
}
