package resolve

import (
	"context"
	"encoding/json"
	"time"

	"settle/ledger"
)

// Source says where a piece of evidence came from.
type Source string

// The sources of inbound evidence.
const (
	SourceSend       Source = "send"       // the target's answer to a send, replay or resend
	SourceLookup     Source = "lookup"     // the target's answer to settle's lookup
	SourceWebhook    Source = "webhook"    // a webhook event settle matched to the operation
	SourceQuarantine Source = "quarantine" // a quarantined webhook event that names the operation
)

// Compared says how an object was compared with the approved payload.
type Compared string

// The comparisons.
const (
	NotCompared Compared = ""           // settle compared no field of it
	Matched     Compared = "matched"    // every field the contract compares agreed
	Mismatched  Compared = "mismatched" // the fields in Seen.Mismatched differ
)

// Seen is one piece of what the target said about an operation: an answer
// in its log or a quarantined event naming it. It is evidence a person
// weighs; only the ledger's own records are verdicts.
type Seen struct {
	Source     Source
	At         time.Time
	EventID    string   // a webhook event's own id
	RemoteID   string   // the object it shows; "" for none
	Status     string   // the object's own status, as the contract lists it
	Compared   Compared // how the object compared with the approved payload
	Mismatched []string // the fields that differ (names only)
	// Verified: the target's word reached settle authenticated — its
	// answer to settle's own request, or a webhook whose signature was
	// checked. A quarantined event's signature was checked, but settle
	// did not attribute it: the person does.
	Verified bool
	Results  int    // a lookup's number of objects found; -1 when not read
	Failed   bool   // the answer documents that nothing was applied
	Note     string // a quarantined event: why it was quarantined
	Reviewed string // a quarantined event: the reviewer's decision, if any
	Event    *ledger.Event
	Item     *ledger.QuarantineItem
}

// ShowsObject reports whether the piece shows an object at the target
// that was not documented as failed.
func (s Seen) ShowsObject() bool { return s.RemoteID != "" && !s.Failed }

// gather reads every piece of inbound evidence about op: the target's
// answers in its log and the quarantined events that name it (linked,
// attributed, or carrying its reference or object), newest first.
func (s *Service) gather(ctx context.Context, op ledger.Operation) ([]ledger.Event, []ledger.QuarantineItem, error) {
	events, err := s.store.Events(ctx, op.Tenant, op.ID)
	if err != nil {
		return nil, nil, err
	}
	quarantined, err := s.store.ListQuarantine(ctx, ledger.QuarantineFilter{Tenants: []string{op.Tenant},
		About: &ledger.QuarantineAbout{OperationID: op.ID, Reference: op.RemoteKey, RemoteID: op.RemoteRef}})
	if err != nil {
		return nil, nil, err
	}
	return events, quarantined, nil
}

// evidenceOf is the one definition of what settle holds about an
// operation for a person deciding it: every answer of the target in the
// log (events, oldest first) and every quarantined event (newest first),
// merged newest first.
func evidenceOf(events []ledger.Event, quarantined []ledger.QuarantineItem) []Seen {
	var out []Seen
	qi := 0
	for i := len(events) - 1; i >= -1; i-- {
		// Quarantined events newer than the log event come first.
		for ; qi < len(quarantined) && (i < 0 || quarantined[qi].At.After(events[i].At)); qi++ {
			out = append(out, quarantinedSeen(&quarantined[qi]))
		}
		if i < 0 {
			break
		}
		var evidence map[string]any
		_ = json.Unmarshal(events[i].Evidence, &evidence)
		if !TargetSpoke(events[i], evidence) {
			continue
		}
		out = append(out, loggedSeen(&events[i], evidence))
	}
	return out
}

func loggedSeen(ev *ledger.Event, evidence map[string]any) Seen {
	s := Seen{Source: SourceSend, At: ev.At, Verified: true, Results: -1, Event: ev,
		Failed: ev.To == ledger.FailedTerminal}
	switch evidence["via"] {
	case "lookup":
		s.Source = SourceLookup
	case "webhook":
		s.Source = SourceWebhook
	}
	s.EventID, _ = evidence["event_id"].(string)
	s.RemoteID, _ = evidence["remote_id"].(string)
	s.Status, _ = evidence["object_status"].(string)
	if n, ok := evidence["results"].(float64); ok {
		s.Results = int(n)
	}
	if bad, ok := evidence["mismatched_fields"]; ok {
		s.Compared, s.Mismatched = Mismatched, stringsOf(bad)
	} else if s.RemoteID != "" && (ev.To == ledger.Succeeded || ev.To == ledger.FailedTerminal) {
		// The reconciler records a final state from an object only after
		// every match field agreed (reconciler.ObjectVerdict).
		s.Compared = Matched
	}
	return s
}

func quarantinedSeen(q *ledger.QuarantineItem) Seen {
	return Seen{Source: SourceQuarantine, At: q.At, EventID: q.EventID, RemoteID: q.RemoteID,
		Verified: q.DeliveryID != 0, Results: -1, Note: q.Reason, Reviewed: q.Resolution, Item: q}
}

// latestLookup is the newest lookup answer in evidence, or nil.
func latestLookup(evidence []Seen) *Seen {
	for i := range evidence {
		if evidence[i].Source == SourceLookup {
			return &evidence[i]
		}
	}
	return nil
}

// Suggestion is a proposal the evidence supports, for the form to fill
// in: "confirm succeeded with ch_1 from the webhook of 10:42".
type Suggestion struct {
	Kind      ledger.ResolutionKind
	RemoteRef string
	From      Seen // the newest piece showing the object
}

// suggestions offers "confirm succeeded" with each object the evidence
// shows that did not differ from the approved request, newest first, once
// per object.
func suggestions(evidence []Seen) []Suggestion {
	var out []Suggestion
	seen := map[string]bool{}
	for _, e := range evidence {
		if !e.ShowsObject() || e.Compared == Mismatched || seen[e.RemoteID] ||
			ledger.CheckProviderText("remote_ref", e.RemoteID) != nil {
			continue
		}
		seen[e.RemoteID] = true
		out = append(out, Suggestion{Kind: ledger.KindConfirmSucceeded, RemoteRef: e.RemoteID, From: e})
	}
	return out
}
