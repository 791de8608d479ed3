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
	"settle/resolve"
	"settle/target"
	"settle/views"
)

// escalationPage answers the runbook's four questions about one operation
// from its evidence (resolve.Case) and offers the owner's actions. An
// operation of a tenant or target p does not own answers like an unknown one.
//
// A suggestion's link fills the proposal form in from the query (kind,
// remote_ref, reason): a GET, so that it works without JavaScript.
func (es *escalations) escalationPage(c echo.Context) error {
	q := c.QueryParams()
	f := escForm{propose: views.ProposeForm{Kind: views.Field{Value: q.Get("kind")},
		RemoteRef: views.Field{Value: q.Get("remote_ref")}, Reason: views.Field{Value: q.Get("reason")}}}
	return es.showEscalation(c, http.StatusOK, f)
}

// escForm is what the person typed into the page's forms, with the
// refusal beside its field, for a re-render.
type escForm struct {
	propose views.ProposeForm
	decide  views.DecideForm
	problem string
}

// showEscalation renders the escalation page with f as typed, at status:
// 200 for a visit, 422 for a form the service refused.
func (es *escalations) showEscalation(c echo.Context, status int, f escForm) error {
	ctx := c.Request().Context()
	p := auth.FromContext(ctx)
	k, err := es.resolve.Case(ctx, resolverScope{p}, c.Param("tenant"), c.Param("id"))
	if err != nil {
		return actionError(err)
	}
	v := es.escalationView(k, p, es.clock(c), f)
	v.Layout = es.layout(c, "Escalation "+k.Operation.ID, "escalations")
	v.ServedIn = servedIn(c)
	return es.render(c, status, views.Escalation(v))
}

// resolverScope is what a console person may see and resolve.
type resolverScope struct{ p *auth.Principal }

func (r resolverScope) ResolveTenants() (bool, []string) { return r.p.Tenants(auth.Resolve) }
func (r resolverScope) CanResolve(tenant, target string) bool {
	return r.p.Can(auth.Resolve, tenant, target)
}

// escalationView builds the detail page of k for p at now.
func (es *escalations) escalationView(k resolve.Case, p *auth.Principal, now time.Time, f escForm) views.EscalationPage {
	op := k.Operation
	owner := ownerOf(es.targets, op.Target)
	c := es.resolve.Contract(op.Target)
	v := views.EscalationPage{
		ID: op.ID, Tenant: op.Tenant, Target: op.Target, Intent: ledger.PlainText(op.IntentRef, 300),
		State: string(op.State), Status: op.State.Plain(owner), Story: operationHref(op.Tenant, op.ID),
		ProposeHref: escalationHref(op.Tenant, op.ID) + "/propose",
	}
	said, match := targetAnswers(k, owner, now)
	v.Answers = []views.Answer{said, match, replayAnswer(k), approverAnswer(k)}
	v.Evidence = evidenceRows(k.Evidence, now)
	v.Problem, v.Form = f.problem, f.propose
	if k.Open != nil {
		pv := proposalView(*k.Open, op, p, now)
		pv.Warnings, pv.Unverifiable, pv.Form = k.Warnings, k.Unverifiable, f.decide
		v.Open = &pv
	}
	v.NoPropose, v.NoSupersede = k.NoPropose, k.NoSupersede
	for _, n := range k.NotOffered {
		if n.Kind != ledger.KindSupersede { // shown on its own, as NoSupersede
			v.NotOffered = append(v.NotOffered, n.Why)
		}
	}
	if len(k.Kinds) > 0 {
		v.Unverifiable = resolve.Unverifiable(c, op.Target)
		for _, g := range k.Suggestions {
			v.Suggestions = append(v.Suggestions, views.Suggestion{Label: resolve.SuggestionLabel(g),
				Href: escalationHref(op.Tenant, op.ID) + "?" + url.Values{"kind": {string(g.Kind)}, "remote_ref": {g.RemoteRef},
					"reason": {"The evidence shows it: " + resolve.Describe(g.From) + "."}}.Encode() + "#propose"})
		}
	}
	chosen := v.Form.Kind.Value
	if !slices.Contains(k.Kinds, ledger.ResolutionKind(chosen)) && len(k.Kinds) > 0 {
		chosen = string(k.Kinds[0])
	}
	if op.State != ledger.Escalated && op.State != ledger.Unknown {
		v.NoPropose = "This operation is no longer escalated: " + op.State.Plain(owner) + "."
	}
	for _, kind := range k.Kinds {
		choice := views.KindChoice{Value: string(kind), Label: kindLabel(kind), Checked: string(kind) == chosen}
		if kind != ledger.KindConfirmSucceeded {
			choice.Warnings = resolve.Warnings(k.Evidence, kind, "")
			v.Form.AskDespite = v.Form.AskDespite || len(choice.Warnings) > 0
		}
		switch kind {
		case ledger.KindConfirmSucceeded:
			choice.Help, choice.NeedRef = "the target holds the object; give its id"+lookupHelp(c), true
		case ledger.KindConfirmNotApplied:
			choice.Help = "the target did not apply it; the client is told it was not applied"
		case ledger.KindReplay:
			choice.Help = "settle sends the approved request once more with the same key, then escalates again if that settles nothing"
		case ledger.KindSupersede:
			choice.Help = "the target holds nothing under this operation's reference (settle checks by a lookup when it is proposed and again when it is approved); it ends as not applied and a new intent, " +
				ledger.PlainText(ledger.SupersedeIntent(op.IntentRef), 300) + ", is registered for the client to pick up"
		}
		v.Kinds = append(v.Kinds, choice)
	}
	return v
}

func lookupHelp(c *target.Contract) string {
	if c != nil && c.Lookup != nil {
		return " (settle checks it with a lookup before accepting)"
	}
	return ""
}

// targetAnswers answers the first two questions from k's evidence: the
// newest event in which the target spoke, the newest field comparison, and
// the quarantined events that name the operation.
func targetAnswers(k resolve.Case, owner string, now time.Time) (said, match views.Answer) {
	targetName := k.Operation.Target
	said = views.Answer{ID: "said", Question: "What does the target say happened?",
		Answer: "Nothing: settle has no answer from " + targetName + " about this operation."}
	match = views.Answer{ID: "match", Question: "Does it match the approved request?",
		Answer: "Not known: the target has shown no object to compare."}
	switch {
	case k.Said.Event != nil:
		story := storyEvent(*k.Said.Event, targetName, owner, 0, now)
		when := story.When
		said.Answer, said.When, said.Lines = story.Title+",", &when, evidenceLines(k.Said.Evidence)
	case k.Said.Quarantined != nil:
		q := k.Said.Quarantined
		when := timeView(&q.At, now, "")
		said.Answer, said.When = "Nothing in the operation's log; a quarantined event from "+targetName+" names it, received", &when
		said.Lines = quarantineLines(*q)
	}
	switch m := k.Match; {
	case m.Known && m.Matched:
		match.Answer = "Yes: object " + ledger.PlainText(m.RemoteID, 300) + " matched every field the contract compares."
	case m.Known:
		match.Answer = "No. These fields differ from the approved request: " + strings.Join(m.Mismatched, ", ") + "."
		match.Lines = []string{"Only the names of the fields are shown; compare the values at the target."}
	case m.Named != nil:
		match.Answer = "Not known: settle compared no object, but a quarantined event names object " +
			ledger.PlainText(m.RemoteID, 300) + "; compare it at the target before you confirm it."
	case m.Shown != nil:
		match.Answer = "Not known: settle compared no field, but " + resolve.Describe(*m.Shown) + " shows object " +
			ledger.PlainText(m.RemoteID, 300) + "; compare it at the target before you confirm it."
	}
	return said, match
}

// quarantineLines describe a quarantined event as evidence: what it
// claims, in the provider's words escaped.
func quarantineLines(q ledger.QuarantineItem) []string {
	lines := []string{"Quarantined: " + ledger.PlainText(q.Reason, 300) + "."}
	if q.EventID != "" {
		lines = append(lines, "Event "+ledger.PlainText(q.EventID, 120)+".")
	}
	if q.RemoteID != "" {
		lines = append(lines, "The target's object: "+ledger.PlainText(q.RemoteID, 300)+".")
	}
	if q.ResolvedAt != nil {
		lines = append(lines, "Reviewed: "+ledger.PlainText(q.Resolution, 300)+".")
	}
	return lines
}

// replayAnswer shows the third question's answer.
func replayAnswer(k resolve.Case) views.Answer {
	q := k.Replay
	a := views.Answer{ID: "replay", Question: "Is a same-key replay still inside the documented window?"}
	if q.By == nil {
		a.Answer = "No: " + q.Why + "."
		if strings.HasPrefix(q.Why, "no contract") {
			a.Answer = "Not known: " + q.Why + "."
		}
		return a
	}
	now := k.Now
	when := timeView(q.By, now, "")
	a.When = &when
	a.Lines = []string{"The window is " + durationText(q.Window) + " from the first send, less the request timeout (" +
		durationText(q.Timeout) + ") and the replay margin (" + durationText(q.Margin) + ")."}
	if q.Possible {
		a.Answer = "Yes: " + spanText(q.By.Sub(now)) + " left; the last safe moment is"
		return a
	}
	a.Answer = "No: the window closed"
	return a
}

// approverAnswer shows the fourth question's answer.
func approverAnswer(k resolve.Case) views.Answer {
	op := k.Operation
	a := views.Answer{ID: "approver", Question: "Who may approve?",
		Answer: "Another owner of " + op.Target + " in tenant " + op.Tenant + ": never the person who proposes."}
	if k.Open != nil {
		a.Answer = "Any owner of " + op.Target + " in tenant " + op.Tenant + " except " +
			personName(k.Approver.ProposedByName, "") + ", who proposed it."
	}
	if k.Approver.Team != "" {
		a.Lines = []string{"The owning team: " + k.Approver.Team + ", escalation contact " + k.Approver.Contact + "."}
	}
	return a
}

// evidenceRows describe each piece of evidence in words.
func evidenceRows(list []resolve.Seen, now time.Time) []views.EvidenceRow {
	out := make([]views.EvidenceRow, 0, len(list))
	for _, e := range list {
		what := resolve.Describe(e)
		if i := strings.LastIndex(what, " of "); i > 0 {
			what = what[:i] // the time is shown beside it
		}
		r := views.EvidenceRow{What: strings.ToUpper(what[:1]) + what[1:], When: timeView(&e.At, now, ""),
			Object: "none", Status: "not given", Compared: comparedText(e), Verified: verifiedText(e)}
		if e.RemoteID != "" {
			r.Object = ledger.PlainText(e.RemoteID, 300)
		}
		if e.Status != "" {
			r.Status = ledger.PlainText(e.Status, 120)
		}
		if e.Source == resolve.SourceLookup && e.Results >= 0 {
			r.Object += " (" + figPlural(e.Results, "object") + " found)"
		}
		if e.Note != "" {
			r.Note = "Quarantined: " + ledger.PlainText(e.Note, 300) + "."
			if e.Reviewed != "" {
				r.Note += " Reviewed: " + ledger.PlainText(e.Reviewed, 300) + "."
			}
		}
		out = append(out, r)
	}
	return out
}

func comparedText(e resolve.Seen) string {
	switch e.Compared {
	case resolve.Matched:
		return "Matched every field the contract compares."
	case resolve.Mismatched:
		return "Differs in: " + strings.Join(e.Mismatched, ", ") + " (names only; compare the values at the target)."
	}
	if e.RemoteID == "" {
		return "Nothing to compare."
	}
	return "Not compared by settle: compare it at the target."
}

func verifiedText(e resolve.Seen) string {
	switch {
	case e.Source == resolve.SourceQuarantine && e.Verified:
		return "Signature verified, but settle could not attribute it on its own: a person weighs it."
	case e.Source == resolve.SourceQuarantine:
		return "Not verified."
	case e.Source == resolve.SourceWebhook:
		return "Signature verified and matched to this operation."
	}
	return "Yes: the target's answer to settle's own request."
}
