// Package reconciler runs settle's background work over the ledger: the
// executor that sends each claimed operation exactly once, the sweeper that
// turns expired leases into UNKNOWN, and the reconciler that resolves
// UNKNOWN by asking the authoritative system before anything is sent again.
//
// The functions in this file turn what a target showed into a fenced
// verdict. They are pure: no I/O, no clock, so every branch is unit-tested.
package reconciler

import (
	"fmt"

	"settle/ledger"
	"settle/target"
)

// Contracts resolves target names to their contracts (*target.Set does).
type Contracts interface {
	Get(name string) (*target.Contract, bool)
}

// ContractSet is every target contract of the deployment (*target.Set is
// one), for loops that act per target rather than per operation: the
// executor leases each target's claims by its timeout, the auditor walks
// every target.
type ContractSet interface {
	Contracts
	Names() []string
}

// verdict is a decision about one operation before it becomes an Outcome.
type verdict struct {
	to        ledger.State
	remoteRef string
	reason    string
	evidence  map[string]any
	soon      bool // reconcile again after the minimum delay, not the backoff
	// didNothing: a later send was answered with a status the contract
	// documents as "no side effect": true of that request only.
	didNothing bool
	endReplay  bool // end the same-key replay window (ledger.Outcome.EndReplay)
}

func (v verdict) outcome(op ledger.Operation, from ledger.State, actor string) ledger.Outcome {
	return ledger.Outcome{
		Tenant: op.Tenant, OperationID: op.ID, Fence: op.Fence, From: from, To: v.to,
		RemoteRef: v.remoteRef, Reason: v.reason, Actor: actor, Evidence: v.evidence, EndReplay: v.endReplay,
	}
}

func unknown(reason string, ev map[string]any) verdict {
	return verdict{to: ledger.Unknown, reason: reason, evidence: ev}
}

// sendVerdict classifies the answer to the first send of an operation (the
// executor's) following the contract's status table: only a documented
// no-side-effect rejection is FAILED_TERMINAL, only a verified object is
// SUCCEEDED, everything unclear is UNKNOWN. Answers to later sends go
// through laterSendVerdict.
func sendVerdict(c *target.Contract, op ledger.Operation, a target.Attempt) verdict {
	if !a.Answered() {
		return unknown("no response: "+a.Failure, map[string]any{"failure": a.Failure})
	}
	out := c.Classify(a.Status)
	ev := map[string]any{"status": a.Status, "outcome": string(out)}
	switch out {
	case target.Succeeded:
		return objectVerdict(c, op, a.Body, ev)
	case target.AcceptedPending:
		v := unknown("accepted by the target; completion not yet confirmed", ev)
		if id, err := c.RemoteID(a.Body); err == nil && id != "" {
			// Kept (unconfirmed) so that a lookup by {remote_ref} can find it.
			ev["remote_id"], v.remoteRef = id, id
		}
		return v
	case target.RejectedWithoutSideEffect:
		ev["documentation"] = c.Cites(a.Status)
		return verdict{to: ledger.FailedTerminal, reason: fmt.Sprintf("rejected with %d, documented as having no side effect", a.Status), evidence: ev}
	case target.InProgress:
		v := unknown("another attempt with the same key is still executing", ev)
		v.soon = true
		return v
	}
	return unknown(fmt.Sprintf("status %d does not prove an outcome", a.Status), ev)
}

// laterSendVerdict classifies the answer to a later send of the operation
// (a same-key replay or a conditional resend), via names which. A status
// documented as having no side effect (a 429, or the 400/422 a provider
// gives for a key it has seen) says that this request did nothing; the
// first send may still have committed, so it is never proof of absence:
// the operation stays UNKNOWN with the answer as evidence (didNothing set,
// for the caller to move on to lookup or escalation).
func laterSendVerdict(c *target.Contract, op ledger.Operation, a target.Attempt, via string) verdict {
	v := sendVerdict(c, op, a)
	v.evidence["via"] = via
	if v.to != ledger.FailedTerminal {
		return v
	}
	v.to, v.didNothing = ledger.Unknown, true
	v.reason = fmt.Sprintf("the %s was answered %d, documented as having no side effect for that request; it proves nothing about the first send", via, a.Status)
	return v
}

// objectVerdict checks one remote object against the approved payload: its
// id must be readable, every contract match field (reference and tenant
// included) must agree, and it must be complete.
func objectVerdict(c *target.Contract, op ledger.Operation, body []byte, ev map[string]any) verdict {
	id, err := c.RemoteID(body)
	if err != nil || id == "" {
		return unknown("the target's answer carries no readable object id", ev)
	}
	ev["remote_id"] = id
	if bad := c.Mismatches(op.Payload, body); len(bad) > 0 {
		ev["mismatched_fields"] = bad
		return verdict{to: ledger.Escalated, remoteRef: id,
			reason: "the remote object does not match the approved payload", evidence: ev}
	}
	done, err := c.Completed(body)
	if err != nil {
		return unknown("the remote object's status is unreadable", ev)
	}
	if !done {
		return unknown("the remote object exists but is not complete yet", ev)
	}
	return verdict{to: ledger.Succeeded, remoteRef: id, reason: "confirmed by the target", evidence: ev}
}
