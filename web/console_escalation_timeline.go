package web

import (
	"context"
	"slices"
	"time"

	"settle/ledger"
	"settle/views"
)

// operationActions returns the people's actions on op (proposals,
// approvals, rejections), oldest first.
func (o *operationPages) operationActions(ctx context.Context, op ledger.Operation) ([]ledger.Action, error) {
	acts, err := o.store.Actions(ctx, ledger.ActionFilter{Tenant: op.Tenant, OperationID: op.ID})
	if err != nil {
		return nil, err
	}
	slices.Reverse(acts) // newest first from the store
	return acts, nil
}

// mergeActions puts the actions into the story in time order: story[i]
// tells events[i], and an action comes before the first event that is
// later than it.
func mergeActions(story []views.Event, events []ledger.Event, acts []ledger.Action, now time.Time) []views.Event {
	if len(acts) == 0 {
		return story
	}
	out := make([]views.Event, 0, len(story)+len(acts))
	j := 0
	for i, ev := range events {
		for j < len(acts) && !acts[j].At.After(ev.At) {
			out = append(out, actionEvent(acts[j], now))
			j++
		}
		out = append(out, story[i])
	}
	for ; j < len(acts); j++ {
		out = append(out, actionEvent(acts[j], now))
	}
	return out
}

// actionTitles say what a person did.
var actionTitles = map[ledger.ActionKind]string{
	ledger.ActionPropose: "Proposed a manual resolution",
	ledger.ActionApprove: "Decided on the proposal",
	ledger.ActionReject:  "Rejected the proposal",
	// Reviews of inbound evidence and audit findings about the operation.
	ledger.ActionQuarantineLink:     "Linked an inbound event to this operation as evidence",
	ledger.ActionQuarantineResolve:  "Dismissed an inbound event about this operation",
	ledger.ActionFindingAcknowledge: "Acknowledged an audit finding",
	// The tenant's settings, for a timeline that ever shows them.
	ledger.ActionTokenCreate:           "Created an API token",
	ledger.ActionTokenRevoke:           "Revoked an API token",
	ledger.ActionCallbackSet:           "Set the callback address",
	ledger.ActionCallbackRemove:        "Removed the callback address",
	ledger.ActionCallbackRetry:         "Queued the given-up callbacks again",
	ledger.ActionEscalationNoticeRetry: "Queued the given-up escalation notices again",
}

// proposalKinds are the actions about a proposal, titled with its number.
var proposalKinds = map[ledger.ActionKind]bool{ledger.ActionPropose: true, ledger.ActionApprove: true, ledger.ActionReject: true}

// actionEvent tells one person's action: who, under which role, why, and
// the request that carried it.
func actionEvent(a ledger.Action, now time.Time) views.Event {
	title := actionTitles[a.Kind]
	switch {
	case a.Kind == ledger.ActionApprove && a.Reason == "approved":
		title = "Approved the proposal"
	case a.Kind == ledger.ActionApprove:
		title = "Tried to approve the proposal, too late: it is void"
	case title == "":
		// A kind newer than this table: plain words, the code under detail.
		title = "Recorded a person's action"
	}
	if proposalKinds[a.Kind] {
		title += " (proposal " + a.Object + ")"
	}
	v := views.Event{Kind: "action", Title: title, When: timeView(&a.At, now, ""),
		By: ledger.PlainText(a.Name, 200) + " (" + a.Role + ")"}
	if a.Reason != "" {
		v.Lines = append(v.Lines, "Reason: "+ledger.PlainText(a.Reason, 500)+".")
	}
	if a.RequestID != "" {
		v.Lines = append(v.Lines, "Request id: "+ledger.PlainText(a.RequestID, 200)+".")
	}
	if _, known := actionTitles[a.Kind]; !known && a.Kind != ledger.ActionApprove {
		v.Detail = append(v.Detail, "Action "+ledger.PlainText(string(a.Kind), 100)+".")
	}
	return v
}

// collapseRepeats tells identical events in a row once: a target that
// lags answers "not found yet" to lookup after lookup, and twelve equal
// blocks say nothing a count and a span do not. Events are equal when
// kind, title, actor and every plain line are (their technical detail
// differs by the time waited); the last one stands for them, with its
// detail, Repeats and From.
func collapseRepeats(story []views.Event) []views.Event {
	out := story[:0:0]
	for _, e := range story {
		if n := len(out); n > 0 && sameStory(out[n-1], e) {
			last := &out[n-1]
			if last.Repeats == 0 {
				last.Repeats, last.From = 1, last.When
			}
			last.Repeats++
			last.When, last.Detail = e.When, e.Detail
			continue
		}
		out = append(out, e)
	}
	return out
}

func sameStory(a, b views.Event) bool {
	return a.Kind == b.Kind && a.Title == b.Title && a.By == b.By &&
		slices.Equal(a.Lines, b.Lines)
}
