package web

import (
	"context"
	"strings"
	"testing"
	"time"

	"settle/ledger"
	"settle/views"
)

func TestStatusMeaning_EveryState(t *testing.T) {
	t.Parallel()
	want := map[ledger.State][]string{
		ledger.Prepared:       {"Scheduled", "nothing has reached payments yet"},
		ledger.InFlight:       {"Sending", "Do not tell the customer it failed or succeeded"},
		ledger.Succeeded:      {"Confirmed", "its reference: ch_1", "tell the customer it is done"},
		ledger.FailedTerminal: {"Not applied", "did not happen"},
		ledger.Unknown:        {"Confirmation pending — do not tell the customer it failed or succeeded"},
		ledger.Escalated:      {"Under review by Payments team — do not tell the customer it failed or succeeded"},
	}
	for _, st := range ledger.States {
		text, tone := statusMeaning(ledger.Operation{State: st, RemoteRef: "ch_1"}, "payments", "Payments team")
		if tone == "" || len(want[st]) == 0 {
			t.Fatalf("%s: no tone or no expectation", st)
		}
		for _, w := range want[st] {
			if !strings.Contains(text, w) {
				t.Errorf("%s: %q lacks %q", st, text, w)
			}
		}
	}
}

// Every kind of event settle writes — by the store, the executor, the
// sweeper, the reconciler (replay, resend, lookup, decisions), the webhook
// inbox and a manual resolution — reads as a sentence with its evidence.
func TestStoryEvent_EveryKind(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := now.Add(-3 * time.Minute)
	for _, c := range []struct {
		name  string
		ev    ledger.Event
		kind  string
		title string
		lines []string
		by    string
	}{
		{"Created", ledger.Event{To: ledger.Prepared, Actor: "client", Reason: "created"},
			kindCreated, "Registered by the client service", []string{"Status became “Scheduled”."}, "the client service"},
		{"CreatedByRequest", ledger.Event{To: ledger.Prepared, Actor: "client", Reason: "created", Evidence: []byte(`{"request_id":"trace-42"}`)},
			kindCreated, "Registered by the client service", []string{"Status became “Scheduled”.", "Request id: trace-42."}, "the client service"},
		{"Claimed", ledger.Event{From: ledger.Prepared, To: ledger.InFlight, Actor: ledger.ActorExecutor, Reason: "claimed"},
			kindClaimed, "Sent to payments (attempt 2)", []string{"idempotency key"}, "settle's sender"},
		{"AnswerSucceeded", ledger.Event{From: ledger.InFlight, To: ledger.Succeeded, Actor: ledger.ActorExecutor,
			Reason: "confirmed by the target", Evidence: []byte(`{"status":201,"outcome":"succeeded","remote_id":"ch_9"}`)},
			kindAnswer, "payments confirmed it", []string{"The target answered HTTP 201, which its contract reads as: success.",
				"The target's object: ch_9.", "Status became “Confirmed”.", "Recorded reason: confirmed by the target."}, "settle's sender"},
		{"AnswerRejected", ledger.Event{From: ledger.InFlight, To: ledger.FailedTerminal, Actor: ledger.ActorExecutor,
			Evidence: []byte(`{"status":402,"outcome":"rejected_without_side_effect","documentation":"https://docs.example/errors"}`)},
			kindAnswer, "payments refused it, with no effect", []string{"rejected, documented as having no effect", "Documented at: https://docs.example/errors."}, ""},
		{"AnswerNoResponse", ledger.Event{From: ledger.InFlight, To: ledger.Unknown, Actor: ledger.ActorExecutor,
			Reason: "no response: timeout", Evidence: []byte(`{"failure":"timeout"}`)},
			kindAnswer, "The outcome of the send is unknown", []string{"No answer from the target: timeout.", "Status became “Confirmation pending”."}, ""},
		{"AnswerMismatch", ledger.Event{From: ledger.InFlight, To: ledger.Escalated, Actor: ledger.ActorExecutor,
			Evidence: []byte(`{"status":200,"outcome":"succeeded","remote_id":"ch_2","mismatched_fields":["amount","currency"]}`)},
			kindAnswer, "Escalated to Payments team", []string{"Fields that differ from the approved request: amount, currency."}, ""},
		{"AnswerMismatchKinds", ledger.Event{From: ledger.InFlight, To: ledger.Escalated, Actor: ledger.ActorExecutor,
			Evidence: []byte(`{"status":200,"outcome":"succeeded","remote_id":"ch_2","mismatched_fields":["amount","currency"],` +
				`"mismatch_kinds":{"currency":"string vs number","amount":"number vs string"}}`)},
			kindAnswer, "Escalated to Payments team", []string{"What each side holds there (kinds only, never values): amount (number vs string), currency (string vs number)."}, ""},
		{"FailedObject", ledger.Event{From: ledger.InFlight, To: ledger.FailedTerminal, Actor: ledger.ActorExecutor,
			Evidence: []byte(`{"status":200,"outcome":"succeeded","remote_id":"ch_3","object_status":"failed","replayed":true}`)},
			kindAnswer, "payments refused it, with no effect", []string{"The object's own status: failed.", "saved answer to the first request"}, ""},
		{"NotSent", ledger.Event{From: ledger.InFlight, To: ledger.Escalated, Actor: ledger.ActorExecutor,
			Reason: `nothing was sent: tenant acme has no parameter "account"`, Evidence: []byte(`{"sent":false,"missing":["account"]}`)},
			kindNotSent, "Not sent: the request lacks something settle must not guess", []string{"Nothing was sent to the target. The tenant lacks the parameters: account.",
				`Recorded reason: nothing was sent: tenant acme has no parameter "account".`, "Status became “Under review by Payments team”."}, ""},
		{"LeaseExpired", ledger.Event{From: ledger.InFlight, To: ledger.Unknown, Actor: ledger.ActorSweeper, Reason: ledger.ReasonLeaseExpired},
			kindLeaseExpired, "The sender did not report back in time", []string{"may or may not have reached payments"}, "settle's lease check"},
		{"Tampered", ledger.Event{From: ledger.InFlight, To: ledger.Escalated, Actor: ledger.ActorExecutor, Reason: ledger.ReasonPayloadTampered},
			kindTampered, "Stopped before sending: the stored request was altered", []string{"was not sent"}, ""},
		{"Replay", ledger.Event{From: ledger.Unknown, To: ledger.Unknown, Actor: ledger.ActorReconciler,
			Evidence: []byte(`{"via":"same-key replay","status":409,"outcome":"in_progress"}`)},
			kindReplay, "settle sent the same request again with the same key", []string{"another attempt with the same key is still running"}, "settle's reconciler"},
		{"Resend", ledger.Event{From: ledger.Unknown, To: ledger.Escalated, Actor: ledger.ActorReconciler,
			Evidence: []byte(`{"via":"conditional resend","status":412,"outcome":"unknown"}`)},
			kindResend, "settle sent it again on condition that nothing had changed", []string{"HTTP 412, which its contract reads as: does not prove an outcome"}, ""},
		{"LookupNotFound", ledger.Event{From: ledger.Unknown, To: ledger.Unknown, Actor: ledger.ActorReconciler,
			Reason:   "not found yet; absence alone proves nothing",
			Evidence: []byte(`{"via":"lookup","status":200,"results":0,"absence":[{"rule":"visibility","met":false,"detail":"2m left"},{"rule":"late_requests","met":true,"detail":""},{"rule":"replay","met":true}]}`)},
			kindLookup, "settle looked it up at payments", []string{"The lookup answered", "The lookup found no object carrying settle's reference.",
				"Absence check — long enough since the send for the object to be visible: not yet (2m left).",
				"Absence check — a late request can no longer create it: yes.", "Absence check — the same-key retention window is over: yes."}, ""},
		{"LookupDuplicate", ledger.Event{From: ledger.Unknown, To: ledger.Escalated, Actor: ledger.ActorReconciler,
			Evidence: []byte(`{"via":"lookup","status":200,"results":2,"remote_ids":["a","b"]}`)},
			kindLookup, "settle looked it up at payments", []string{"The lookup found 2 objects", "Objects carrying settle's reference: a, b."}, ""},
		{"LookupNoAnswer", ledger.Event{From: ledger.Unknown, To: ledger.Unknown, Actor: ledger.ActorReconciler,
			Evidence: []byte(`{"via":"lookup","status":0,"failure":"connection reset"}`)},
			kindLookup, "settle looked it up at payments", []string{"No answer from the target: connection reset."}, ""},
		{"NoWayToConfirm", ledger.Event{From: ledger.Unknown, To: ledger.Escalated, Actor: ledger.ActorReconciler,
			Evidence: []byte(`{"classes":["D"]}`)},
			kindDecision, "Escalated to Payments team", []string{"What the target offers to confirm an outcome: no way to confirm."}, ""},
		{"Rescheduled", ledger.Event{From: ledger.Unknown, To: ledger.Unknown, Actor: ledger.ActorReconciler},
			kindDecision, "Checked again: still not confirmed", nil, ""},
		{"Webhook", ledger.Event{From: ledger.Unknown, To: ledger.Succeeded, Actor: "webhook", Reason: "confirmed by a verified webhook event",
			Evidence: []byte(`{"via":"webhook","event_id":"evt_1","delivery_id":7,"remote_id":"ch_3"}`)},
			kindWebhook, "payments sent an event about it", []string{"Webhook event evt_1 (delivery 7), signature verified.", "The target's object: ch_3."}, "the target's webhook"},
		{"Resolution", ledger.Event{From: ledger.Escalated, To: ledger.FailedTerminal, Actor: "person:bo", Reason: "manual resolution: provider confirmed no charge",
			Evidence: []byte(`{"resolution_id":4,"proposed_by":"ada","approved_by":"bo"}`)},
			kindResolution, "Resolved by hand: Not applied", []string{"Proposed by ada and approved by bo (resolution 4).", "Their reason: provider confirmed no charge."}, "bo"},
		{"UnknownEvidenceKey", ledger.Event{From: ledger.Unknown, To: ledger.Unknown, Actor: "cli:ops",
			Evidence: []byte(`{"note":"x"}`)},
			kindDecision, "Checked again: still not confirmed", []string{`note: "x"`}, "ops (command line)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.ev.At = at
			v := storyEvent(c.ev, "payments", "Payments team", 2, now)
			if v.Kind != c.kind || v.Title != c.title {
				t.Fatalf("kind %q title %q, want %q %q", v.Kind, v.Title, c.kind, c.title)
			}
			if c.by != "" && v.By != c.by {
				t.Errorf("by %q, want %q", v.By, c.by)
			}
			if v.When.Relative != "3 min ago" || v.When.UTC != "2026-12-01 11:57:00 UTC" {
				t.Errorf("when %+v", v.When)
			}
			all := strings.Join(v.Lines, "\n")
			for _, w := range c.lines {
				if !strings.Contains(all, w) {
					t.Errorf("lines lack %q:\n%s", w, all)
				}
			}
		})
	}
}

func TestRelativeAndCounts(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for d, want := range map[time.Duration]string{
		10 * time.Second: "just now", 3 * time.Minute: "3 min ago", 5 * time.Hour: "5 h ago",
		26 * time.Hour: "1 day ago", 72 * time.Hour: "3 days ago", -10 * time.Minute: "in 10 min",
		-(time.Hour - time.Second): "in 1 h", 23*time.Hour + 45*time.Minute: "1 day ago",
	} {
		if got := relative(now.Add(-d), now); got != want {
			t.Errorf("relative(-%s) = %q, want %q", d, got, want)
		}
	}
	for _, c := range []struct {
		n      int
		capped bool
		want   string
	}{{0, false, "0"}, {999, false, "999"}, {1000, false, "1,000"}, {10000, true, "10,000+"}, {1234567, false, "1,234,567"}} {
		if got := countText(c.n, c.capped); got != c.want {
			t.Errorf("countText(%d, %v) = %q, want %q", c.n, c.capped, got, c.want)
		}
	}
	for d, want := range map[time.Duration]string{0: "none", 24 * time.Hour: "1 day", 48 * time.Hour: "2 days",
		3 * time.Hour: "3 h", 90 * time.Minute: "90 min"} {
		if got := durationText(d); got != want {
			t.Errorf("durationText(%s) = %q, want %q", d, got, want)
		}
	}
}

// The detail page, rendered, says each state's plain status and what it
// means for the customer, and never shows a payload it was not allowed to.
func TestOperationView_RendersEveryState(t *testing.T) {
	t.Parallel()
	s := &operationPages{targets: staticTargets{"payments": {Owner: "Payments team", RetryWindow: time.Hour}}}
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, st := range ledger.States {
		op := ledger.Operation{ID: "op1", Tenant: "acme", Target: "payments", State: st, RemoteRef: "ch_1",
			Payload: []byte(`{"amount":100}`), PayloadHash: []byte{1, 2}, CreatedAt: now, UpdatedAt: now}
		for _, shown := range []bool{false, true} {
			var b strings.Builder
			if err := views.Operation(s.operationView(op, nil, shown, now)).Render(context.Background(), &b); err != nil {
				t.Fatal(err)
			}
			page := b.String()
			plain := st.Plain("Payments team")
			for _, want := range []string{`data-testid="status">` + plain + `<`, `data-testid="meaning">` + plain + " — "} {
				if !strings.Contains(page, want) {
					t.Errorf("%s: page lacks %s", st, want)
				}
			}
			if strings.Contains(page, "amount") != shown {
				t.Errorf("%s: payload shown %v, want %v", st, !shown, shown)
			}
		}
	}
}

type staticTargets map[string]Target

func (s staticTargets) Target(name string) (Target, bool) { t, ok := s[name]; return t, ok }

func TestSpanText(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second:                         "less than a minute",
		59 * time.Second:                     "less than a minute",
		7*time.Minute + 30*time.Second:       "7 min",
		5*time.Hour + 12*time.Minute:         "5 h 12 min",
		23*time.Hour + 59*time.Minute + 34e9: "23 h 59 min",
		24 * time.Hour:                       "1 day",
		27 * time.Hour:                       "1 day 3 h",
		51*time.Hour + 10*time.Minute:        "2 days 3 h",
	} {
		if got := spanText(d); got != want {
			t.Errorf("spanText(%v) = %q, want %q", d, got, want)
		}
	}
}
