package target

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

const errorsDoc = "https://docs.example.com/errors"

func TestContract_Classify(t *testing.T) {
	c := parseOne(t, `    outcomes:
      - {status: 201, outcome: succeeded}
      - {status: 202, outcome: accepted_pending}
      - {status: 4xx, outcome: rejected_without_side_effect, documentation: "`+errorsDoc+`"}
      - {status: 409, outcome: in_progress}
      - {status: 429, outcome: unknown}
      - {status: 503, outcome: rejected_without_side_effect, documentation: "https://docs.example.com/503"}
      - {status: 504, outcome: unknown}
`)
	tests := []struct {
		name   string
		status int
		want   Outcome
		cites  string
	}{
		{"exact 2xx", 201, Succeeded, ""},
		{"exact accepted", 202, AcceptedPending, ""},
		{"unmapped 2xx is unknown", 200, Unknown, ""},
		{"class row", 400, RejectedWithoutSideEffect, errorsDoc},
		{"class row, another code", 404, RejectedWithoutSideEffect, errorsDoc},
		{"exact beats class", 409, InProgress, ""},
		{"exact unknown beats class", 429, Unknown, ""},
		{"unmapped 5xx is unknown", 500, Unknown, ""},
		{"documented 5xx", 503, RejectedWithoutSideEffect, "https://docs.example.com/503"},
		{"5xx mapped to unknown needs no documentation", 504, Unknown, ""},
		{"unmapped 3xx", 302, Unknown, ""},
		{"1xx", 100, Unknown, ""},
		{"out of range", 0, Unknown, ""},
		{"out of range high", 1000, Unknown, ""},
		{"negative", -400, Unknown, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.Classify(tt.status); got != tt.want {
				t.Errorf("Classify(%d) = %s; want %s", tt.status, got, tt.want)
			}
			if got := c.Cites(tt.status); got != tt.cites {
				t.Errorf("Cites(%d) = %q; want %q", tt.status, got, tt.cites)
			}
			// A Contract built in code, not parsed, reads the same rows.
			if got := (&Contract{Outcomes: c.Outcomes}).Classify(tt.status); got != tt.want {
				t.Errorf("built in code: Classify(%d) = %s; want %s", tt.status, got, tt.want)
			}
		})
	}
}

func TestContract_Classes(t *testing.T) {
	const (
		ref      = "    reference_field: ref\n"
		match    = "    response: {id_field: id, match: [amount, ref]}\n"
		lookup   = `    lookup: {path: "/v1/things?ref={reference}"}` + "\n"
		byRemote = `    lookup: {path: "/v1/things/{remote_ref}"}` + "\n"
		cond     = "    conditional_update: {header: If-Match}\n"
	)
	tests := []struct {
		name  string
		extra string
		want  []Class
	}{
		{"nothing", "", []Class{ClassD}},
		{"A", "    idempotency: {header: K, retention: 24h, mismatch: rejected}\n", []Class{ClassA}},
		{"key without retention is not A", "    idempotency: {header: K, mismatch: rejected}\n", []Class{ClassD}},
		{"zero retention is not A", "    idempotency: {header: K, retention: 0s, mismatch: rejected}\n", []Class{ClassD}},
		{"replays_original is not A", "    idempotency: {header: K, retention: 24h, mismatch: replays_original}\n", []Class{ClassD}},
		{"undocumented mismatch is not A", "    idempotency: {header: K, retention: 24h}\n", []Class{ClassD}},
		{"B", ref + lookup + match, []Class{ClassB}},
		{"lookup by remote ref only is not B", byRemote, []Class{ClassD}},
		{"C", cond, []Class{ClassC}},
		{"A, B and C", "    idempotency: {header: K, retention: 1h, mismatch: rejected}\n" + ref + lookup + cond + match, []Class{ClassA, ClassB, ClassC}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			drop := []string{}
			if strings.Contains(tt.extra, "response:") {
				drop = append(drop, "response")
			}
			c := parseOne(t, tt.extra, drop...)
			if got := c.Classes(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Classes = %v; want %v", got, tt.want)
			}
			if got, want := c.HasLookup(), slicesContains(tt.want, ClassB); got != want {
				t.Errorf("HasLookup = %v", got)
			}
			if got, want := c.HasConditional(), slicesContains(tt.want, ClassC); got != want {
				t.Errorf("HasConditional = %v", got)
			}
		})
	}
}

func slicesContains(cs []Class, c Class) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}

func TestContract_CanReplay(t *testing.T) {
	a := parseOne(t, "    idempotency: {header: K, retention: 24h, mismatch: rejected}\n")
	m := parseOne(t, "    idempotency: {header: K, retention: 24h, mismatch: rejected, replay_margin: 1s}\n")
	d := parseOne(t, "    idempotency: {header: K, retention: 24h}\n")
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	// A replay sent now may reach the target a timeout later, and the
	// margin covers the clocks' disagreement: it must land inside the window.
	room := DefaultTimeout + DefaultReplayMargin
	tests := []struct {
		name      string
		c         *Contract
		windowEnd time.Time
		want      bool
	}{
		{"A inside window", a, now.Add(room + time.Second), true},
		{"A with less than timeout and margin left", a, now.Add(room), false},
		{"A inside window but within the timeout", a, now.Add(time.Second), false},
		{"A with a stated margin", m, now.Add(DefaultTimeout + time.Second + time.Microsecond), true},
		{"A with a stated margin, too late", m, now.Add(DefaultTimeout + time.Second), false},
		{"A at window end", a, now, false},
		{"A after window", a, now.Add(-time.Second), false},
		{"not A inside window", d, now.Add(time.Hour), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.CanReplay(now, tt.windowEnd); got != tt.want {
				t.Errorf("CanReplay = %v; want %v", got, tt.want)
			}
		})
	}
	if a.RetryWindow() != 24*time.Hour || d.RetryWindow() != 0 {
		t.Errorf("RetryWindow = %s, %s; want 24h, 0 (not class A)", a.RetryWindow(), d.RetryWindow())
	}
	if a.ReplayMargin() != DefaultReplayMargin || m.ReplayMargin() != time.Second || d.ReplayMargin() != DefaultReplayMargin {
		t.Errorf("ReplayMargin = %s, %s, %s; want the default, 1s, the default", a.ReplayMargin(), m.ReplayMargin(), d.ReplayMargin())
	}
}

// The absence rules: every combination of the three conditions, and each
// way a condition can hold or fail.
func TestContract_AbsenceMeaningful(t *testing.T) {
	const ref = "    reference_field: ref\n    response: {id_field: id, match: [amount, ref]}\n"
	// Class A in every row, so only the operation's window decides replay.
	contract := func(t *testing.T, visible, late bool) *Contract {
		extra := ref + "    idempotency: {header: K, retention: 24h, mismatch: rejected}\n"
		if visible {
			extra += `    lookup: {path: "/t?r={reference}", read_after_write: true}` + "\n"
		} else {
			extra += `    lookup: {path: "/t?r={reference}"}` + "\n"
		}
		extra += "    late_requests_rejected: " + map[bool]string{true: "true", false: "false"}[late] + "\n"
		return parseOne(t, extra, "response")
	}
	sent := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	deadline := sent.Add(time.Hour)
	after := deadline.Add(time.Minute)

	// Each of the eight combinations: visible (read-after-write documented),
	// late (deadline passed and late requests rejected), replayOver (the
	// same-key window is over).
	for _, visible := range []bool{false, true} {
		for _, late := range []bool{false, true} {
			for _, replayOver := range []bool{false, true} {
				name := map[bool]string{true: "1", false: "0"}
				t.Run("visible="+name[visible]+"/late="+name[late]+"/replay_over="+name[replayOver], func(t *testing.T) {
					c := contract(t, visible, late)
					windowEnd := after.Add(time.Hour)
					if replayOver {
						windowEnd = sent
					}
					ok, conds := c.AbsenceMeaningful(OperationTimes{LookupAt: after, LastSent: sent, Deadline: deadline, RetryWindowEnd: windowEnd})
					want := visible && late && replayOver
					if ok != want {
						t.Errorf("AbsenceMeaningful = %v; want %v (%+v)", ok, want, conds)
					}
					if len(conds) != 3 || conds[0].Met != visible || conds[1].Met != late || conds[2].Met != replayOver {
						t.Errorf("conditions = %+v", conds)
					}
				})
			}
		}
	}

	lookupWith := func(lookup string, late, classA bool) *Contract {
		extra := ref + "    lookup: " + lookup + "\n"
		if late {
			extra += "    late_requests_rejected: true\n"
		}
		if classA {
			extra += "    idempotency: {header: K, retention: 24h, mismatch: rejected}\n"
		}
		return parseOne(t, extra, "response")
	}
	prop := lookupWith(`{path: "/t?r={reference}", propagation_limit: 30s}`, true, false)
	raw := lookupWith(`{path: "/t?r={reference}", read_after_write: true}`, true, false)
	tests := []struct {
		name  string
		c     *Contract
		times OperationTimes
		want  []bool
	}{
		{"propagation limit elapsed after the deadline", prop, OperationTimes{LookupAt: deadline.Add(30 * time.Second), LastSent: sent, Deadline: deadline}, []bool{true, true, true}},
		{"propagation limit not elapsed after the deadline", prop, OperationTimes{LookupAt: deadline.Add(29 * time.Second), LastSent: sent, Deadline: deadline}, []bool{false, true, true}},
		{"propagation counts from a send after the deadline", prop, OperationTimes{LookupAt: after.Add(10 * time.Second), LastSent: after, Deadline: deadline}, []bool{false, true, true}},
		{"propagation with neither send time nor deadline", lookupWith(`{path: "/t?r={reference}", propagation_limit: 30s}`, false, false),
			OperationTimes{LookupAt: after}, []bool{false, false, true}},
		{"propagation counts from the deadline when the send time is unknown", prop, OperationTimes{LookupAt: deadline.Add(time.Minute), Deadline: deadline}, []bool{true, true, true}},
		{"no deadline", raw, OperationTimes{LookupAt: after, LastSent: sent}, []bool{true, false, true}},
		{"lookup exactly at the deadline", raw, OperationTimes{LookupAt: deadline, LastSent: sent, Deadline: deadline}, []bool{true, false, true}},
		{"deadline passed but late requests not rejected", lookupWith(`{path: "/t?r={reference}", read_after_write: true}`, false, false),
			OperationTimes{LookupAt: after, LastSent: sent, Deadline: deadline}, []bool{true, false, true}},
		{"no lookup in the contract", parseOne(t, "    late_requests_rejected: true\n"), OperationTimes{LookupAt: after, LastSent: sent, Deadline: deadline}, []bool{false, true, true}},
		{"neither consistency fact documented", lookupWith(`{path: "/t?r={reference}"}`, true, false), OperationTimes{LookupAt: after, LastSent: sent, Deadline: deadline}, []bool{false, true, true}},
		{"class A inside its window", lookupWith(`{path: "/t?r={reference}", read_after_write: true}`, true, true),
			OperationTimes{LookupAt: after, LastSent: sent, Deadline: deadline, RetryWindowEnd: after.Add(time.Hour)}, []bool{true, true, false}},
		{"class A too near its window end for a replay", lookupWith(`{path: "/t?r={reference}", read_after_write: true}`, true, true),
			OperationTimes{LookupAt: after, LastSent: sent, Deadline: deadline, RetryWindowEnd: after.Add(DefaultTimeout + DefaultReplayMargin)}, []bool{true, true, true}},
		{"class A at its window end", lookupWith(`{path: "/t?r={reference}", read_after_write: true}`, true, true),
			OperationTimes{LookupAt: after, LastSent: sent, Deadline: deadline, RetryWindowEnd: after}, []bool{true, true, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, conds := tt.c.AbsenceMeaningful(tt.times)
			var got []bool
			for i, k := range conds {
				got = append(got, k.Met)
				if k.Rule != []string{"visibility", "late_requests", "replay"}[i] || k.Detail == "" {
					t.Errorf("condition %d = %+v", i, k)
				}
			}
			if !reflect.DeepEqual(got, tt.want) || ok != (tt.want[0] && tt.want[1] && tt.want[2]) {
				t.Errorf("AbsenceMeaningful = %v, %+v; want met %v", ok, conds, tt.want)
			}
		})
	}
}

func TestContract_URLs(t *testing.T) {
	c := parseOne(t, `    reference_field: ref
    lookup: {path: "/v1/things/{reference}/x?ref={reference}&id={remote_ref}"}
    response: {id_field: id, match: [amount, ref]}
`, "response")
	if m, u := c.CreateURL(); m != "POST" || u != "http://127.0.0.1:9090/v1/things" {
		t.Errorf("CreateURL = %s %s", m, u)
	}
	tests := []struct {
		name, reference, remoteRef, want string
	}{
		{"plain", "r1", "o1", "/v1/things/r1/x?ref=r1&id=o1"},
		{"ampersand, slash and space", "a&b/c d", "x/y z&w=1", "/v1/things/a&b%2Fc%20d/x?ref=a%26b%2Fc+d&id=x%2Fy+z%26w%3D1"},
		{"dot segments", "..", ".", "/v1/things/%2E%2E/x?ref=..&id=."},
		{"empty", "", "", "/v1/things//x?ref=&id="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, u, err := c.LookupURL(tt.reference, tt.remoteRef)
			if m != "GET" || u != "http://127.0.0.1:9090"+tt.want || err != nil {
				t.Errorf("LookupURL = %s %s; want GET …%s", m, u, tt.want)
			}
		})
	}
	if m, u, err := parseOne(t, "").LookupURL("r", "o"); m != "" || u != "" || err != nil {
		t.Errorf("LookupURL without lookup = %q %q", m, u)
	}
}

func TestContract_WebhookSecret(t *testing.T) {
	c := parseOne(t, "    webhook: {secret_env: SETTLE_T1_SECRET}\n")
	env := map[string]string{"SETTLE_T1_SECRET": "whsec_abc", "BLANK": "  "}
	getenv := func(k string) string { return env[k] }

	got, err := c.WebhookSecret(getenv)
	if err != nil || string(got) != "whsec_abc" {
		t.Fatalf("WebhookSecret = %q, %v", got, err)
	}
	if s := c.String(); strings.Contains(s, "whsec_abc") || s != "target t1 (class D; owner T)" {
		t.Errorf("String = %q", s)
	}

	delete(env, "SETTLE_T1_SECRET")
	if _, err := c.WebhookSecret(getenv); err == nil || err.Error() != "target t1: webhook secret environment variable SETTLE_T1_SECRET is not set" {
		t.Errorf("unset: err = %v", err)
	}
	c.Webhook.SecretEnv = "BLANK"
	if _, err := c.WebhookSecret(getenv); err == nil || !strings.Contains(err.Error(), "BLANK is not set") {
		t.Errorf("blank: err = %v", err)
	}
	if _, err := c.WebhookSecret(nil); err == nil {
		t.Error("nil getenv: no error")
	}
	if _, err := parseOne(t, "").WebhookSecret(getenv); err == nil || !strings.Contains(err.Error(), "no webhook") {
		t.Errorf("no webhook: err = %v", err)
	}
}

// A contract may lower the webhook body limit, never raise it (the
// refusals are in TestLoad_Errors).
func TestContract_WebhookMaxBodyBytes(t *testing.T) {
	if c := parseOne(t, "    webhook: {secret_env: S}\n"); c.Webhook.MaxBodyBytes != MaxWebhookBody {
		t.Errorf("default MaxBodyBytes = %d, want %d", c.Webhook.MaxBodyBytes, MaxWebhookBody)
	}
	if c := parseOne(t, "    webhook: {secret_env: S, max_body_bytes: 65536}\n"); c.Webhook.MaxBodyBytes != 65536 {
		t.Errorf("MaxBodyBytes = %d, want 65536", c.Webhook.MaxBodyBytes)
	}
}

// The reconcile concurrency defaults when the contract states none (the
// refusals are in TestParse_Errors).
func TestContract_ReconcileConcurrency(t *testing.T) {
	if got := parseOne(t, "").ReconcileConcurrency(); got != DefaultReconcileConcurrency {
		t.Errorf("default ReconcileConcurrency = %d, want %d", got, DefaultReconcileConcurrency)
	}
	if got := parseOne(t, "    reconcile: {concurrency: 2}\n").ReconcileConcurrency(); got != 2 {
		t.Errorf("ReconcileConcurrency = %d, want 2", got)
	}
}

// CheckSignatureHeader refuses, without the body, what Verify could
// never accept.
func TestCheckSignatureHeader(t *testing.T) {
	good := Sign([]byte("k"), time.Unix(1700000000, 0), []byte("{}"))
	if err := CheckSignatureHeader(good); err != nil {
		t.Errorf("CheckSignatureHeader(%q) = %v", good, err)
	}
	for _, h := range []string{"", "garbage", "t=1700000000", "v1=abcd", "t=x,v1=abcd", "t=1700000000,v1=zz"} {
		if err := CheckSignatureHeader(h); err != ErrSignatureMissing {
			t.Errorf("CheckSignatureHeader(%q) = %v, want ErrSignatureMissing", h, err)
		}
	}
}
