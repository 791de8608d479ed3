package web

import (
	"cmp"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"settle/ledger"
	"settle/views"
)

// This file holds every sentence the console says about an operation: its
// status, what that means for the customer, and each event of its story.
// Templates only display these strings; the tests cover every state and
// every kind of event the ledger, the executor, the reconciler and the
// webhook inbox write.

// statusMeaning says what a state means for the customer, and the tone
// the page gives it. target names the target, owner its owning team.
func statusMeaning(op ledger.Operation, target, owner string) (text, tone string) {
	if owner == "" {
		owner = "the owning team"
	}
	switch op.State {
	case ledger.Prepared:
		return fmt.Sprintf("Scheduled — approved and waiting to be sent; nothing has reached %s yet. "+
			"Tell the customer it is scheduled, not that it is done.", target), "info"
	case ledger.InFlight:
		return fmt.Sprintf("Sending — the request is going to %s right now. "+
			"Do not tell the customer it failed or succeeded; look again in a few minutes.", target), "info"
	case ledger.Succeeded:
		return fmt.Sprintf("Confirmed — %s confirmed it (its reference: %s). "+
			"You can tell the customer it is done.", target, shownText(op.RemoteRef)), "ok"
	case ledger.FailedTerminal:
		return fmt.Sprintf("Not applied — %s did not apply it, and settle holds the evidence. "+
			"You can tell the customer it did not happen; they may try again.", target), "bad"
	case ledger.Unknown:
		return fmt.Sprintf("Confirmation pending — do not tell the customer it failed or succeeded. "+
			"settle is asking %s what happened before anything is sent again.", target), "warn"
	case ledger.Escalated:
		return fmt.Sprintf("Under review by %s — do not tell the customer it failed or succeeded. "+
			"People are checking with %s by hand; the story below shows why.", owner, target), "warn"
	}
	return "settle does not recognise this state; ask an operator.", "warn"
}

// Event kinds, as the timeline marks them.
const (
	kindCreated      = "created"
	kindClaimed      = "claimed"
	kindAnswer       = "answer"
	kindLeaseExpired = "lease-expired"
	kindTampered     = "tampered"
	kindNotSent      = "not-sent"
	kindReplay       = "replay"
	kindResend       = "resend"
	kindLookup       = "lookup"
	kindWebhook      = "webhook"
	kindResolution   = "resolution"
	kindDecision     = "decision"
)

// eventKind classifies one event by who wrote it and its evidence.
func eventKind(ev ledger.Event, evidence map[string]any) string {
	switch {
	case ev.From == "":
		return kindCreated
	case ev.From == ledger.Prepared && ev.To == ledger.InFlight:
		return kindClaimed
	case ev.Reason == ledger.ReasonLeaseExpired:
		return kindLeaseExpired
	case ev.Reason == ledger.ReasonPayloadTampered:
		return kindTampered
	case evidence["sent"] == false:
		return kindNotSent
	case evidence["resolution_id"] != nil:
		return kindResolution
	}
	switch evidence["via"] {
	case "lookup":
		return kindLookup
	case "webhook":
		return kindWebhook
	case "same-key replay":
		return kindReplay
	case "conditional resend":
		return kindResend
	}
	if ev.From == ledger.InFlight {
		return kindAnswer
	}
	return kindDecision
}

// storyEvent tells one event in words. attempt is the number of the send
// a claim starts (1 for the first).
func storyEvent(ev ledger.Event, target, owner string, attempt int, now time.Time) views.Event {
	var evidence map[string]any
	_ = json.Unmarshal(ev.Evidence, &evidence) // evidence is always a JSON object; a bad one shows nothing
	kind := eventKind(ev, evidence)
	v := views.Event{Kind: kind, When: timeView(&ev.At, now, ""), By: actorText(ev.Actor)}
	became := fmt.Sprintf("Status became “%s”.", ev.To.Plain(owner))
	switch kind {
	case kindCreated:
		v.Title = "Registered by the client service"
		v.Lines = []string{"settle recorded the approved request before anything was sent.", became}
		// The API request that registered it, to find its log lines.
		if rid, _ := evidence["request_id"].(string); rid != "" {
			v.Detail = append(v.Detail, "Request id: "+ledger.PlainText(rid, 200)+".")
		}
		return v
	case kindClaimed:
		v.Title = fmt.Sprintf("Sent to %s (attempt %d)", target, attempt)
		v.Lines = []string{"The sender took the operation and sent the approved request, " +
			"with settle's reference as its idempotency key."}
		return v
	case kindLeaseExpired:
		v.Title = "The sender did not report back in time"
		v.Lines = []string{"The request may or may not have reached " + target + ". " +
			"settle will ask the target before anything is sent again.", became}
		return v
	case kindTampered:
		v.Title = "Stopped before sending: the stored request was altered"
		v.Lines = []string{"The stored request no longer matches what was approved, so it was not sent.", became}
		return v
	case kindNotSent:
		// The reason says what is missing (a tenant parameter, a
		// credential) and how to set it; the evidence lists the names.
		v.Title = "Not sent: the request lacks something settle must not guess"
		v.Lines = append(evidenceLines(evidence), became)
		if ev.Reason != "" {
			v.Lines = append(v.Lines, "Why: "+ledger.PlainText(ev.Reason, 500)+".")
		}
		return v
	case kindResolution:
		v.Title = "Resolved by hand: " + ev.To.Plain(owner)
		if ev.To == ledger.Unknown {
			v.Title = "One same-key replay authorised by two owners"
		}
	case kindLookup:
		v.Title = "settle looked it up at " + target
	case kindWebhook:
		v.Title = target + " sent an event about it"
	case kindReplay:
		v.Title = "settle sent the same request again with the same key"
	case kindResend:
		v.Title = "settle sent it again on condition that nothing had changed"
	case kindAnswer:
		v.Title = answerTitle(ev.To, target, owner)
	default:
		v.Title = decisionTitle(ev, owner)
	}
	plain, tech := evidenceSplit(evidence)
	v.Lines, v.Detail = append(plain, became), tech
	if ev.Reason != "" && kind != kindResolution {
		// The reconciler's and sender's reasons are engineering words
		// ("absence alone proves nothing"): with the technical detail.
		v.Detail = append([]string{"Recorded reason: " + ledger.PlainText(ev.Reason, 500) + "."}, v.Detail...)
	} else if kind == kindResolution {
		v.Lines = append(v.Lines, "Their reason: "+ledger.PlainText(strings.TrimPrefix(ev.Reason, "manual resolution: "), 500)+".")
	}
	return v
}

func answerTitle(to ledger.State, target, owner string) string {
	switch to {
	case ledger.Succeeded:
		return target + " confirmed it"
	case ledger.FailedTerminal:
		return target + " refused it, with no effect"
	case ledger.Escalated:
		return "Escalated to " + orTeam(owner)
	}
	return "The outcome of the send is unknown"
}

func decisionTitle(ev ledger.Event, owner string) string {
	switch {
	case ev.To == ledger.Escalated:
		return "Escalated to " + orTeam(owner)
	case ev.From == ledger.Unknown && ev.To == ledger.Unknown:
		return "Checked again: still not confirmed"
	}
	return "Status changed to “" + ev.To.Plain(owner) + "”"
}

func orTeam(owner string) string {
	if owner == "" {
		return "the owning team"
	}
	return owner
}

// outcomeWords are the target contract's verdicts on a status code.
var outcomeWords = map[string]string{
	"succeeded":                    "success",
	"accepted_pending":             "accepted but not yet complete",
	"rejected_without_side_effect": "rejected, documented as having no effect",
	"in_progress":                  "another attempt with the same key is still running",
	"unknown":                      "does not prove an outcome",
}

// classWords name the paper's capability classes.
var classWords = map[string]string{
	"A": "same-key replay",
	"B": "lookup",
	"C": "conditional update",
	"D": "no way to confirm",
}

// evidenceLines says what an event's evidence shows, one sentence each,
// in a fixed order: what happened, then the technical detail (see
// evidenceSplit). The escalation page, read by owners, shows both.
func evidenceLines(ev map[string]any) []string {
	plain, tech := evidenceSplit(ev)
	return append(plain, tech...)
}

// evidenceSplit says what an event's evidence shows: plain, what happened
// in words support can repeat (the answer, the object, what differs); tech,
// the engineering evidence behind it (documentation, the absence checks,
// the kinds that differ, the target's classes, and last, as they are, keys
// the console does not know — payload-free by the ledger's rules), which
// the operation's page folds away.
func evidenceSplit(ev map[string]any) (lines, tech []string) {
	done := map[string]bool{"via": true}
	take := func(k string) (any, bool) { v, ok := ev[k]; done[k] = true; return v, ok }
	if f, ok := take("failure"); ok {
		lines = append(lines, fmt.Sprintf("No answer from the target: %s.", text(f)))
	}
	if st, ok := take("status"); ok && num(st) != "0" {
		line := "The target answered HTTP " + num(st)
		if ev["via"] == "lookup" {
			line = "The lookup answered HTTP " + num(st)
		}
		if o, ok := take("outcome"); ok {
			w := outcomeWords[text(o)]
			if w == "" {
				w = text(o)
			}
			line += ", which its contract reads as: " + w
		}
		lines = append(lines, line+".")
	}
	take("outcome")
	if d, ok := take("documentation"); ok && text(d) != "" {
		tech = append(tech, "Documented at: "+text(d)+".")
	}
	if n, ok := take("results"); ok {
		switch num(n) {
		case "0":
			lines = append(lines, "The lookup found no object carrying settle's reference.")
		case "1":
			lines = append(lines, "The lookup found one object carrying settle's reference.")
		default:
			lines = append(lines, "The lookup found "+num(n)+" objects carrying settle's reference.")
		}
	}
	if a, ok := take("absence"); ok {
		tech = append(tech, absenceLines(a)...)
	}
	if id, ok := take("remote_id"); ok && text(id) != "" {
		lines = append(lines, "The target's object: "+text(id)+".")
	}
	if ids, ok := take("remote_ids"); ok {
		lines = append(lines, "Objects carrying settle's reference: "+list(ids)+".")
	}
	if m, ok := take("mismatched_fields"); ok {
		lines = append(lines, "Fields that differ from the approved request: "+list(m)+".")
	}
	if k, ok := take("mismatch_kinds"); ok {
		if kinds, isMap := k.(map[string]any); isMap && len(kinds) > 0 {
			fields := make([]string, 0, len(kinds))
			for f := range kinds {
				fields = append(fields, f)
			}
			sort.Strings(fields)
			parts := make([]string, len(fields))
			for i, f := range fields {
				parts[i] = ledger.PlainText(f, 100) + " (" + text(kinds[f]) + ")"
			}
			tech = append(tech, "What each side holds there (kinds only, never values): "+strings.Join(parts, ", ")+".")
		}
	}
	if st, ok := take("object_status"); ok {
		lines = append(lines, "The object's own status: "+text(st)+".")
	}
	if r, ok := take("replayed"); ok && r == true {
		lines = append(lines, "The target marked this answer as its saved answer to the first request with this key.")
	}
	if s, ok := take("sent"); ok && s == false {
		line := "Nothing was sent to the target."
		if m, ok := take("missing"); ok {
			line += " The tenant lacks the parameters: " + list(m) + "."
		}
		lines = append(lines, line)
	}
	if cs, ok := take("classes"); ok {
		var words []string
		for _, c := range strings.Split(list(cs), ", ") {
			if w := classWords[c]; w != "" {
				words = append(words, w)
			}
		}
		tech = append(tech, "What the target offers to confirm an outcome: "+strings.Join(words, ", ")+".")
	}
	if e, ok := take("event_id"); ok {
		line := "Webhook event " + text(e)
		if d, ok := take("delivery_id"); ok {
			line += " (delivery " + num(d) + ")"
		}
		lines = append(lines, line+", signature verified.")
	}
	take("delivery_id")
	if id, ok := take("resolution_id"); ok {
		p, _ := take("proposed_by")
		a, _ := take("approved_by")
		// Names where the approval recorded them, subjects otherwise; the
		// role, request id and reason are in the people's actions.
		pn, _ := take("proposed_by_name")
		an, _ := take("approved_by_name")
		for _, k := range []string{"kind", "proposal_reason", "role", "request_id"} {
			take(k)
		}
		lines = append(lines, fmt.Sprintf("Proposed by %s and approved by %s (resolution %s).",
			cmp.Or(text(pn), text(p)), cmp.Or(text(an), text(a)), num(id)))
	}
	var rest []string
	for k := range ev {
		if !done[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		b, _ := json.Marshal(ev[k])
		tech = append(tech, fmt.Sprintf("%s: %s", ledger.PlainText(k, 100), ledger.PlainText(string(b), 300)))
	}
	return lines, tech
}

// absenceLines explains the three absence conditions the reconciler
// checks before "not found" may mean "not applied".
func absenceLines(a any) []string {
	conds, _ := a.([]any)
	rules := map[string]string{
		"visibility":    "long enough since the send for the object to be visible",
		"late_requests": "a late request can no longer create it",
		"replay":        "the same-key retention window is over",
	}
	var lines []string
	for _, c := range conds {
		m, _ := c.(map[string]any)
		rule := text(m["rule"])
		words := rules[rule]
		if words == "" {
			words = rule
		}
		verdict := "not yet"
		if m["met"] == true {
			verdict = "yes"
		}
		line := "Absence check — " + words + ": " + verdict
		if d := text(m["detail"]); d != "" {
			line += " (" + d + ")"
		}
		lines = append(lines, line+".")
	}
	return lines
}

func text(v any) string {
	switch x := v.(type) {
	case string:
		return ledger.PlainText(x, 300)
	case nil:
		return ""
	case float64:
		return num(x)
	}
	b, _ := json.Marshal(v)
	return ledger.PlainText(string(b), 300)
}

func num(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return text(v)
}

func list(v any) string {
	xs, ok := v.([]any)
	if !ok {
		return text(v)
	}
	parts := make([]string, 0, len(xs))
	for _, x := range xs {
		parts = append(parts, text(x))
	}
	return strings.Join(parts, ", ")
}

// actorText names who wrote an event.
func actorText(actor string) string {
	switch actor {
	case "client", ledger.ActorAPI:
		return "the client service"
	case ledger.ActorExecutor:
		return "settle's sender"
	case ledger.ActorSweeper:
		return "settle's lease check"
	case ledger.ActorReconciler:
		return "settle's reconciler"
	case "webhook":
		return "the target's webhook"
	}
	if kind, who, ok := strings.Cut(actor, ":"); ok {
		switch kind {
		case "person", "oidc", "demo":
			return ledger.PlainText(who, 200)
		case "cli":
			return ledger.PlainText(who, 200) + " (command line)"
		}
	}
	return ledger.PlainText(actor, 200)
}

// timeView shows t relative to now and as a clock in now's location (the
// reader's zone, pages.clock), with its exact UTC time; nil shows empty.
// It is the one place the console formats a moment for a view.
func timeView(t *time.Time, now time.Time, empty string) views.Time {
	if t == nil || t.IsZero() {
		return views.Time{Empty: empty}
	}
	u := t.UTC()
	return views.Time{ISO: u.Format(time.RFC3339), UTC: u.Format("2006-01-02 15:04:05 UTC"),
		Relative: relative(u, now), Absolute: absoluteTime(u, now.Location())}
}

// relative says how long ago (or how soon) t is: "just now", "3 min ago",
// "5 h ago", "2 days ago", "in 10 min".
func relative(t, now time.Time) string {
	d := now.Sub(t)
	future := d < 0
	if future {
		d = -d
	}
	var s string
	mins, hours := int((d+30*time.Second)/time.Minute), int((d+30*time.Minute)/time.Hour)
	switch {
	case d < 45*time.Second:
		return "just now"
	case mins < 60:
		s = strconv.Itoa(mins) + " min"
	case hours < 24:
		s = strconv.Itoa(hours) + " h"
	default:
		n := int((d + 12*time.Hour) / (24 * time.Hour))
		s = strconv.Itoa(n) + " days"
		if n == 1 {
			s = "1 day"
		}
	}
	if future {
		return "in " + s
	}
	return s + " ago"
}

// durationText says a duration in words: "24 h", "90 min", "2 days".
func durationText(d time.Duration) string {
	switch {
	case d <= 0:
		return "none"
	case d%(24*time.Hour) == 0:
		if n := int(d / (24 * time.Hour)); n != 1 {
			return strconv.Itoa(n) + " days"
		}
		return "1 day"
	case d%time.Hour == 0:
		return strconv.Itoa(int(d/time.Hour)) + " h"
	case d%time.Minute == 0:
		return strconv.Itoa(int(d/time.Minute)) + " min"
	case d < time.Minute:
		return ledger.SpokenDuration(d)
	}
	// A contract's figure is exact: every unit, down to the second.
	var parts []string
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{24 * time.Hour, " days"}, {time.Hour, " h"}, {time.Minute, " min"}, {time.Second, " s"}} {
		if n := int(d / u.d); n > 0 {
			name := u.name
			if n == 1 && name == " days" {
				name = " day"
			}
			parts = append(parts, strconv.Itoa(n)+name)
			d -= time.Duration(n) * u.d
		}
	}
	return strings.Join(parts, " ")
}

// spanText says a span of time — an age, the time left — to the minute,
// as people say it: "2 days 3 h", "5 h 12 min", "7 min", "less than a
// minute".
func spanText(d time.Duration) string {
	d = d.Truncate(time.Minute)
	days, hours, mins := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour), int(d%time.Hour/time.Minute)
	switch {
	case d <= 0:
		return "less than a minute"
	case days > 1 || (days == 1 && hours == 0):
		s := strconv.Itoa(days) + " days"
		if days == 1 {
			s = "1 day"
		}
		if hours > 0 {
			s += " " + strconv.Itoa(hours) + " h"
		}
		return s
	case days == 1:
		return "1 day " + strconv.Itoa(hours) + " h"
	case hours > 0:
		return strconv.Itoa(hours) + " h " + strconv.Itoa(mins) + " min"
	}
	return strconv.Itoa(mins) + " min"
}

// countText shows a state count, "10,000+" when the store stopped
// counting.
func countText(n int, capped bool) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if capped {
		s += "+"
	}
	return s
}

// shownText is text a provider or tenant supplied, as ledger.ShowText
// shows it, inside a sentence.
func shownText(s string) string {
	return shownValue(s).Text
}

// shownValue is text a provider or tenant supplied, as ledger.ShowText
// shows it (the CLI's rule too), marked when it had to be escaped.
func shownValue(s string) views.Shown {
	text, escaped := ledger.ShowText(s)
	return views.Shown{Text: text, Escaped: escaped}
}

// shownOr is shownValue(s), or none, unmarked, for an empty s.
func shownOr(s, none string) views.Shown {
	if s == "" {
		return views.Shown{Text: none}
	}
	return shownValue(s)
}
