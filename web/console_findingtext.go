package web

import (
	"fmt"
	"strings"

	"settle/ledger"
)

// findingsMeaning is what to tell the customer about an operation with
// open audit findings, in place of statusMeaning's: a Confirmed operation
// whose target holds two objects is not simply done, and the person on
// the phone needs to know who is handling it. ok is false when no finding
// is open. A duplicate comes first: it is the one a customer calls about.
func findingsMeaning(fs []ledger.Finding, op ledger.Operation, owner string) (text, tone string, ok bool) {
	var chosen *ledger.Finding
	for i := range fs {
		if !fs[i].Open() {
			continue
		}
		if chosen == nil || fs[i].Kind == ledger.FindingDuplicate && chosen.Kind != ledger.FindingDuplicate {
			chosen = &fs[i]
		}
	}
	if chosen == nil {
		return "", "", false
	}
	// The team goes after a semicolon: its name is shown as the contract
	// spells it, never capitalised.
	team := orTeam(owner)
	switch chosen.Kind {
	case ledger.FindingDuplicate:
		return fmt.Sprintf("Possible duplicate — %s may exist at %s for this order. Do not tell the customer it is done; "+
			"%s is handling it: they check the objects at %s and reverse the extra ones. Tell the customer it is being checked.",
			objectsText(len(chosen.RemoteIDs), op.Type), op.Target, team, op.Target), "bad", true
	case ledger.FindingLoss:
		return fmt.Sprintf("Possibly lost — settle confirmed it, but %s now holds nothing for it. Do not tell the customer it is done; "+
			"%s is handling it: they ask %s what happened.", op.Target, team, op.Target), "bad", true
	case ledger.FindingPhantom:
		return fmt.Sprintf("Possibly applied — settle recorded it as not applied, but %s holds an object for it. "+
			"Do not tell the customer it did not happen; %s is handling it: they check the object at %s.",
			op.Target, team, op.Target), "bad", true
	}
	return fmt.Sprintf("Under review — the auditor found a discrepancy. Do not tell the customer it is done; %s is handling it.",
		team), "bad", true
}

// objectsText is "Two charges" for n of an operation of type typ: the
// operation's own noun when its type names one people say, else "copies
// of this operation". Below two (the target named no ids) it is
// "Several".
func objectsText(n int, typ string) string {
	noun := "copies of this operation"
	for _, w := range []string{"charge", "payout", "transfer", "refund", "payment", "invoice"} {
		if strings.Contains(strings.ToLower(typ), w) {
			noun = w + "s"
			break
		}
	}
	words := []string{"Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine"}
	switch {
	case n < 2:
		return "Several " + noun
	case n-2 < len(words):
		return words[n-2] + " " + noun
	}
	return countText(n, false) + " " + noun
}
