package web

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"settle/auth"
	"settle/ledger"
	"settle/target"
	"settle/views"
)

// staleAfter is how old a contract's documentation check may grow before
// the console flags it: vendors change their APIs, and a fact settle acts
// on must still be true.
const staleAfter = 180 * 24 * time.Hour

// targetPages serves the Targets pages: each contract in plain words, with
// the go/no-go gate that `settle gonogo` computes.
type targetPages struct {
	pages
	contracts Contracts
	names     Targets // lists the targets when contracts cannot
	drills    ledger.DrillStore
	retention ledger.RetentionPolicy
	// maxDrillAge is the age past which a drill no longer counts (0:
	// gonogo's default).
	maxDrillAge time.Duration
}

func (tp *targetPages) routes() []ConsoleRoute {
	return []ConsoleRoute{
		{Method: http.MethodGet, Path: "/targets", Permission: auth.ViewOperations, handle: tp.targetsPage},
		{Method: http.MethodGet, Path: "/targets/:name", Permission: auth.ViewOperations, handle: tp.targetPage},
	}
}

// targetsPage lists every target's contract in one line each. Every
// signed-in role reads contracts: support explains "under review by …"
// with them, owners and managers plan with them.
func (tp *targetPages) targetsPage(c echo.Context) error {
	now := tp.clock(c)
	v := views.TargetsPage{Empty: "No target contracts are configured on this server."}
	var cts []*target.Contract
	for _, name := range tp.contractNames() {
		if ct, ok := tp.contracts.Get(name); ok {
			cts = append(cts, ct)
		}
	}
	gates := tp.goNoGo(c.Request().Context(), cts...)
	for _, ct := range cts {
		checked := checkedText(ct.Documentation.Checked, now)
		row := views.TargetRow{
			Name: ct.Name, Href: targetHref(ct.Name), Classes: classesText(ct.Classes()),
			Owner: ct.Owner.Team, Checked: checked, Stale: stale(ct.Documentation.Checked, now),
		}
		if r, ok := gates[ct.Name]; ok {
			row.GoNoGo, row.Go = verdictText(r), r.Go
		}
		v.Rows = append(v.Rows, row)
	}
	v.Layout = tp.layout(c, "Targets", "targets")
	v.ServedIn = servedIn(c)
	return tp.render(c, http.StatusOK, views.Targets(v))
}

// targetPage is one contract in plain words.
func (tp *targetPages) targetPage(c echo.Context) error {
	if tp.contracts == nil {
		return notFound()
	}
	ct, ok := tp.contracts.Get(c.Param("name"))
	if !ok {
		return notFound()
	}
	v := targetView(ct, tp.clock(c))
	if r, ok := tp.goNoGo(c.Request().Context(), ct)[ct.Name]; ok {
		v.GoNoGo = tp.goNoGoView(r)
	}
	v.Layout = tp.layout(c, "Target "+ct.Name, "targets")
	v.ServedIn = servedIn(c)
	return tp.render(c, http.StatusOK, views.Target(v))
}

// contractNames lists the configured targets, sorted: from the contracts
// when they can list themselves (*target.Set does), else from Targets.
func (tp *targetPages) contractNames() []string {
	if tp.contracts == nil {
		return nil
	}
	var names []string
	if n, ok := tp.contracts.(targetNames); ok {
		names = n.Names()
	} else if n, ok := tp.names.(targetNames); ok {
		names = n.Names()
	}
	return slices.Sorted(slices.Values(names))
}

func targetHref(name string) string { return "/targets/" + url.PathEscape(name) }

// targetView builds the contract page: every fact settle acts on, with
// what it means when the vendor documents nothing.
func targetView(ct *target.Contract, now time.Time) views.TargetPage {
	v := views.TargetPage{Name: ct.Name, Back: "/targets",
		DocURL: ct.Documentation.URL, Checked: checkedText(ct.Documentation.Checked, now),
		Stale: stale(ct.Documentation.Checked, now)}
	for _, k := range ct.Classes() {
		v.Classes = append(v.Classes, views.ClassText{Class: string(k), Text: ClassMeaning(k)})
	}
	v.Sections = []views.FactSection{
		{ID: "owner", Heading: "Owner and escalation", Facts: ownerFacts(ct)},
		{ID: "sending", Heading: "Sending", Facts: sendingFacts(ct)},
		{ID: "requests", Heading: "Credential and request shape", Facts: requestFacts(ct)},
		{ID: "response", Heading: "Reading the target's objects", Facts: responseFacts(ct)},
		{ID: "idempotency", Heading: "Idempotency key and retention window", Facts: idempotencyFacts(ct)},
		{ID: "lookup", Heading: "Lookup and consistency", Facts: lookupFacts(ct)},
		{ID: "conditional", Heading: "Conditional update and late requests", Facts: conditionalFacts(ct)},
	}
	for _, r := range ct.Outcomes {
		v.Outcomes = append(v.Outcomes, views.OutcomeRow{Status: r.Status, Outcome: string(r.Outcome),
			Meaning: outcomeMeaning(r.Outcome), Documentation: r.Documentation})
	}
	return v
}

// ClassMeaning says, in one sentence, what settle can do for a target of
// capability class k when the answer to a send is lost.
func ClassMeaning(k target.Class) string {
	switch k {
	case target.ClassA:
		return "Same-key replay: when an answer is lost, settle may repeat the request with the same idempotency key and the identical payload while the target still remembers the key (its retention window, less the timeout and the replay margin)."
	case target.ClassB:
		return "Lookup: when an answer is lost, settle asks the target for the object carrying settle's reference; a matching object confirms the operation, a mismatched one goes to the owning team."
	case target.ClassC:
		return "Conditional update: settle may resend the request guarded by the version it expects to replace, so that a resend of an update that already applied fails safely on the target."
	case target.ClassD:
		return "None: when an answer is lost, settle can neither check nor safely repeat the request, so the operation is escalated to the owning team."
	}
	return "Unknown class " + ledger.PlainText(string(k), 8) + ": settle treats it as none and escalates."
}

// classesText is the list of classes for a listing: "A, B".
func classesText(ks []target.Class) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

func outcomeMeaning(o target.Outcome) string {
	switch o {
	case target.Succeeded:
		return "Completed: settle confirms it once the object's id, its match fields and its status agree."
	case target.AcceptedPending:
		return "Accepted, not yet completed: settle waits for a lookup or an event to confirm it."
	case target.RejectedWithoutSideEffect:
		return "Rejected before any side effect: not applied when it answers the first send; after a repeat it proves nothing and settle looks the operation up."
	case target.InProgress:
		return "Still running under the same key: settle waits, and repeats only with the same key and payload."
	case target.Unknown:
		return "Nothing reliable: settle reconciles the operation."
	}
	return "Not recognised: treated as unknown and reconciled."
}

// stale reports a check more than 180 days old, the days rounded as
// relative rounds them, so that the flag and the "… days ago" beside it
// agree.
func stale(checked, now time.Time) bool {
	const day = 24 * time.Hour
	return (now.Sub(checked)+day/2)/day > staleAfter/day
}

// checkedText says when the documentation was checked, and says plainly
// when that was too long ago to trust.
func checkedText(checked, now time.Time) string {
	if checked.IsZero() {
		return "never checked"
	}
	// A documentation check is a calendar date, not a moment: no zone.
	s := checked.UTC().Format("2006-01-02") + " (" + relative(checked, now) + ")"
	if stale(checked, now) {
		s += " — more than 180 days ago: re-check the documentation"
	}
	return s
}
