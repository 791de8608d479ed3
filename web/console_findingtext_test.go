package web

import (
	"strings"
	"testing"
	"time"

	"settle/ledger"
)

func TestFindingsMeaning(t *testing.T) {
	t.Parallel()
	op := ledger.Operation{Target: "payments", Type: "charge", State: ledger.Succeeded}
	now := time.Now()
	dup := ledger.Finding{Kind: ledger.FindingDuplicate, RemoteIDs: []string{"ch_1", "ch_2"}}
	loss := ledger.Finding{Kind: ledger.FindingLoss}
	acked := dup
	acked.Acknowledged = &ledger.Acknowledgement{At: now}
	for _, c := range []struct {
		name  string
		fs    []ledger.Finding
		op    ledger.Operation
		owner string
		want  string // "" when the state's meaning stands
	}{
		{"None", nil, op, "payments-team", ""},
		{"Acknowledged", []ledger.Finding{acked}, op, "payments-team", ""},
		{"Duplicate", []ledger.Finding{dup}, op, "payments-team",
			"Possible duplicate — Two charges may exist at payments for this order. Do not tell the customer it is done; " +
				"payments-team is handling it: they check the objects at payments and reverse the extra ones. Tell the customer it is being checked."},
		{"DuplicateBeforeLoss", []ledger.Finding{loss, dup}, op, "", "Possible duplicate — Two charges"},
		{"ThreeTransfers", []ledger.Finding{{Kind: ledger.FindingDuplicate, RemoteIDs: []string{"a", "b", "c"}}},
			ledger.Operation{Target: "bank", Type: "transfer.create"}, "", "Possible duplicate — Three transfers may exist at bank"},
		{"NoNoun", []ledger.Finding{{Kind: ledger.FindingDuplicate}}, ledger.Operation{Target: "t", Type: "x"}, "",
			"Possible duplicate — Several copies of this operation"},
		{"NoTeam", []ledger.Finding{dup}, op, "", "Possible duplicate — Two charges may exist at payments for this order. " +
			"Do not tell the customer it is done; the owning team is handling it"},
		{"Loss", []ledger.Finding{loss}, op, "ops", "Possibly lost — settle confirmed it, but payments now holds nothing for it. " +
			"Do not tell the customer it is done; ops is handling it"},
		{"Phantom", []ledger.Finding{{Kind: ledger.FindingPhantom}}, op, "ops",
			"Possibly applied — settle recorded it as not applied, but payments holds an object for it. Do not tell the customer it did not happen"},
	} {
		got, tone, ok := findingsMeaning(c.fs, c.op, c.owner)
		if c.want == "" {
			if ok {
				t.Errorf("%s: %q, want the state's meaning", c.name, got)
			}
			continue
		}
		if !ok || tone != "bad" || !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: %q (%s, %v), want %q…", c.name, got, tone, ok, c.want)
		}
	}
}
