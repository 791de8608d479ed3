package ledger

import "time"

// State is where an operation stands in its lifecycle. The names match the
// design paper and are stored verbatim in the database.
type State string

// The six states of an operation.
const (
	Prepared       State = "PREPARED"
	InFlight       State = "IN_FLIGHT"
	Succeeded      State = "SUCCEEDED"
	FailedTerminal State = "FAILED_TERMINAL"
	Unknown        State = "UNKNOWN"
	Escalated      State = "ESCALATED"
)

// States lists every state in lifecycle order.
var States = []State{Prepared, InFlight, Succeeded, FailedTerminal, Unknown, Escalated}

// Valid reports whether s is one of the six states.
func (s State) Valid() bool {
	for _, v := range States {
		if s == v {
			return true
		}
	}
	return false
}

// Final reports whether no transition leaves s.
func (s State) Final() bool { return s == Succeeded || s == FailedTerminal }

// transitions is the one table of allowed state changes. Stores consult it
// before they write and encode the "from" side in their conditional SQL, so
// nothing outside this table can change a state.
//
// Nothing leads back to PREPARED: once a worker may have sent, the operation
// can only be resolved by evidence (rule 6 of the paper).
var transitions = map[State][]State{
	// The atomic claim.
	Prepared: {InFlight},
	// The sender's verdict. ESCALATED covers a 2xx whose fields do not match
	// the approved payload.
	InFlight: {Succeeded, FailedTerminal, Unknown, Escalated},
	// Only the reconciler touches UNKNOWN; UNKNOWN → UNKNOWN reschedules.
	Unknown: {Succeeded, FailedTerminal, Escalated, Unknown},
	// Only an approved manual resolution leaves ESCALATED. ESCALATED →
	// UNKNOWN is an approved same-key replay (KindReplay): the reconciler
	// replays once and, if that is inconclusive, escalates again.
	Escalated: {Succeeded, FailedTerminal, Unknown},
}

// CanTransition reports whether the table allows from → to.
func CanTransition(from, to State) bool {
	for _, s := range transitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// Plain returns the wording support staff see for a state. It never claims
// an outcome the ledger cannot prove. owner names the team that owns the
// target and is used only for ESCALATED.
func (s State) Plain(owner string) string {
	switch s {
	case Prepared:
		return "Scheduled"
	case InFlight:
		return "Sending"
	case Succeeded:
		return "Confirmed"
	case FailedTerminal:
		return "Not applied"
	case Unknown:
		return "Confirmation pending"
	case Escalated:
		if owner == "" {
			owner = "the owning team"
		}
		return "Under review by " + owner
	}
	return "Unknown state"
}

// AwaitsPerson reports whether op waits for a person's decision at now:
// ESCALATED, or UNKNOWN past its deadline (the reconciler escalates it on
// its next round). The escalation queue, its digest and its gauges count
// exactly these.
func AwaitsPerson(op Operation, now time.Time) bool {
	switch op.State {
	case Escalated:
		return true
	case Unknown:
		return op.Deadline != nil && !now.Before(*op.Deadline)
	}
	return false
}
