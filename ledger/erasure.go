package ledger

import (
	"context"
	"encoding/json"
	"time"
)

// Erasure is what remains of an erased tenant: that its data was erased,
// when, by whom, whether it was forced past operations not yet final, and
// how many rows of each kind went. It holds nothing that was erased.
type Erasure struct {
	ID         int64
	Tenant     string
	At         time.Time
	Subject    string // the actor's stable identity, e.g. "cli:ada"
	Name       string // the actor's display name at the time
	Role       string
	Forced     bool
	Unfinished int // operations not yet final when it was forced (up to 1000)
	Counts     RetentionCounts
}

// TenantEraser removes every row of one tenant's data from the ledger.
type TenantEraser interface {
	// EraseTenant deletes the tenant's operations and their events,
	// notifications, findings, resolutions and payload conflicts; its API
	// tokens, callback endpoint and parameters; the quarantine items in
	// its scope or naming its operations, with their deliveries; its
	// recorded actions and figure rollups — in bounded batches — and then
	// records an Erasure by the context's actor, which it returns. The
	// tokens, endpoint and parameters go first, so no new request is
	// accepted or sent for the tenant while the rest is erased; an erasure
	// cut short is completed by running it again. EConflict, changing
	// nothing, while the tenant has operations not yet final, unless force
	// (a sender or reconciler holding one then finds it gone). EInvalid
	// for an invalid tenant or no actor.
	EraseTenant(ctx context.Context, tenant string, force bool) (Erasure, error)
	// Erasures returns the tenant's erasure records, newest first.
	Erasures(ctx context.Context, tenant string) ([]Erasure, error)
}

// erasureBatch bounds the operations one erasure transaction deletes.
const erasureBatch = 500

// checkErasure decides whether a tenant with unfinished operations not yet
// final (counted up to a limit) may be erased: only when forced, since a
// send, replay or lookup in progress would lose the record of what it did.
func checkErasure(tenant string, open int, force bool) error {
	if open > 0 && !force {
		return Errorf(EConflict, "tenant %s has %s not yet final (PREPARED, IN_FLIGHT, UNKNOWN or ESCALATED): "+
			"erasing it would lose the record of requests that may have reached the target; "+
			"wait until they are final, or force the erasure", tenant, unfinished(open))
	}
	return nil
}

// validateErasure checks an erasure request before any store is touched:
// a valid tenant and an actor.
func validateErasure(ctx context.Context, tenant string) (Actor, error) {
	if !ValidTenant(tenant) {
		return Actor{}, Errorf(EInvalid, "tenant must be 1-63 characters of a-z, 0-9, '.', '_' or '-'")
	}
	return ActorOf(ctx)
}

// erasureCountLimit bounds the count of unfinished operations an erasure
// looks for: the decision needs only "any", the person a sense of size.
const erasureCountLimit = unfinishedCountLimit

// marshalCounts encodes counts for an erasure record: kind → count.
func marshalCounts(c RetentionCounts) []byte {
	m := map[string]int{}
	for _, k := range c.Kinds() {
		m[k.Kind] = k.Count
	}
	b, _ := json.Marshal(m) // a map of ints always encodes
	return b
}

// unmarshalCounts decodes marshalCounts' encoding; unknown kinds are
// ignored.
func unmarshalCounts(b []byte) (RetentionCounts, error) {
	var m map[string]int
	if err := json.Unmarshal(b, &m); err != nil {
		return RetentionCounts{}, err
	}
	var c RetentionCounts
	for _, p := range []struct {
		kind string
		n    *int
	}{
		{"payloads_redacted", &c.PayloadsRedacted}, {"operations", &c.Operations}, {"events", &c.Events},
		{"notifications", &c.Notifications}, {"escalation_notices", &c.EscalationNotices}, {"findings", &c.Findings}, {"resolutions", &c.Resolutions},
		{"conflicts", &c.Conflicts}, {"quarantine", &c.Quarantine}, {"deliveries", &c.Deliveries},
		{"tokens", &c.Tokens}, {"callbacks", &c.Callbacks}, {"params", &c.Params},
		{"actions", &c.Actions}, {"rollups", &c.Rollups},
	} {
		*p.n = m[p.kind]
	}
	return c, nil
}
