package target

import (
	"fmt"
	"settle/ledger"
	"time"
)

// OperationTimes are the facts about one operation that the absence rules
// need. The reconciler fills them from the ledger and the lookup it made.
type OperationTimes struct {
	// LookupAt is when the lookup that found nothing was sent. Every rule is
	// judged at that moment, not at the time the answer is read.
	LookupAt time.Time
	// LastSent is when settle last sent, or may have sent, the create
	// request (the last claim); zero if unknown.
	LastSent time.Time
	// Deadline is the operation's deadline; zero if it has none.
	Deadline time.Time
	// RetryWindowEnd is the end of the same-key replay window.
	RetryWindowEnd time.Time
}

// Condition is one absence rule as judged for one lookup, in a form that
// can be stored as evidence.
type Condition struct {
	Rule   string `json:"rule"` // "visibility", "late_requests" or "replay"
	Met    bool   `json:"met"`
	Detail string `json:"detail"`
}

// AbsenceMeaningful decides whether a lookup that found nothing may turn the
// operation into FAILED_TERMINAL. It is true only when all three of the
// paper's rules hold:
//
//  1. visibility: the target documents read-after-write consistency, or the
//     lookup was sent a documented propagation limit after the last moment a
//     request could have committed;
//  2. late_requests: the deadline had passed at the lookup and the target
//     documents that later requests are rejected;
//  3. replay: a same-key replay is unavailable (not class A, or the window
//     is over), because while it is available, replaying is the answer.
//
// The three conditions are always returned, met or not, for the evidence.
// "Not found" with any rule unmet means the operation stays UNKNOWN.
func (c *Contract) AbsenceMeaningful(t OperationTimes) (bool, []Condition) {
	conds := []Condition{c.visibility(t), c.lateRequests(t), c.replayOver(t)}
	for _, k := range conds {
		if !k.Met {
			return false, conds
		}
	}
	return true, conds
}

func (c *Contract) visibility(t OperationTimes) Condition {
	k := Condition{Rule: "visibility"}
	switch {
	case c.Lookup == nil:
		k.Detail = "the contract has no lookup"
	case c.Lookup.ReadAfterWrite:
		k.Met, k.Detail = true, "the target documents read-after-write consistency"
	case c.Lookup.PropagationLimit == 0:
		k.Detail = "the target documents neither read-after-write consistency nor a propagation limit"
	default:
		// A request may still reach the target until the deadline when late
		// requests are rejected, so propagation counts from the later of the
		// last send and the deadline.
		from := t.LastSent
		if c.LateRequestsRejected && t.Deadline.After(from) {
			from = t.Deadline
		}
		waited := t.LookupAt.Sub(from)
		switch {
		case from.IsZero():
			k.Detail = "neither the last send nor a deadline is known, so the propagation limit cannot be shown to have elapsed"
		case waited >= c.Lookup.PropagationLimit:
			k.Met = true
			k.Detail = fmt.Sprintf("the lookup was sent %s after the last possible commit; the documented propagation limit is %s", ledger.SpokenDuration(waited), ledger.SpokenDuration(c.Lookup.PropagationLimit))
		case waited < 0:
			k.Detail = "the lookup was sent before the last possible commit"
		default:
			k.Detail = fmt.Sprintf("the lookup was sent only %s after the last possible commit, within the documented propagation limit of %s", ledger.SpokenDuration(waited), ledger.SpokenDuration(c.Lookup.PropagationLimit))
		}
	}
	return k
}

func (c *Contract) lateRequests(t OperationTimes) Condition {
	k := Condition{Rule: "late_requests"}
	switch {
	case !c.LateRequestsRejected:
		k.Detail = "the target does not document that requests after the deadline are rejected"
	case t.Deadline.IsZero():
		k.Detail = "the operation has no deadline"
	case !t.LookupAt.After(t.Deadline):
		k.Detail = fmt.Sprintf("the deadline %s had not passed when the lookup was sent", t.Deadline.UTC().Format(time.RFC3339))
	default:
		k.Met = true
		k.Detail = fmt.Sprintf("the deadline %s had passed and the target documents that later requests are rejected", t.Deadline.UTC().Format(time.RFC3339))
	}
	return k
}

func (c *Contract) replayOver(t OperationTimes) Condition {
	k := Condition{Rule: "replay"}
	switch {
	case !c.replay():
		k.Met, k.Detail = true, "the target offers no same-key replay (not class A)"
	case c.CanReplay(t.LookupAt, t.RetryWindowEnd):
		k.Detail = fmt.Sprintf("a same-key replay can be sent until %s (the window ends at %s, less the timeout and the replay margin); replay instead",
			c.ReplayBy(t.RetryWindowEnd).UTC().Format(time.RFC3339), t.RetryWindowEnd.UTC().Format(time.RFC3339))
	default:
		k.Met = true
		k.Detail = fmt.Sprintf("the same-key replay window ended at %s (no replay is sent after %s: timeout %s and replay margin %s before its end)",
			t.RetryWindowEnd.UTC().Format(time.RFC3339), c.ReplayBy(t.RetryWindowEnd).UTC().Format(time.RFC3339),
			ledger.SpokenDuration(c.Timeout), ledger.SpokenDuration(c.ReplayMargin()))
	}
	return k
}
