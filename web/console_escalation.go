package web

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"settle/auth"
	"settle/ledger"
	"settle/target"
	"settle/views"
)

// escalationPage answers the runbook's four questions about one operation
// from its evidence and offers the owner's actions. An operation of a
// tenant or target p does not own answers like an unknown one.
func (s *server) escalationPage(c echo.Context) error {
	ctx := c.Request().Context()
	p := auth.FromContext(ctx)
	op, err := s.ownedOperation(ctx, p, c.Param("tenant"), c.Param("id"))
	if err != nil {
		return err
	}
	events, err := s.store.Events(ctx, op.Tenant, op.ID)
	if err != nil {
		return err
	}
	open, err := s.openProposalOf(ctx, op)
	if err != nil {
		return err
	}
	v := s.escalationView(op, events, open, p, s.now())
	v.Layout = s.layout(c, "Escalation "+op.ID, "escalations")
	v.ServedIn = servedIn(c)
	return s.render(c, http.StatusOK, views.Escalation(v))
}

// ownedOperation reads the tenant's operation for an owner of its target:
// ENotFound's 404 for anything else, so that another tenant's or another
// target's operation reads exactly like one that does not exist.
func (s *server) ownedOperation(ctx context.Context, p *auth.Principal, tenant, id string) (ledger.Operation, error) {
	if !p.Can(auth.Resolve, tenant, "") {
		return ledger.Operation{}, notFound()
	}
	op, err := s.store.Summary(ctx, tenant, id)
	switch ledger.ErrorCode(err) {
	case "":
	case ledger.ENotFound, ledger.EInvalid:
		return op, notFound()
	default:
		return op, err
	}
	if !p.Can(auth.Resolve, op.Tenant, op.Target) {
		return op, notFound()
	}
	return op, nil
}

// openProposalOf returns op's open proposal, or nil.
func (s *server) openProposalOf(ctx context.Context, op ledger.Operation) (*ledger.Resolution, error) {
	rs, err := s.resolutions()
	if err != nil {
		return nil, err
	}
	list, err := rs.OpenResolutions(ctx, []string{op.Tenant}, false)
	if err != nil {
		return nil, err
	}
	for _, r := range list {
		if r.OperationID == op.ID {
			return &r, nil
		}
	}
	return nil, nil
}

// contract is target's contract, or nil when none is loaded.
func (s *server) contract(name string) *target.Contract {
	if s.contracts == nil {
		return nil
	}
	c, _ := s.contracts.Get(name)
	return c
}

// escalationView builds the detail page for p at now.
func (s *server) escalationView(op ledger.Operation, events []ledger.Event, open *ledger.Resolution,
	p *auth.Principal, now time.Time) views.EscalationPage {
	owner := s.owner(op.Target)
	c := s.contract(op.Target)
	v := views.EscalationPage{
		ID: op.ID, Tenant: op.Tenant, Target: op.Target, Intent: ledger.PlainText(op.IntentRef, 300),
		State: string(op.State), Status: op.State.Plain(owner), Story: operationHref(op.Tenant, op.ID),
		ProposeHref: escalationHref(op.Tenant, op.ID) + "/propose",
	}
	said, match := targetAnswers(events, op.Target, owner, now)
	replay, replayOK := replayAnswer(c, op, now)
	v.Answers = []views.Answer{said, match, replay, approverAnswer(c, op, open)}
	if open != nil {
		pv := proposalView(*open, op, p, now)
		v.Open = &pv
	}
	switch {
	case op.State == ledger.Unknown:
		v.NoPropose = "The reconciler still owns this operation: it is escalated on its next round, and can be resolved here then."
	case op.State != ledger.Escalated:
		v.NoPropose = "This operation is no longer escalated: " + op.State.Plain(owner) + "."
	case open != nil:
		v.NoPropose = "One proposal at a time: approve, reject or withdraw the open one first."
	default:
		v.Kinds = []views.KindChoice{
			{Value: string(ledger.KindConfirmSucceeded), Label: kindLabel(ledger.KindConfirmSucceeded),
				Help: "the target holds the object; give its id" + lookupHelp(c), NeedRef: true},
			{Value: string(ledger.KindConfirmNotApplied), Label: kindLabel(ledger.KindConfirmNotApplied),
				Help: "the target did not apply it; the client is told it was not applied"},
		}
		if replayOK {
			v.Kinds = append(v.Kinds, views.KindChoice{Value: string(ledger.KindReplay), Label: kindLabel(ledger.KindReplay),
				Help: "settle sends the approved request once more with the same key, then escalates again if that settles nothing"})
		}
		if c != nil && c.Lookup != nil {
			v.Kinds = append(v.Kinds, views.KindChoice{Value: string(ledger.KindSupersede), Label: kindLabel(ledger.KindSupersede),
				Help: "the target holds nothing under this operation's reference (settle checks by a lookup when it is proposed and again when it is approved); it ends as not applied and a new intent, " +
					ledger.PlainText(ledger.SupersedeIntent(op.IntentRef), 300) + ", is registered for the client to pick up"})
		} else {
			v.NoSupersede = noSupersede(op.Target)
		}
	}
	return v
}

func lookupHelp(c *target.Contract) string {
	if c != nil && c.Lookup != nil {
		return " (settle checks it with a lookup before accepting)"
	}
	return ""
}

// targetKinds are the events in which the target said something.
var targetKinds = []string{kindAnswer, kindLookup, kindWebhook, kindReplay, kindResend}

// targetAnswers answers the first two questions from the newest event in
// which the target spoke, and the newest field comparison.
func targetAnswers(events []ledger.Event, targetName, owner string, now time.Time) (said, match views.Answer) {
	said = views.Answer{ID: "said", Question: "What does the target say happened?",
		Answer: "Nothing: settle has no answer from " + targetName + " about this operation."}
	match = views.Answer{ID: "match", Question: "Does it match the approved request?",
		Answer: "Not known: the target has shown no object to compare."}
	saidDone, matchDone := false, false
	for i := len(events) - 1; i >= 0 && !(saidDone && matchDone); i-- {
		ev := events[i]
		var evidence map[string]any
		_ = json.Unmarshal(ev.Evidence, &evidence)
		if !saidDone && slices.Contains(targetKinds, eventKind(ev, evidence)) {
			story := storyEvent(ev, targetName, owner, 0, now)
			when := story.When
			said.Answer, said.When, said.Lines, saidDone = story.Title+",", &when, evidenceLines(evidence), true
		}
		if matchDone {
			continue
		}
		if bad, ok := evidence["mismatched_fields"]; ok {
			match.Answer = "No. These fields differ from the approved request: " + list(bad) + "."
			match.Lines = []string{"Only the names of the fields are shown; compare the values at the target."}
			matchDone = true
		} else if id, ok := evidence["remote_id"]; ok && ev.To == ledger.Succeeded {
			match.Answer = "Yes: object " + text(id) + " matched every field the contract compares."
			matchDone = true
		}
	}
	return said, match
}

// replayAnswer answers the third question and says whether a replay may
// be proposed: class A, something sent, and the window, less the client's
// timeout and the contract's replay margin, still open.
func replayAnswer(c *target.Contract, op ledger.Operation, now time.Time) (views.Answer, bool) {
	a := views.Answer{ID: "replay", Question: "Is a same-key replay still inside the documented window?"}
	switch {
	case c == nil:
		a.Answer = "Not known: no contract is loaded for " + op.Target + ", so a replay is not offered."
		return a, false
	case !slices.Contains(c.Classes(), target.ClassA):
		a.Answer = "No: " + op.Target + " keeps no idempotency keys settle can rely on, so a replay is never safe."
		return a, false
	case op.FirstClaimedAt == nil:
		a.Answer = "No: nothing was sent yet, so there is nothing to replay."
		return a, false
	}
	by := c.ReplayBy(op.RetryWindowEnd)
	when := timeView(&by, now, "")
	a.When = &when
	a.Lines = []string{"The window is " + durationText(op.RetryWindow) + " from the first send, less the request timeout (" +
		durationText(c.Timeout) + ") and the replay margin (" + durationText(c.ReplayMargin()) + ")."}
	if c.CanReplay(now, op.RetryWindowEnd) && ledger.ReplayOpen(op, 0, now) {
		a.Answer = "Yes: " + spanText(by.Sub(now)) + " left; the last safe moment is"
		return a, true
	}
	a.Answer = "No: the window closed"
	return a, false
}

// approverAnswer answers the fourth question.
func approverAnswer(c *target.Contract, op ledger.Operation, open *ledger.Resolution) views.Answer {
	a := views.Answer{ID: "approver", Question: "Who may approve?",
		Answer: "Another owner of " + op.Target + " in tenant " + op.Tenant + ": never the person who proposes."}
	if open != nil {
		a.Answer = "Any owner of " + op.Target + " in tenant " + op.Tenant + " except " +
			ledger.PlainText(strings.TrimSpace(open.ProposedByName+" ("+open.ProposedBy+")"), 300) + ", who proposed it."
	}
	if c != nil && c.Owner.Team != "" {
		a.Lines = []string{"The owning team: " + c.Owner.Team + ", escalation contact " + c.Owner.EscalationContact + "."}
	}
	return a
}
