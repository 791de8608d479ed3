package web

import (
	"strings"
	"testing"
	"time"

	"settle/target"
)

// Every capability class has its own sentence saying what settle can do
// when an answer is lost.
func TestClassMeaning_EveryClass(t *testing.T) {
	t.Parallel()
	want := map[target.Class][]string{
		target.ClassA: {"Same-key replay", "same idempotency key", "retention window"},
		target.ClassB: {"Lookup", "asks the target", "owning team"},
		target.ClassC: {"Conditional update", "fails safely"},
		target.ClassD: {"None", "neither check nor safely repeat", "escalated to the owning team"},
		"Z":           {"Unknown class", "escalates"},
	}
	seen := map[string]bool{}
	for k, words := range want {
		got := ClassMeaning(k)
		for _, w := range words {
			if !strings.Contains(got, w) {
				t.Errorf("class %s: %q lacks %q", k, got, w)
			}
		}
		if seen[got] {
			t.Errorf("class %s shares its sentence with another class", k)
		}
		seen[got] = true
	}
}

// The documentation check is flagged only once it is more than 180 days
// old.
func TestCheckedText_StaleAfter180Days(t *testing.T) {
	t.Parallel()
	checked := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for days, isStale := range map[int]bool{0: false, 179: false, 180: false, 181: true, 400: true} {
		now := checked.Add(time.Duration(days)*24*time.Hour + time.Hour)
		got := checkedText(checked, now)
		if stale(checked, now) != isStale || strings.Contains(got, "re-check") != isStale || !strings.HasPrefix(got, "2026-01-01 (") {
			t.Errorf("%d days: %q, stale %v", days, got, stale(checked, now))
		}
	}
	if got := checkedText(time.Time{}, checked); got != "never checked" {
		t.Errorf("zero date: %q", got)
	}
}

// A contract that documents nothing optional reads as the safe defaults:
// class D, no replays, no lookup, "not found" never failure.
func TestTargetView_SafeDefaults(t *testing.T) {
	t.Parallel()
	ct := &target.Contract{Name: "bare", Owner: target.Owner{Team: "Bare team", EscalationContact: "bare@example.com"},
		Documentation: target.Documentation{URL: "https://bare.example.com/docs", Checked: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)},
		Timeout:       10 * time.Second, Deadline: time.Hour, Create: target.Endpoint{Method: "PUT", Path: "/things"}}
	v := targetView(ct, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	if len(v.Classes) != 1 || v.Classes[0].Class != "D" || v.Stale {
		t.Fatalf("classes %+v, stale %v", v.Classes, v.Stale)
	}
	facts := map[string]string{}
	for _, sec := range v.Sections {
		for _, f := range sec.Facts {
			facts[f.ID] = f.Value
		}
	}
	for id, want := range map[string]string{
		"owner":               "Bare team",
		"escalation-contact":  "bare@example.com",
		"escalation-deadline": "operations still unresolved 1 h after registration escalate",
		"idempotency-header":  "none documented",
		"retention":           "none: window zero",
		"lookup":              "none: settle cannot ask the target",
		"conditional":         "not supported",
		"late-requests":       "not documented",
		"create":              "PUT /things",
		"credential":          "none: requests carry no credential",
		"encoding":            "JSON",
		"headers":             "none",
		"tenant-params":       "none",
		"object-status":       "none documented",
	} {
		if !strings.HasPrefix(facts[id], want) {
			t.Errorf("%s: %q, want it to start with %q", id, facts[id], want)
		}
	}
}

func TestReadOnlyText(t *testing.T) {
	t.Parallel()
	if on, off := readOnlyText(true), readOnlyText(false); !strings.HasPrefix(on, "On:") || !strings.HasPrefix(off, "Off:") {
		t.Fatalf("%q / %q", on, off)
	}
}

// A provider's contract reads in plain words: the credential by header,
// scheme and variable name only, the request's shape, the tenant
// parameters it needs, the match rules and the status table.
func TestTargetView_ProviderFacts(t *testing.T) {
	t.Parallel()
	set, err := target.Parse("c.yaml", []byte(`targets:
  - name: stripe
    owner: {team: Payments team, escalation_contact: pay@example.com}
    documentation: {url: "https://docs.stripe.com/api", checked: 2026-11-01}
    base_url: https://api.stripe.com
    deadline: 24h
    create: {method: POST, path: /v1/charges}
    reference_field: metadata.settle_ref
    auth: {header: Authorization, scheme: Basic, secret_env: STRIPE_SECRET_KEY}
    encoding: form
    headers: {Stripe-Account: "{tenant.account}", Stripe-Version: "2024-06-20"}
    body_fields: {transfer_data.destination: "{tenant.destination}"}
    idempotency: {header: Idempotency-Key, retention: 24h, mismatch: rejected, replayed_header: Idempotent-Replayed}
    response:
      id_field: id
      match: [metadata.settle_ref, {field: currency, rule: case_insensitive}]
      status_field: status
      statuses:
        - {value: succeeded, outcome: succeeded}
        - {value: failed, outcome: failed, documentation: "https://docs.stripe.com/api/charges/object"}
`))
	if err != nil {
		t.Fatal(err)
	}
	ct, _ := set.Get("stripe")
	facts := map[string]string{}
	for _, sec := range targetView(ct, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)).Sections {
		for _, f := range sec.Facts {
			facts[f.ID] = f.Value
		}
	}
	for id, want := range map[string]string{
		"credential":      "the Authorization header carries Basic and the base64 of the user:password the variable holds; the secret is read at start-up from the environment variable STRIPE_SECRET_KEY",
		"encoding":        "form (application/x-www-form-urlencoded",
		"headers":         "Stripe-Account: {tenant.account}; Stripe-Version: 2024-06-20",
		"body-fields":     "transfer_data.destination = {tenant.destination} (written in at send time",
		"tenant-params":   "account, destination: set for each tenant",
		"match":           "metadata.settle_ref (exact), currency (case-insensitive)",
		"object-status":   "status: succeeded → succeeded, failed → failed; any other value counts as pending",
		"replayed-header": "Idempotent-Replayed: true marks",
	} {
		if !strings.HasPrefix(facts[id], want) {
			t.Errorf("%s: %q, want it to start with %q", id, facts[id], want)
		}
	}
}
