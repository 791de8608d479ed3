package web

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"settle/auth"
	"settle/ledger"
	"settle/static"
	"settle/views"
)

// operationPage tells one operation's story. A tenant the principal may
// not read answers exactly like an unknown operation.
func (o *operationPages) operationPage(c echo.Context) error {
	ctx := c.Request().Context()
	p := auth.FromContext(ctx)
	tenant, id := c.Param("tenant"), c.Param("id")
	if !p.Can(auth.ViewOperations, tenant, "") {
		return notFound()
	}
	op, events, err := o.operationStory(ctx, p, tenant, id)
	if err != nil {
		return err
	}
	v := o.operationView(op, events, p.Can(auth.ViewPayload, tenant, op.Target), o.clock(c))
	var findings []ledger.Finding
	if v.Review, findings, err = o.operationReview(ctx, p, op, o.clock(c)); err != nil {
		return err
	}
	// An open finding changes what support tells the customer: the banner
	// at the top says so instead of the state's meaning.
	if m, tone, ok := findingsMeaning(findings, op, ownerOf(o.targets, op.Target)); ok {
		v.Meaning, v.Tone = m, tone
	}
	acts, props, err := o.operationActions(ctx, op)
	if err != nil {
		return err
	}
	v.Events = collapseRepeats(mergeActions(v.Events, events, acts, props, o.clock(c)))
	// The owner deciding it needs the decision page, one click away.
	if ledger.AwaitsPerson(op, o.clock(c)) && p.Can(auth.Resolve, tenant, op.Target) {
		v.EscalationHref = "/escalations/" + url.PathEscape(tenant) + "/" + url.PathEscape(op.ID)
	}
	v.Intent = ledger.PlainText(op.IntentRef, 200)
	v.Layout = o.layout(c, v.Intent+" · "+op.Target+" · "+op.Tenant, "operations")
	v.ServedIn = servedIn(c)
	return o.render(c, http.StatusOK, views.Operation(v))
}

// notFound is the one answer for an operation that does not exist or that
// the principal may not see.
func notFound() error { return echo.NewHTTPError(http.StatusNotFound) }

// operationStory reads the operation (with its payload only when p may see
// it) and its events.
func (o *operationPages) operationStory(ctx context.Context, p *auth.Principal, tenant, id string) (ledger.Operation, []ledger.Event, error) {
	op, err := o.store.Summary(ctx, tenant, id)
	switch ledger.ErrorCode(err) {
	case "":
	case ledger.ENotFound, ledger.EInvalid:
		return op, nil, notFound()
	default:
		return op, nil, err
	}
	if p.Can(auth.ViewPayload, tenant, op.Target) {
		if op, err = o.store.Get(ctx, tenant, id); err != nil {
			return op, nil, err
		}
	}
	events, err := o.store.Events(ctx, tenant, id)
	return op, events, err
}

// operationView builds the detail page; op.Payload is shown only when
// showPayload, which the caller decides from the viewer's permission.
func (o *operationPages) operationView(op ledger.Operation, events []ledger.Event, showPayload bool, now time.Time) views.OperationPage {
	owner := ownerOf(o.targets, op.Target)
	meaning, tone := statusMeaning(op, op.Target, owner)
	v := views.OperationPage{
		ID: op.ID, State: string(op.State), Status: op.State.Plain(owner), Meaning: meaning, Tone: tone,
		Back: "/operations",
		Refs: []views.Ref{
			{ID: "operation-id", Label: "Operation id", Shown: views.Shown{Text: op.ID}},
			shownRef("intent-ref", "Intent reference", op.IntentRef),
			shownRef("remote-key", "Remote key (sent as the idempotency key)", op.RemoteKey),
		},
	}
	if op.RemoteRef != "" {
		// The provider's id, as it answered: never trusted to be plain.
		v.Refs = append(v.Refs, shownRef("remote-ref", "Target's reference", op.RemoteRef))
	}
	v.Facts = o.operationFacts(op, owner, now)
	attempt := 0
	for _, ev := range events {
		if ev.From == ledger.Prepared && ev.To == ledger.InFlight {
			attempt++
		}
		v.Events = append(v.Events, storyEvent(ev, op.Target, owner, attempt, now))
	}
	fingerprint := "sha256:" + hex.EncodeToString(op.PayloadHash)
	if showPayload && op.Redacted() {
		v.PayloadNote = "The request was removed under the retention rule once the operation had long been final; its fingerprint stays, so a repeated registration is still checked against it. Fingerprint " + fingerprint + "."
	} else if showPayload && op.Payload != nil {
		var buf bytes.Buffer
		if json.Indent(&buf, op.Payload, "", "  ") == nil {
			v.PayloadShown, v.Payload = true, buf.String()
		}
		v.PayloadNote = "The approved request, exactly as sent. Fingerprint " + fingerprint + "."
	} else {
		v.PayloadNote = "The request itself is shown only to the target's owners and to administrators. Fingerprint " + fingerprint + "."
	}
	return v
}

func (o *operationPages) operationFacts(op ledger.Operation, owner string, now time.Time) []views.Fact {
	created, updated := timeView(&op.CreatedAt, now, ""), timeView(&op.UpdatedAt, now, "")
	facts := []views.Fact{
		{ID: "tenant", Label: "Tenant", Value: op.Tenant},
		{ID: "type", Label: "Type", Value: op.Type},
		{ID: "target", Label: "Target", Value: op.Target},
		{ID: "owner", Label: "Owning team", Value: orTeam(owner)},
		{ID: "attempts", Label: "Sends", Value: sendsText(op.Attempts)},
		{ID: "created", Label: "Registered", Time: &created},
		{ID: "updated", Label: "Last change", Time: &updated},
		{ID: "retry-window", Label: "Same-key retry window", Value: retryWindowText(op, now)},
	}
	// A final or escalated operation's deadline changes nothing any more.
	if d, ok := deadlineText(op, owner, now); ok {
		facts = append(facts, views.Fact{ID: "deadline", Label: "Deadline", Value: d})
	}
	if op.State == ledger.Unknown && op.NextReconcileAt != nil {
		next := timeView(op.NextReconcileAt, now, "")
		facts = append(facts, views.Fact{ID: "next-check", Label: "Next check with the target", Time: &next})
	}
	if op.Reason != "" {
		facts = append(facts, views.Fact{ID: "reason", Label: "Latest reason", Value: ledger.PlainText(op.Reason, 500)})
	}
	return facts
}

func sendsText(n int) string {
	switch n {
	case 0:
		return "not sent yet"
	case 1:
		return "sent once"
	}
	return "sent " + countText(n, false) + " times, always with the same key"
}

// retryWindowText says whether settle may still repeat the request with
// the same idempotency key.
func retryWindowText(op ledger.Operation, now time.Time) string {
	if op.RetryWindow <= 0 {
		return "none documented: settle never repeats the request with the same key"
	}
	w := durationText(op.RetryWindow)
	if op.FirstClaimedAt == nil {
		return w + " from the first send"
	}
	end := absoluteTime(op.RetryWindowEnd, now.Location())
	if now.Before(op.RetryWindowEnd) {
		return w + ", open until " + end
	}
	return w + ", closed at " + end
}

// staticFile serves an embedded file under its hashed name: the name
// changes with the content, so browsers may keep it for a year.
func staticFile(c echo.Context) error {
	a, ok := static.Lookup(c.Param("name"))
	if !ok {
		return notFound()
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "public, max-age=31536000, immutable")
	return c.Blob(http.StatusOK, a.ContentType, a.Body)
}

// shownRef is a reference as the CLI shows it too (ledger.ShowText),
// marked when it had to be escaped.
func shownRef(id, label, value string) views.Ref {
	return views.Ref{ID: id, Label: label, Shown: shownValue(value)}
}
