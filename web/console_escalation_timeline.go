package web

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"settle/ledger"
	"settle/views"
)

// operationActions returns the people's actions on op (proposals,
// approvals, rejections), oldest first, with the proposals they are
// about by number (the tenant's latest 500; an older one is told without
// its content).
func (o *operationPages) operationActions(ctx context.Context, op ledger.Operation) ([]ledger.Action, map[string]ledger.Resolution, error) {
	acts, err := o.store.Actions(ctx, ledger.ActionFilter{Tenant: op.Tenant, OperationID: op.ID})
	if err != nil {
		return nil, nil, err
	}
	slices.Reverse(acts) // newest first from the store
	props := map[string]ledger.Resolution{}
	for _, a := range acts {
		if proposalKinds[a.Kind] {
			rs, err := o.store.Resolutions(ctx, op.Tenant, false)
			if err != nil {
				return nil, nil, err
			}
			for _, r := range rs {
				if r.OperationID == op.ID {
					props[strconv.FormatInt(r.ID, 10)] = r
				}
			}
			break
		}
	}
	return acts, props, nil
}

// mergeActions puts the actions into the story in time order: story[i]
// tells events[i], and an action comes before the first event that is
// later than it. props are the proposals the actions name, by number.
func mergeActions(story []views.Event, events []ledger.Event, acts []ledger.Action, props map[string]ledger.Resolution, now time.Time) []views.Event {
	if len(acts) == 0 {
		return story
	}
	out := make([]views.Event, 0, len(story)+len(acts))
	j := 0
	for i, ev := range events {
		for j < len(acts) && !acts[j].At.After(ev.At) {
			out = append(out, actionEvent(acts[j], props, now))
			j++
		}
		out = append(out, story[i])
	}
	for ; j < len(acts); j++ {
		out = append(out, actionEvent(acts[j], props, now))
	}
	return out
}

// actionTitles say what a person did, for every kind in ledger.ActionKinds.
var actionTitles = map[ledger.ActionKind]string{
	ledger.ActionPropose: "Proposed a manual resolution",
	ledger.ActionApprove: "Decided on the proposal",
	ledger.ActionReject:  "Rejected the proposal",
	// Reviews of inbound evidence and audit findings about the operation.
	ledger.ActionQuarantineLink:     "Linked an inbound event to this operation as evidence",
	ledger.ActionQuarantineResolve:  "Dismissed an inbound event about this operation",
	ledger.ActionFindingAcknowledge: "Acknowledged an audit finding",
	// The tenant's settings, for a timeline that ever shows them.
	ledger.ActionTenantCreate:          "Created the tenant",
	ledger.ActionTokenCreate:           "Created an API token",
	ledger.ActionTokenRevoke:           "Revoked an API token",
	ledger.ActionCallbackSet:           "Set the callback address",
	ledger.ActionCallbackRemove:        "Removed the callback address",
	ledger.ActionCallbackRetry:         "Queued the given-up callbacks again",
	ledger.ActionEscalationNoticeRetry: "Queued the given-up escalation notices again",
	ledger.ActionTenantParamSet:        "Set a request parameter",
	ledger.ActionTenantParamUnset:      "Removed a request parameter",
}

// proposalKinds are the actions about a proposal, titled with its number.
var proposalKinds = map[ledger.ActionKind]bool{ledger.ActionPropose: true, ledger.ActionApprove: true, ledger.ActionReject: true}

// actionWords is the one place an action's kind becomes words: what a
// person did, and for a proposal what it asked for ("Proposed: confirm
// succeeded with ch_1"). A kind newer than the table gets plain words,
// never its code.
func actionWords(a ledger.Action, props map[string]ledger.Resolution) string {
	title, known := actionTitles[a.Kind]
	if !known {
		return "Recorded a person's action"
	}
	if !proposalKinds[a.Kind] {
		return title
	}
	verb := map[ledger.ActionKind]string{ledger.ActionPropose: "Proposed", ledger.ActionReject: "Rejected", ledger.ActionApprove: "Approved"}[a.Kind]
	switch {
	case a.Kind == ledger.ActionApprove && strings.HasPrefix(a.Reason, "supersedes "):
	case a.Kind == ledger.ActionApprove && !approvedReason(a.Reason):
		verb = "Too late to approve (the proposal is void)"
	}
	what := "a manual resolution"
	if r, ok := props[a.Object]; ok {
		what = proposalWords(r)
	}
	return verb + ": " + what + " (proposal " + ledger.PlainText(a.Object, 40) + ")"
}

// approvedReason tells an approval that applied its proposal: "approved",
// maybe followed by what the approver confirmed.
func approvedReason(r string) bool {
	return r == ledger.DecisionApproved || strings.HasPrefix(r, ledger.DecisionApproved+"; ")
}

// proposalWords says what r asks for, in a sentence's middle.
func proposalWords(r ledger.Resolution) string {
	w := strings.ToLower(kindLabel(r.Kind)[:1]) + kindLabel(r.Kind)[1:]
	if r.RemoteRef != "" {
		w += " with " + ledger.PlainText(r.RemoteRef, 300)
	}
	return w
}

// personName names a person by display name, with the role when given;
// a name settle does not know is said plainly, never replaced by the
// stable subject.
func personName(name, role string) string {
	n := ledger.PlainText(strings.TrimSpace(name), 200)
	if n == "" {
		n = "a person whose name settle does not know"
	}
	if role != "" {
		n += " (" + ledger.PlainText(role, 40) + ")"
	}
	return n
}

// actionEvent tells one person's action: who, under which role, why, and
// the request that carried it.
func actionEvent(a ledger.Action, props map[string]ledger.Resolution, now time.Time) views.Event {
	v := views.Event{Kind: "action", Title: actionWords(a, props), When: timeView(&a.At, now, ""),
		By: personName(a.Name, a.Role)}
	switch {
	case a.Kind == ledger.ActionApprove && approvedReason(a.Reason):
		// What the approver confirmed explicitly, recorded after "approved; ".
		for _, n := range strings.Split(a.Reason, "; ")[1:] {
			v.Lines = append(v.Lines, "The approver "+ledger.PlainText(n, 300)+".")
		}
	case a.Reason != "":
		v.Lines = append(v.Lines, "Reason: "+ledger.PlainText(a.Reason, 500)+".")
	}
	if r, ok := props[a.Object]; ok && a.Kind == ledger.ActionPropose && r.Reason != "" && r.Reason != a.Reason {
		v.Lines = append(v.Lines, "Evidence given: "+ledger.PlainText(r.Reason, 500)+".")
	}
	if a.RequestID != "" {
		v.Lines = append(v.Lines, "Request id: "+ledger.PlainText(a.RequestID, 200)+".")
	}
	if _, known := actionTitles[a.Kind]; !known {
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
