package ledger

import "time"

// TargetLease is how long ClaimBatch's claims of one target's operations
// hold them. A lease fitted to the target's timeout makes a send cut off by
// a crash UNKNOWN soon after its answer could last have come, so that it can
// still be replayed inside a short retention window; one long lease for
// every target would let the window pass first.
type TargetLease struct {
	Target string
	Lease  time.Duration
}

// checkClaimBatch validates ClaimBatch's arguments, for the stores: a
// positive batch size and leases, and at most one lease per target.
func checkClaimBatch(n int, lease time.Duration, byTarget []TargetLease) error {
	if n <= 0 || lease <= 0 {
		return Errorf(EInvalid, "batch size and lease must be positive")
	}
	seen := make(map[string]bool, len(byTarget))
	for _, l := range byTarget {
		switch {
		case l.Lease <= 0:
			return Errorf(EInvalid, "the lease of target %q must be positive", l.Target)
		case seen[l.Target]:
			return Errorf(EInvalid, "target %q has two leases", l.Target)
		}
		seen[l.Target] = true
	}
	return nil
}
