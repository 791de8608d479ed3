package resolve

import (
	"slices"
	"strings"

	"settle/ledger"
	"settle/target"
)

// NotOffered is a kind of proposal the page does not offer, and why.
type NotOffered struct {
	Kind ledger.ResolutionKind
	Why  string
}

// Describe names a piece of evidence in words: "the webhook event evt_1
// of 2 Mar 10:42 UTC".
func Describe(s Seen) string {
	at := " of " + s.At.UTC().Format("2 Jan 15:04 MST")
	ev := ""
	if s.EventID != "" {
		ev = " " + ledger.PlainText(s.EventID, 120)
	}
	switch s.Source {
	case SourceLookup:
		return "settle's lookup" + at
	case SourceWebhook:
		return "the webhook event" + ev + at
	case SourceQuarantine:
		return "the quarantined webhook event" + ev + at
	}
	return "the target's answer to a send" + at
}

// SuggestionLabel is the button's words for a suggestion.
func SuggestionLabel(g Suggestion) string {
	return "Confirm succeeded with " + ledger.PlainText(g.RemoteRef, 300) + " from " + Describe(g.From)
}

// Warnings says, in words, how the evidence contradicts a proposal of kind
// naming remoteRef (confirm succeeded only); none when nothing does. The
// proposer and the approver must each confirm they weighed them.
func Warnings(evidence []Seen, kind ledger.ResolutionKind, remoteRef string) []string {
	var out []string
	switch kind {
	case ledger.KindConfirmNotApplied, ledger.KindSupersede:
		seen := map[string]bool{}
		for _, e := range evidence {
			if !e.ShowsObject() || seen[e.RemoteID] {
				continue
			}
			seen[e.RemoteID] = true
			out = append(out, upper(Describe(e))+" shows object "+
				ledger.PlainText(e.RemoteID, 300)+": the target may hold it, so it may have been applied.")
		}
	case ledger.KindConfirmSucceeded:
		var others []string
		named := false
		for _, e := range evidence {
			switch {
			case e.RemoteID == "":
			case e.RemoteID != remoteRef:
				// An object that differs from the request may well be
				// another charge; one that did not differ names this one.
				if e.ShowsObject() && e.Compared != Mismatched && !slices.Contains(others, e.RemoteID) {
					others = append(others, e.RemoteID)
				}
			case e.Failed:
				named = true
				out = append(out, upper(Describe(e))+" documents object "+ledger.PlainText(remoteRef, 300)+" as failed: nothing was applied.")
			case e.Compared == Mismatched:
				named = true
				out = append(out, upper(Describe(e))+" shows object "+ledger.PlainText(remoteRef, 300)+
					" differing from the approved request in: "+strings.Join(e.Mismatched, ", ")+".")
			default:
				named = true
			}
		}
		if !named && len(others) > 0 {
			for i := range others {
				others[i] = ledger.PlainText(others[i], 300)
			}
			out = append(out, "The evidence shows "+plural(len(others), "object ")+strings.Join(others, ", ")+
				", not "+ledger.PlainText(remoteRef, 300)+".")
		}
	}
	return out
}

// Unverifiable says why a "confirm succeeded" naming an object cannot be
// checked by settle at target, or "" when a lookup checks it. The
// approver must then confirm they checked the id at the target.
func Unverifiable(c *target.Contract, targetName string) string {
	if c != nil && c.Lookup != nil {
		return ""
	}
	return "settle cannot check this object id: " + targetName +
		" offers no lookup, so the approver must check it at the target."
}

// notOffered are the kinds not among a case's Kinds, and why, for an
// escalated operation with no open proposal.
func notOffered(c *target.Contract, op ledger.Operation, q ReplayQuestion, evidence []Seen) []NotOffered {
	var out []NotOffered
	if !q.Possible {
		out = append(out, NotOffered{Kind: ledger.KindReplay, Why: "A same-key replay is not offered: " + q.Why + "."})
	}
	if why := supersedeBar(c, op, evidence); why != "" {
		out = append(out, NotOffered{Kind: ledger.KindSupersede, Why: why})
	}
	return out
}

// supersedeBar says why supersede cannot succeed for op, or "": without a
// lookup, or under a contract whose absence rules can never hold for it,
// or while the evidence shows an object, the supersede's own check would
// refuse it every time.
func supersedeBar(c *target.Contract, op ledger.Operation, evidence []Seen) string {
	const no = "Supersede is not offered: "
	switch {
	case c == nil || c.Lookup == nil:
		return NoSupersede(op.Target)
	case !c.LateRequestsRejected:
		return no + "the contract for " + op.Target + " does not document that the target rejects requests after the deadline, " +
			"so a late original request could still commit beside its successor; settle never takes absence as proven there."
	case !c.Lookup.ReadAfterWrite && c.Lookup.PropagationLimit == 0:
		return no + "the contract for " + op.Target + " documents neither read-after-write consistency nor a propagation limit, " +
			"so a lookup that finds nothing never proves absence."
	case op.Deadline == nil:
		return no + "this operation has no deadline, so a late request to " + op.Target + " can never be ruled out."
	}
	for _, e := range evidence {
		if e.ShowsObject() {
			return no + Describe(e) + " shows object " + ledger.PlainText(e.RemoteID, 300) +
				", so the target may hold it; it cannot be superseded."
		}
	}
	return ""
}

func upper(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return strings.TrimSuffix(word, " ") + "s "
}
