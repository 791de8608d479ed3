package reconciler

import (
	"context"

	"settle/ledger"
	"settle/target"
)

// Match is what a piece of inbound evidence (for example a webhook's
// object) means for the ledger.
type Match int

// The three kinds of evidence.
const (
	// Unmatched: no tenant, no reference, or no operation of that tenant
	// carries the reference. It changes nothing and belongs in quarantine;
	// the tenant is never guessed and no operation is ever created from it.
	Unmatched Match = iota
	// Mismatched: the tenant's operation was found but the object's fields
	// differ from the approved payload: escalate, never confirm.
	Mismatched
	// Matched: the object is the tenant's operation, field for field.
	Matched
)

// Evidence is the result of matching one remote object.
type Evidence struct {
	Match      Match
	Operation  ledger.Operation  // set unless Unmatched
	Mismatched []target.Mismatch // fields and kinds (never values), for Mismatched
	Why        string            // for Unmatched: what was missing
}

// MatchEvidence decides whether a remote object is evidence about one of
// settle's operations. It reads only: the tenant comes from the object
// itself and scopes the search, so evidence naming another tenant (or none)
// can never touch an operation. Webhooks and audits act on its result.
func MatchEvidence(ctx context.Context, store ledger.Store, c *target.Contract, object []byte) (Evidence, error) {
	ref, tenant := c.References(object)
	switch {
	case c.ReferenceField == "" || c.TenantField == "":
		return Evidence{Why: "the contract names no reference and tenant fields"}, nil
	case tenant == "":
		return Evidence{Why: "the object names no tenant"}, nil
	case ref == "":
		return Evidence{Why: "the object carries no settle reference"}, nil
	}
	ops, err := store.Find(ctx, tenant, ref)
	if err != nil {
		return Evidence{}, err
	}
	for _, op := range ops {
		if op.RemoteKey != ref || op.Target != c.Name {
			continue
		}
		// A redacted payload (retention) cannot be compared; the reference
		// and tenant matched, and a final operation is never changed by
		// evidence: the inbox still quarantines an object that contradicts it.
		if op.Redacted() {
			return Evidence{Match: Matched, Operation: op}, nil
		}
		if bad := c.Mismatches(op.Payload, object); len(bad) > 0 {
			return Evidence{Match: Mismatched, Operation: op, Mismatched: bad}, nil
		}
		return Evidence{Match: Matched, Operation: op}, nil
	}
	return Evidence{Why: "no operation of the named tenant carries the reference"}, nil
}
