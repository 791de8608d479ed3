package resolve

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"settle/ledger"
	"settle/target"
)

// Case is one escalated (or overdue) operation as its owners work it: the
// evidence settle holds, the runbook's four questions answered from it,
// the open proposal, and what may be proposed now. The console's
// escalation page and `settle escalation show` present it.
type Case struct {
	Operation ledger.Operation // without its payload
	Now       time.Time        // when the questions were answered
	Events    []ledger.Event   // the event log, oldest first
	// Quarantined are the inbound events the inbox could not attribute on
	// its own that name this operation, its reference or its object,
	// newest first: evidence a person weighs, never a verdict.
	Quarantined []ledger.QuarantineItem
	Open        *ledger.Resolution // the open proposal, or nil
	// Evidence is every answer of the target in the log and every
	// quarantined event naming the operation, newest first (evidenceOf);
	// Lookup is the newest lookup answer among them, or nil.
	Evidence []Seen
	Lookup   *Seen
	// Suggestions are the proposals the evidence supports, for the form
	// to fill in; offered only when "confirm succeeded" is among Kinds.
	Suggestions []Suggestion

	Said     Said           // 1. What does the target say happened?
	Match    Match          // 2. Does it match the approved request?
	Replay   ReplayQuestion // 3. Is a same-key replay still inside the window?
	Approver Approver       // 4. Who may approve?

	// Kinds are the proposals that may be made now, in the console's
	// order; empty with NoPropose saying why.
	Kinds     []ledger.ResolutionKind
	NoPropose string
	// NoSupersede says why supersede is not among Kinds.
	NoSupersede string
	// NotOffered are the kinds left out of Kinds, each with why.
	NotOffered []NotOffered
	// Warnings are how the evidence contradicts the open proposal: its
	// approver must confirm they weighed them (Approval.DespiteEvidence).
	Warnings []string
	// Unverifiable says why settle cannot check an object id named in
	// "confirm succeeded" (no lookup), or "": the approver of such a
	// proposal must confirm they checked it (Approval.CheckedAtTarget).
	Unverifiable string
}

// Said answers "what does the target say happened?": the newest event in
// which the target spoke, else the newest quarantined event that names
// the operation. Both nil: settle holds no answer from the target.
type Said struct {
	Event       *ledger.Event
	Evidence    map[string]any // Event's evidence, decoded
	Quarantined *ledger.QuarantineItem
}

// Match answers "does it match the approved request?" from the newest
// comparison settle made. Known false: settle has compared no object;
// Named is then an object id a quarantined event names, unchecked.
type Match struct {
	Known      bool
	Matched    bool     // the object RemoteID matched every compared field
	RemoteID   string   // the object compared (or Named's id)
	Mismatched []string // the fields that differ (names only)
	Named      *ledger.QuarantineItem
	// Shown is the newest evidence showing an object settle did not
	// compare (Known false): a webhook, a lookup's pending object or a
	// quarantined event. RemoteID is then its object.
	Shown *Seen
}

// ReplayQuestion answers "is a same-key replay still inside the
// documented window?". Why says, in words, why not when Possible is
// false; By, Window, Timeout and Margin are set once something was sent
// to a class A target with a contract.
type ReplayQuestion struct {
	Possible bool
	Why      string
	By       *time.Time // the last safe moment for a replay
	Window   time.Duration
	Timeout  time.Duration
	Margin   time.Duration
}

// Approver answers "who may approve?": another owner of the target in the
// tenant, never the proposer; Team and Contact come from the contract.
type Approver struct {
	ProposedBy, ProposedByName string // the open proposal's proposer, if any
	Team, Contact              string
}

// Case reads the tenant's operation id for a person of sc and answers
// the four questions at the service's now.
func (s *Service) Case(ctx context.Context, sc Scope, tenant, id string) (Case, error) {
	op, err := s.Operation(ctx, sc, tenant, id)
	if err != nil {
		return Case{}, err
	}
	events, quarantined, err := s.gather(ctx, op)
	if err != nil {
		return Case{}, err
	}
	open, err := s.openProposalOf(ctx, op)
	if err != nil {
		return Case{}, err
	}
	return s.caseOf(op, events, quarantined, open, s.now()), nil
}

func (s *Service) caseOf(op ledger.Operation, events []ledger.Event, quarantined []ledger.QuarantineItem,
	open *ledger.Resolution, now time.Time) Case {
	ct := s.Contract(op.Target)
	k := Case{Operation: op, Now: now, Events: events, Quarantined: quarantined, Open: open}
	k.Evidence = evidenceOf(events, quarantined)
	k.Lookup = latestLookup(k.Evidence)
	k.Said, k.Match = targetSaid(events, quarantined)
	if !k.Match.Known {
		for i := range k.Evidence {
			if k.Evidence[i].RemoteID != "" {
				k.Match.Shown, k.Match.RemoteID = &k.Evidence[i], k.Evidence[i].RemoteID
				break
			}
		}
	}
	k.Replay = replayQuestion(ct, op, now)
	if open != nil {
		k.Approver.ProposedBy, k.Approver.ProposedByName = open.ProposedBy, open.ProposedByName
		k.Warnings = Warnings(k.Evidence, open.Kind, open.RemoteRef)
		if open.Kind == ledger.KindConfirmSucceeded {
			k.Unverifiable = Unverifiable(ct, op.Target)
		}
	}
	if ct != nil {
		k.Approver.Team, k.Approver.Contact = ct.Owner.Team, ct.Owner.EscalationContact
	}
	switch {
	case op.State == ledger.Unknown:
		k.NoPropose = "The reconciler still owns this operation: it is escalated on its next round, and can be resolved then."
	case op.State != ledger.Escalated:
		k.NoPropose = "This operation is no longer escalated."
	case open != nil:
		k.NoPropose = "One proposal at a time: approve, reject or withdraw the open one first."
	default:
		k.Kinds = []ledger.ResolutionKind{ledger.KindConfirmSucceeded, ledger.KindConfirmNotApplied}
		if k.Replay.Possible {
			k.Kinds = append(k.Kinds, ledger.KindReplay)
		}
		k.NotOffered = notOffered(ct, op, k.Replay, k.Evidence)
		k.NoSupersede = supersedeBar(ct, op, k.Evidence)
		if k.NoSupersede == "" {
			k.Kinds = append(k.Kinds, ledger.KindSupersede)
		}
		k.Suggestions = suggestions(k.Evidence)
	}
	return k
}

// TargetSpoke reports whether ev records something the target said: its
// answer to a send, a lookup, a webhook, a same-key replay or a
// conditional resend — not settle's own steps (creation, claim, an
// expired lease, a request never sent, a person's resolution).
func TargetSpoke(ev ledger.Event, evidence map[string]any) bool {
	switch {
	case ev.From == "", ev.From == ledger.Prepared && ev.To == ledger.InFlight,
		ev.Reason == ledger.ReasonLeaseExpired, ev.Reason == ledger.ReasonPayloadTampered,
		evidence["sent"] == false, evidence["resolution_id"] != nil:
		return false
	}
	switch evidence["via"] {
	case "lookup", "webhook", "same-key replay", "conditional resend":
		return true
	}
	return ev.From == ledger.InFlight
}

// targetSaid answers the first two questions from the newest event in
// which the target spoke and the newest field comparison, and from the
// quarantine when the log holds neither.
func targetSaid(events []ledger.Event, quarantined []ledger.QuarantineItem) (Said, Match) {
	var said Said
	var match Match
	for i := len(events) - 1; i >= 0 && (said.Event == nil || !match.Known); i-- {
		ev := events[i]
		var evidence map[string]any
		_ = json.Unmarshal(ev.Evidence, &evidence)
		if said.Event == nil && TargetSpoke(ev, evidence) {
			said.Event, said.Evidence = &events[i], evidence
		}
		if match.Known {
			continue
		}
		if bad, ok := evidence["mismatched_fields"]; ok {
			match = Match{Known: true, Mismatched: stringsOf(bad)}
			if id, ok := evidence["remote_id"].(string); ok {
				match.RemoteID = id
			}
		} else if id, ok := evidence["remote_id"].(string); ok && ev.To == ledger.Succeeded {
			match = Match{Known: true, Matched: true, RemoteID: id}
		}
	}
	if len(quarantined) > 0 {
		q := quarantined[0]
		if said.Event == nil {
			said.Quarantined = &q
		}
		if !match.Known {
			for i := range quarantined {
				if quarantined[i].RemoteID != "" {
					match.Named, match.RemoteID = &quarantined[i], quarantined[i].RemoteID
					break
				}
			}
		}
	}
	return said, match
}

func stringsOf(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// replayQuestion answers the third question at now: a replay may be
// proposed for a class A target, once something was sent, while the
// window less the client's timeout and the contract's replay margin is
// still open.
func replayQuestion(c *target.Contract, op ledger.Operation, now time.Time) ReplayQuestion {
	switch {
	case c == nil:
		return ReplayQuestion{Why: "no contract is loaded for " + op.Target + ", so a replay is not offered"}
	case !slices.Contains(c.Classes(), target.ClassA):
		return ReplayQuestion{Why: op.Target + " keeps no idempotency keys settle can rely on, so a replay is never safe"}
	case op.FirstClaimedAt == nil:
		return ReplayQuestion{Why: "nothing was sent yet, so there is nothing to replay"}
	}
	by := c.ReplayBy(op.RetryWindowEnd)
	q := ReplayQuestion{By: &by, Window: op.RetryWindow, Timeout: c.Timeout, Margin: c.ReplayMargin()}
	if c.CanReplay(now, op.RetryWindowEnd) && ledger.ReplayOpen(op, 0, now) {
		q.Possible = true
	} else {
		q.Why = "the window closed"
	}
	return q
}
