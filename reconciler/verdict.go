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
	"unicode/utf8"

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
	// noMoreReplays: a later send was answered in a way another same-key
	// replay cannot improve on: a status documented as "no side effect"
	// (true of that request only), or the target's saved answer to the
	// key's first use, replayed again (idempotency.replayed_header).
	noMoreReplays bool
	endReplay     bool // end the same-key replay window (ledger.Outcome.EndReplay)
}

func (v verdict) outcome(op ledger.Operation, from ledger.State, actor string) ledger.Outcome {
	return ledger.Outcome{
		Tenant: op.Tenant, OperationID: op.ID, Fence: op.Fence, From: from, To: v.to,
		RemoteRef: v.remoteRef, Reason: clip(v.reason, maxReason), Actor: actor, Evidence: v.evidence, EndReplay: v.endReplay,
	}
}

// maxReason is the ledger's bound on an outcome's reason, in bytes.
const maxReason = 500

// clip cuts s to at most n bytes on a character boundary, marking the cut:
// a reason that grew past the ledger's bound (a deadline's escalation
// quoting its last finding) is shortened, never refused.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…"
	s = s[:n-len(mark)]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + mark
}

func unknown(reason string, ev map[string]any) verdict {
	return verdict{to: ledger.Unknown, reason: reason, evidence: ev}
}

// notSent is the verdict on a request that was never made: what it needed
// (a tenant parameter, a credential) is missing. Nothing reached the
// target, and no loop can supply it, so a person must act: ESCALATED, with
// the reason and the missing parameter names (never values) as evidence.
func notSent(a target.Attempt, ev map[string]any) verdict {
	if ev == nil {
		ev = map[string]any{}
	}
	ev["sent"] = false
	if len(a.Missing) > 0 {
		ev["missing"] = a.Missing
	}
	return verdict{to: ledger.Escalated, reason: "nothing was sent: " + a.NotSent, evidence: ev}
}

// sendVerdict classifies the answer to the first send of an operation (the
// executor's) following the contract's status table: only a documented
// no-side-effect rejection or a found object whose own status documents
// failure is FAILED_TERMINAL, only a verified object is SUCCEEDED,
// everything unclear is UNKNOWN, and a request that could not be made is
// ESCALATED unsent. Answers to later sends go through laterSendVerdict.
func sendVerdict(c *target.Contract, op ledger.Operation, a target.Attempt) verdict {
	if !a.Sent() {
		return notSent(a, nil)
	}
	if !a.Answered() {
		return unknown("no response: "+a.Failure, map[string]any{"failure": a.Failure})
	}
	out := c.Classify(a.Status)
	ev := map[string]any{"status": a.Status, "outcome": string(out)}
	if a.Replayed {
		ev["replayed"] = true
	}
	switch out {
	case target.Succeeded:
		return objectVerdict(c, op, a.Body, ev)
	case target.AcceptedPending:
		v := unknown("accepted by the target; completion not yet confirmed", ev)
		if id, err := c.RemoteID(a.Body); err == nil && id != "" {
			// Kept (unconfirmed) so that a lookup by {remote_ref} can find it.
			ev["remote_id"], v.remoteRef = id, id
		} else if id != "" {
			unusableID(ev, id, err)
		}
		return v
	case target.RejectedWithoutSideEffect:
		ev["documentation"] = c.Cites(a.Status)
		v := verdict{to: ledger.FailedTerminal, reason: fmt.Sprintf("rejected with %d, documented as having no side effect", a.Status), evidence: ev}
		if obj, ok := c.ErrorObject(a.Body); ok {
			return errorObjectVerdict(c, op, obj, v)
		}
		return v
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
// the operation stays UNKNOWN with the answer as evidence. An answer the
// target marks as replayed that leaves the operation UNKNOWN (a saved 500,
// a saved pending object) is the answer to the first send, saved: every
// further replay would earn it again. Both set noMoreReplays, for the
// caller to move on to lookup or escalation. A found object documenting
// failure is FAILED_TERMINAL whichever send it answered, and so is a
// replayed rejection carrying this operation's own object (Stripe's saved
// 402 with its declined PaymentIntent).
func laterSendVerdict(c *target.Contract, op ledger.Operation, a target.Attempt, via string) verdict {
	v := sendVerdict(c, op, a)
	v.evidence["via"] = via
	switch {
	case v.to == ledger.FailedTerminal && a.Replayed && v.remoteRef != "" && c.ReferenceField != "" && c.Classify(a.Status) == target.RejectedWithoutSideEffect:
		// The target's saved answer to the first send (Stripe's saved 402
		// decline), carrying an object errorObjectVerdict found to be this
		// operation's (its reference matched): it proves what the first
		// send did, as the first answer itself would have.
		v.reason = fmt.Sprintf("the %s was answered %d, marked by the target as its saved answer to the first send: %s", via, a.Status, v.reason)
	case v.to == ledger.FailedTerminal && c.Classify(a.Status) == target.RejectedWithoutSideEffect:
		v.to, v.noMoreReplays = ledger.Unknown, true
		v.reason = fmt.Sprintf("the %s was answered %d, documented as having no side effect for that request; it proves nothing about the first send", via, a.Status)
	case v.to == ledger.Unknown && a.Replayed:
		v.noMoreReplays = true
		v.reason = fmt.Sprintf("the %s was answered %d, marked by the target as its saved answer to the first send (%s); replaying again cannot tell more",
			via, a.Status, v.reason)
	}
	return v
}

// objectVerdict checks one remote object against the approved payload: its
// id must be readable, every contract match field (reference and tenant
// included) must agree by its rule, and its own status (response.statuses)
// decides: succeeded is SUCCEEDED, failed is FAILED_TERMINAL (the object
// exists and documents that nothing was applied — found, not merely "not
// found"), pending or unlisted stays UNKNOWN.
func objectVerdict(c *target.Contract, op ledger.Operation, body []byte, ev map[string]any) verdict {
	id, err := c.RemoteID(body)
	if err != nil && id != "" {
		unusableID(ev, id, err)
		return unknown("the target's answer carries an object id settle cannot use ("+err.Error()+
			"); it stays unconfirmed", ev)
	}
	if err != nil || id == "" {
		return unknown("the target's answer carries no readable object id", ev)
	}
	ev["remote_id"] = id
	if bad := c.Mismatches(op.Payload, body); len(bad) > 0 {
		mismatchEvidence(ev, bad)
		return verdict{to: ledger.Escalated, remoteRef: id,
			reason: "the remote object does not match the approved payload", evidence: ev}
	}
	st, err := c.ObjectStatus(body)
	if err != nil {
		return unknown("the remote object's status is unreadable", ev)
	}
	if st.Status != "" {
		ev["object_status"] = st.Status // a value the contract lists, never the target's free text
	}
	switch st.Outcome {
	case target.ObjectSucceeded:
		return verdict{to: ledger.Succeeded, remoteRef: id, reason: "confirmed by the target", evidence: ev}
	case target.ObjectFailed:
		ev["documentation"] = st.Documentation
		return verdict{to: ledger.FailedTerminal, remoteRef: id, evidence: ev,
			reason: fmt.Sprintf("the target's object carries status %q, documented as failed: nothing was applied", st.Status)}
	}
	if st.Status == "" && c.Response.StatusField != "" {
		return unknown("the remote object exists; its status is not in the contract's table, so it counts as pending", ev)
	}
	return unknown("the remote object exists but is not complete yet", ev)
}

// mismatchEvidence records which match fields differ and the kinds of their
// two values (e.g. "string vs number"), never the values.
func mismatchEvidence(ev map[string]any, bad []target.Mismatch) {
	ev["mismatched_fields"] = target.MismatchFields(bad)
	ev["mismatch_kinds"] = target.MismatchKinds(bad)
}

// unusableID records, as evidence, why the target's object id cannot be
// stored (ledger.CheckProviderText) and the id itself escaped and cut short
// (ledger.PlainText): a reviewer sees what the target sent, and no NUL or
// terminal escape ever reaches the store or a screen.
func unusableID(ev map[string]any, id string, err error) {
	ev["remote_id_unusable"] = err.Error()
	ev["remote_id_shown"] = shownID(id)
}

// shownID is a target's object id as evidence and logs may show it: as it
// is when usable, else escaped and cut to 64 bytes.
func shownID(id string) string {
	if id == "" {
		return "(unreadable id)"
	}
	return ledger.PlainText(id, 64)
}

// recordable returns v unchanged when the ledger would accept its outcome,
// and otherwise what it is: an answer settle cannot use, UNKNOWN with the
// ledger's reason as evidence, which the reconciler's deadline escalates
// like any other. A verdict the store refuses would be lost at every round
// (the lease expires, the operation is asked again, the same answer is
// refused again) and never reach its deadline's escalation.
func recordable(v verdict, op ledger.Operation, from ledger.State, actor string) verdict {
	_, err := v.outcome(op, from, actor).EvidenceJSON()
	if err == nil || ledger.ErrorCode(err) != ledger.EInvalid {
		return v
	}
	return unknown("the target's answer could not be recorded ("+ledger.ErrorMessage(err)+"); it stays unconfirmed",
		map[string]any{"unrecordable": ledger.ErrorMessage(err), "verdict": string(v.to)})
}

// errorObjectVerdict reads the object a rejection documented as having no
// side effect carries (response.error_object_field: Stripe's declined
// PaymentIntent, created and left in requires_payment_method). The status
// row decides the outcome; the object adds its id, kept as the remote
// reference and evidence so that the auditor and a person can find it —
// but only when it is this operation's (its reference and tenant, where
// the contract names them) and its own status does not say otherwise. An
// object whose status reads succeeded or a listed pending value
// contradicts the row: the operation stays UNKNOWN and is looked up. One
// the contract cannot read adds nothing: the documented row still holds.
func errorObjectVerdict(c *target.Contract, op ledger.Operation, obj []byte, v verdict) verdict {
	ev := v.evidence
	ref, tenant := c.References(obj)
	if (c.ReferenceField != "" && ref != op.RemoteKey) || (c.TenantField != "" && tenant != op.Tenant) {
		ev["error_object"] = "ignored: it does not carry this operation's reference and tenant"
		return v
	}
	st, err := c.ObjectStatus(obj)
	switch {
	case err != nil:
		ev["error_object"] = "ignored: its status is unreadable"
		return v
	case c.Response.StatusField != "" && (st.Outcome == target.ObjectSucceeded || st.Status != "" && st.Outcome == target.ObjectPending):
		ev["object_status"] = st.Status
		return unknown(fmt.Sprintf("the %d answer is documented as having no side effect, but the object it carries has status %q, documented as %s",
			ev["status"], st.Status, st.Outcome), ev)
	}
	id, err := c.RemoteID(obj)
	if err != nil { // RemoteID holds the id to ledger.CheckProviderText
		ev["error_object"] = "ignored: its id is missing, longer than 256 bytes or not plain text"
		return v
	}
	ev["remote_id"], v.remoteRef = id, id
	if st.Status != "" {
		ev["object_status"] = st.Status // a value the contract lists
		ev["object_documentation"] = st.Documentation
	}
	// The id goes into evidence and the remote reference, not into the
	// reason, which never repeats what a target wrote.
	v.reason += "; the object it created is kept as the remote reference"
	return v
}

// ObjectVerdict is the reconciler's judgement of one remote object
// (objectVerdict) for a person's claim about it (package resolve): the
// state it would record, why, and the evidence (field names only, never
// values).
func ObjectVerdict(c *target.Contract, op ledger.Operation, body []byte) (ledger.State, string, map[string]any) {
	v := objectVerdict(c, op, body, map[string]any{})
	return v.to, v.reason, v.evidence
}
