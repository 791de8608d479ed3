package target

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"settle/fileerr"
)

// base is the smallest valid file: one target with every required field.
// Tests append lines to it, so an appended line n is line 8+n of the file.
const base = `targets:
  - name: t1
    owner: {team: T, escalation_contact: t@example.com}
    documentation: {url: "https://docs.example.com/t", checked: 2026-11-01}
    base_url: http://127.0.0.1:9090
    deadline: 24h
    create: {method: POST, path: /v1/things}
    response: {id_field: id, match: [amount]}
`

// parseOne parses base with lines appended (and the named keys' lines
// dropped) and returns the one target.
func parseOne(t *testing.T, extra string, drop ...string) *Contract {
	t.Helper()
	s, err := Parse("c.yaml", []byte(edit(extra, drop...)))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	c, ok := s.Get("t1")
	if !ok {
		t.Fatal("t1 missing")
	}
	return c
}

func edit(extra string, drop ...string) string {
	var out []string
	for _, l := range strings.SplitAfter(base, "\n") {
		keep := true
		for _, d := range drop {
			keep = keep && !strings.HasPrefix(strings.TrimSpace(l), d+":")
		}
		if keep {
			out = append(out, l)
		}
	}
	return strings.Join(out, "") + extra
}

// messages splits Parse's joined error into its lines, one per problem.
func messages(err error) []string {
	if err == nil {
		return nil
	}
	var out []string
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			var fe *fileerr.Error
			if !errors.As(e, &fe) {
				out = append(out, "not a *fileerr.Error: "+e.Error())
				continue
			}
			out = append(out, fe.Error())
		}
		return out
	}
	return []string{"not joined: " + err.Error()}
}

func TestLoad_CompleteFile(t *testing.T) {
	s, err := Load("testdata/contracts.yaml")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if got := s.Names(); !reflect.DeepEqual(got, []string{"payments", "provisioning"}) {
		t.Fatalf("Names = %q", got)
	}
	tests := []struct {
		name string
		want Contract
	}{
		{"payments", Contract{
			Name:           "payments",
			Owner:          Owner{Team: "Payments team", EscalationContact: "payments-oncall@example.com"},
			Documentation:  Documentation{URL: "https://docs.example.com/api/v1", Checked: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)},
			BaseURL:        "http://127.0.0.1:9090",
			Timeout:        15 * time.Second,
			Deadline:       24 * time.Hour,
			Create:         Endpoint{Method: "POST", Path: "/v1/charges"},
			ReferenceField: "metadata.settle_ref",
			TenantField:    "metadata.settle_tenant",
			Idempotency: &Idempotency{Header: "Idempotency-Key", Scope: "account", Retention: 24 * time.Hour, Mismatch: MismatchRejected,
				Concurrent: ConcurrentConflict, ReplayMargin: 10 * time.Second, ReplayedHeader: "Idempotent-Replayed"},
			Lookup: &Lookup{Method: "GET", Path: "/v1/charges/search?query=metadata['settle_ref']:'{reference}'",
				ResultsField: "data", PropagationLimit: 30 * time.Second},
			ConditionalUpdate:    &ConditionalUpdate{Header: "If-Match", VersionField: "expected_version"},
			LateRequestsRejected: true,
			Outcomes: []OutcomeRule{
				{Status: "201", Outcome: Succeeded},
				{Status: "202", Outcome: AcceptedPending},
				{Status: "4xx", Outcome: RejectedWithoutSideEffect, Documentation: "https://docs.example.com/api/v1#errors"},
				{Status: "409", Outcome: InProgress},
				{Status: "503", Outcome: RejectedWithoutSideEffect, Documentation: "https://docs.example.com/api/v1#maintenance"},
			},
			Response: Response{IDField: "id",
				Match: []MatchField{{"amount", MatchNumeric}, {"currency", MatchCaseInsensitive},
					{"metadata.settle_ref", MatchExact}, {"metadata.settle_tenant", MatchExact}},
				StatusField: "status", Statuses: []StatusRule{
					{Value: "succeeded", Outcome: ObjectSucceeded},
					{Value: "paid", Outcome: ObjectSucceeded},
					{Value: "pending", Outcome: ObjectPending, Documentation: "https://docs.example.com/api/v1#charge-status"},
					{Value: "failed", Outcome: ObjectFailed, Documentation: "https://docs.example.com/api/v1#charge-status"},
				}},
			Webhook: &Webhook{SecretEnv: "SETTLE_PAYMENTS_WEBHOOK_SECRET", Tolerance: 2 * time.Minute,
				SignatureHeader: "Settle-Signature", ObjectField: "data", EventIDField: "id", MaxBodyBytes: MaxWebhookBody},
			Auth:     &Auth{Header: "Authorization", Scheme: AuthBearer, SecretEnv: "SETTLE_PAYMENTS_API_KEY"},
			Encoding: EncodingForm,
			Headers: []Header{{Name: "Payments-Account", Value: "{tenant.account}"},
				{Name: "Payments-Version", Value: "2026-11-01"}},
			BodyFields: []BodyField{{Path: "transfer.destination", Value: "{tenant.destination}"}},
			Reconcile:  Reconcile{Concurrency: 2},
		}},
		{"provisioning", Contract{
			Name:          "provisioning",
			Owner:         Owner{Team: "Platform team", EscalationContact: "https://oncall.example.com/platform"},
			Documentation: Documentation{URL: "https://vendor.example.org/provisioning", Checked: time.Date(2026, 10, 15, 0, 0, 0, 0, time.UTC)},
			BaseURL:       "https://provision.example.org/api",
			Timeout:       DefaultTimeout,
			Deadline:      time.Hour,
			Create:        Endpoint{Method: "PUT", Path: "/resources"},
			Response:      Response{IDField: "resource.id", Match: []MatchField{{"plan", MatchExact}}},
			Encoding:      EncodingJSON,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := s.Get(tt.name)
			if !ok {
				t.Fatal("missing")
			}
			if got := *c; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
	if _, ok := s.Get("nope"); ok {
		t.Error("Get(nope) found a contract")
	}
	p, _ := s.Get("payments")
	if got := p.TenantParams(); !reflect.DeepEqual(got, []string{"account", "destination"}) {
		t.Errorf("TenantParams = %q", got)
	}
}

func TestLoad_MissingFile(t *testing.T) {
	_, err := Load("testdata/does-not-exist.yaml")
	if err == nil || !strings.Contains(err.Error(), "testdata/does-not-exist.yaml") {
		t.Fatalf("err = %v; want one naming the file", err)
	}
}

func TestParse_SafeDefaults(t *testing.T) {
	c := parseOne(t, "")
	if c.Timeout != DefaultTimeout {
		t.Errorf("Timeout = %s", c.Timeout)
	}
	if c.Idempotency != nil || c.RetryWindow() != 0 {
		t.Errorf("no idempotency block: Idempotency = %+v, RetryWindow = %s; want nil, 0", c.Idempotency, c.RetryWindow())
	}
	if c.Lookup != nil || c.HasLookup() {
		t.Error("no lookup block must mean no lookup")
	}
	if c.HasConditional() || c.LateRequestsRejected || c.Webhook != nil {
		t.Error("absent facts must be false/nil")
	}
	if got := c.Classes(); !reflect.DeepEqual(got, []Class{ClassD}) {
		t.Errorf("Classes = %v; want [D]", got)
	}
	if c.Auth != nil || c.Encoding != EncodingJSON || c.Headers != nil || c.BodyFields != nil || c.TenantParams() != nil {
		t.Errorf("request defaults: auth %v, encoding %q, headers %v, body fields %v, params %v; want none and json",
			c.Auth, c.Encoding, c.Headers, c.BodyFields, c.TenantParams())
	}
	if done, err := c.Completed([]byte(`{"id":"x"}`)); !done || err != nil {
		t.Errorf("no status_field: Completed = %v, %v; want an existing object to count as completed", done, err)
	}
	if v, ok := c.ExpectedVersion([]byte(`{"version":"3"}`)); ok {
		t.Errorf("no conditional_update: ExpectedVersion = %q, true", v)
	}
	for _, code := range []int{200, 201, 202, 400, 409, 500, 503} {
		if got := c.Classify(code); got != Unknown {
			t.Errorf("Classify(%d) = %s with no table; want unknown", code, got)
		}
	}

	c = parseOne(t, "    idempotency: {header: Idempotency-Key}\n    webhook: {secret_env: X}\n")
	want := Idempotency{Header: "Idempotency-Key", Mismatch: Undocumented, Concurrent: Undocumented}
	if *c.Idempotency != want {
		t.Errorf("Idempotency = %+v; want %+v", *c.Idempotency, want)
	}
	if c.RetryWindow() != 0 || c.CanReplay(time.Now(), time.Now().Add(time.Hour)) {
		t.Error("an undocumented retention must mean window zero")
	}
	if c.Webhook.Tolerance != DefaultTolerance {
		t.Errorf("Tolerance = %s", c.Webhook.Tolerance)
	}
	if c.Idempotency.ReplayedHeader != "" {
		t.Errorf("ReplayedHeader = %q; want none", c.Idempotency.ReplayedHeader)
	}

	c = parseOne(t, "    reference_field: ref\n    lookup: {path: \"/v1/things/{reference}\"}\n    response: {id_field: id, match: [ref]}\n", "response")
	if c.Lookup.Method != "GET" || c.Lookup.ReadAfterWrite || c.Lookup.PropagationLimit != 0 {
		t.Errorf("Lookup = %+v; want GET, no consistency documented", *c.Lookup)
	}
}

// The example a target owner copies from CONTRACTS.md must stay valid.
func TestContractsMD_Example(t *testing.T) {
	doc, err := os.ReadFile("CONTRACTS.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "## A complete example")
	_, rest, ok2 := strings.Cut(rest, "```yaml\n")
	example, _, ok3 := strings.Cut(rest, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("CONTRACTS.md has no yaml example under \"A complete example\"")
	}
	s, err := Parse("CONTRACTS.md", []byte(example))
	if err != nil {
		t.Fatalf("the example does not parse:\n%v", err)
	}
	c, _ := s.Get("payments")
	if got := c.Classes(); !reflect.DeepEqual(got, []Class{ClassA, ClassB, ClassC}) {
		t.Errorf("example classes = %v", got)
	}

	_, rest, ok = strings.Cut(string(doc), "## A real provider: Stripe")
	_, rest, ok2 = strings.Cut(rest, "```yaml\n")
	stripe, _, ok3 := strings.Cut(rest, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("CONTRACTS.md has no yaml example under \"A real provider: Stripe\"")
	}
	s, err = Parse("CONTRACTS.md", []byte(stripe))
	if err != nil {
		t.Fatalf("the Stripe example does not parse:\n%v", err)
	}
	c, _ = s.Get("stripe")
	if got := c.Classes(); !reflect.DeepEqual(got, []Class{ClassA, ClassB}) || c.Encoding != EncodingForm ||
		!reflect.DeepEqual(c.TenantParams(), []string{"account"}) {
		t.Errorf("Stripe example: classes %v, encoding %s, params %v", got, c.Encoding, c.TenantParams())
	}
}
