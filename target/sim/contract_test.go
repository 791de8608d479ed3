package sim_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"settle/target"
	"settle/target/sim"
)

// parseContract parses srv's contract for target name as settle would.
func parseContract(t *testing.T, srv *sim.Server, name string) *target.Contract {
	t.Helper()
	yaml := srv.Contract(name)
	set, err := target.Parse("sim.yaml", yaml)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, yaml)
	}
	c, ok := set.Get(name)
	if !ok {
		t.Fatalf("no target %s in\n%s", name, yaml)
	}
	return c
}

func TestServer_Contract(t *testing.T) {
	tests := []struct {
		name    string
		cfg     sim.Config
		classes []target.Class
		on409   target.Outcome
		raw     bool          // read_after_write
		limit   time.Duration // propagation_limit
	}{
		{"A conflict", sim.Config{Class: "A", ConflictOnConcurrent: true}, []target.Class{target.ClassA, target.ClassB}, target.InProgress, true, 0},
		{"A waits with lag", sim.Config{Class: "A", Retention: time.Hour, LookupLag: 1500 * time.Millisecond},
			[]target.Class{target.ClassA, target.ClassB}, target.Unknown, false, 3 * time.Second},
		{"B", sim.Config{Class: "B"}, []target.Class{target.ClassB}, target.Unknown, true, 0},
		{"B with lag", sim.Config{Class: "B", LookupLag: 2 * time.Second, ReferenceField: "metadata.ref", TenantField: "metadata.tenant"},
			[]target.Class{target.ClassB}, target.Unknown, false, 3 * time.Second},
		{"C", sim.Config{Class: "C"}, []target.Class{target.ClassB, target.ClassC}, target.Unknown, true, 0},
		{"C with lag", sim.Config{Class: "C", LookupLag: time.Second}, []target.Class{target.ClassB, target.ClassC}, target.Unknown, false, 2 * time.Second},
		{"D", sim.Config{Class: "D"}, []target.Class{target.ClassD}, target.Unknown, false, 0},
		{"D with webhook", sim.Config{Class: "D", WebhookURL: "http://127.0.0.1:1/hook", WebhookSecret: "whsec_test"},
			[]target.Class{target.ClassD}, target.Unknown, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := start(t, tt.cfg)
			c := parseContract(t, srv, "payments")
			if got := c.Classes(); !reflect.DeepEqual(got, tt.classes) {
				t.Errorf("Classes = %v; want %v", got, tt.classes)
			}
			docs := srv.URL() + "/_sim/docs"
			today := time.Now().UTC().Format(time.DateOnly)
			if c.BaseURL != srv.URL() || c.Documentation.URL != docs || c.Documentation.Checked.Format(time.DateOnly) != today {
				t.Errorf("base %s, documentation %+v; want %s, %s checked %s", c.BaseURL, c.Documentation, srv.URL(), docs, today)
			}
			if c.Timeout != 2*time.Second || c.Deadline != time.Hour || c.Create != (target.Endpoint{Method: "POST", Path: "/v1/charges"}) {
				t.Errorf("timeout %s, deadline %s, create %+v", c.Timeout, c.Deadline, c.Create)
			}
			ref, tenant := orDefault(tt.cfg.ReferenceField, "metadata.settle_ref"), orDefault(tt.cfg.TenantField, "metadata.settle_tenant")
			if c.ReferenceField != ref || c.TenantField != tenant {
				t.Errorf("fields %s, %s; want %s, %s", c.ReferenceField, c.TenantField, ref, tenant)
			}
			wantResp := target.Response{IDField: "id",
				Match:       []target.MatchField{{Field: "amount", Rule: target.MatchExact}, {Field: "currency", Rule: target.MatchExact}, {Field: ref, Rule: target.MatchExact}, {Field: tenant, Rule: target.MatchExact}},
				StatusField: "status", Statuses: []target.StatusRule{{Value: "succeeded", Outcome: target.ObjectSucceeded}}}
			if !reflect.DeepEqual(c.Response, wantResp) {
				t.Errorf("Response = %+v; want %+v", c.Response, wantResp)
			}
			if c.Owner.Team != "Simulator team" || c.LateRequestsRejected {
				t.Errorf("owner %+v, late requests rejected %v", c.Owner, c.LateRequestsRejected)
			}

			mismatch := target.Unknown
			if tt.cfg.Class == "A" {
				mismatch = target.RejectedWithoutSideEffect
				retention := orDefault(tt.cfg.Retention, 24*time.Hour)
				concurrent := map[bool]string{true: target.ConcurrentConflict, false: target.ConcurrentWaits}[tt.cfg.ConflictOnConcurrent]
				want := target.Idempotency{Header: "Idempotency-Key", Retention: retention, Mismatch: target.MismatchRejected, Concurrent: concurrent}
				if *c.Idempotency != want {
					t.Errorf("Idempotency = %+v; want %+v", *c.Idempotency, want)
				}
			} else if c.Idempotency != nil {
				t.Errorf("class %s has idempotency %+v", tt.cfg.Class, *c.Idempotency)
			}
			for status, want := range map[int]target.Outcome{
				201: target.Succeeded, 202: target.AcceptedPending, 400: target.RejectedWithoutSideEffect,
				409: tt.on409, 422: mismatch, 500: target.Unknown, 503: target.Unknown,
			} {
				if got := c.Classify(status); got != want {
					t.Errorf("Classify(%d) = %s; want %s", status, got, want)
				}
			}
			if got := c.Cites(400); got != docs+"#errors" {
				t.Errorf("Cites(400) = %q", got)
			}

			if tt.cfg.Class == "D" {
				if c.Lookup != nil {
					t.Errorf("class D has lookup %+v", *c.Lookup)
				}
			} else {
				want := target.Lookup{Method: "GET", Path: "/v1/charges?reference={reference}", ResultsField: "data", ReadAfterWrite: tt.raw, PropagationLimit: tt.limit}
				if *c.Lookup != want {
					t.Errorf("Lookup = %+v; want %+v", *c.Lookup, want)
				}
			}
			if got, want := c.ConditionalUpdate != nil, tt.cfg.Class == "C"; got != want || (got && *c.ConditionalUpdate != target.ConditionalUpdate{Header: "If-Match"}) {
				t.Errorf("ConditionalUpdate = %+v", c.ConditionalUpdate)
			}
			if tt.cfg.WebhookSecret == "" && c.Webhook != nil || tt.cfg.WebhookSecret != "" && (c.Webhook == nil || c.Webhook.SecretEnv != sim.WebhookSecretEnv) {
				t.Errorf("Webhook = %+v", c.Webhook)
			}
			if strings.Contains(string(srv.Contract("payments")), "whsec_test") {
				t.Error("the contract holds the webhook secret")
			}
		})
	}
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// The contract's facts hold against the simulator itself: a create and a
// lookup read through the contract agree with the approved payload.
func TestServer_Contract_DescribesBehaviour(t *testing.T) {
	t.Run("A", func(t *testing.T) {
		srv := start(t, sim.Config{Class: "A", ConflictOnConcurrent: true})
		c := parseContract(t, srv, "payments")
		payload := charge("r-1", 500)
		r := create(t, srv, "r-1", payload)
		if got := c.Classify(r.status); got != target.Succeeded {
			t.Fatalf("Classify(%d) = %s; body %s", r.status, got, r.body)
		}
		if id, err := c.RemoteID(r.body); err != nil || id == "" {
			t.Errorf("RemoteID = %q, %v", id, err)
		}
		if done, err := c.Completed(r.body); !done || err != nil {
			t.Errorf("Completed = %v, %v", done, err)
		}
		if diff := c.Mismatches(payload, r.body); diff != nil {
			t.Errorf("create response mismatches %v", diff)
		}
		_, u, _ := c.LookupURL("r-1", "")
		results, err := c.Results(mustSend(t, http.MethodGet, u, nil, nil).body)
		if err != nil || len(results) != 1 {
			t.Fatalf("Results = %s, %v", results, err)
		}
		if diff := c.Mismatches(payload, results[0]); diff != nil {
			t.Errorf("lookup result mismatches %v", diff)
		}
		if got := c.Classify(create(t, srv, "r-1", charge("r-1", 501)).status); got != target.RejectedWithoutSideEffect {
			t.Errorf("mismatched replay classified %s", got)
		}
		wantObjects(t, srv, 1)
	})
	t.Run("B async", func(t *testing.T) {
		srv := start(t, sim.Config{Class: "B", Async: true, AsyncDelay: 50 * time.Millisecond})
		c := parseContract(t, srv, "payments")
		r := create(t, srv, "", charge("r-2", 700))
		if got := c.Classify(r.status); got != target.AcceptedPending {
			t.Fatalf("Classify(%d) = %s", r.status, got)
		}
		if done, err := c.Completed(r.body); done || err != nil {
			t.Errorf("pending body: Completed = %v, %v", done, err)
		}
		_, u, _ := c.LookupURL("r-2", "")
		eventually(t, "the charge to complete", func() bool {
			results, err := c.Results(mustSend(t, http.MethodGet, u, nil, nil).body)
			if err != nil || len(results) != 1 {
				return false
			}
			done, err := c.Completed(results[0])
			return done && err == nil
		})
	})
}

func TestSim_Docs(t *testing.T) {
	srv := start(t, sim.Config{Class: "A", ConflictOnConcurrent: true, MismatchStatus: 409})
	r := mustSend(t, http.MethodGet, srv.URL()+"/_sim/docs", nil, nil)
	wantStatus(t, r, http.StatusOK)
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type = %q", ct)
	}
	for _, want := range []string{"400  invalid_request", "429  rate_limited", "409  idempotency_key_mismatch", "409  idempotency_key_in_use", "5xx"} {
		if !strings.Contains(string(r.body), want) {
			t.Errorf("docs lack %q:\n%s", want, r.body)
		}
	}
	// A mismatch status equal to the conflict status maps to in_progress,
	// the safe reading of the two.
	if got := parseContract(t, srv, "payments").Classify(409); got != target.InProgress {
		t.Errorf("Classify(409) = %s", got)
	}
	// The contract cites the docs for a 429: it happens before anything.
	if c := parseContract(t, srv, "payments"); c.Classify(429) != target.RejectedWithoutSideEffect || c.Cites(429) == "" {
		t.Errorf("Classify(429) = %s citing %q", c.Classify(429), c.Cites(429))
	}
	// A mismatch status of 429 is left to the 429 row, not mapped twice.
	parseContract(t, start(t, sim.Config{Class: "A", MismatchStatus: 429}), "payments")
}

func TestStart_URLNamesRequestedHost(t *testing.T) {
	for addr, host := range map[string]string{"localhost:0": "http://localhost:", ":0": "http://127.0.0.1:", "127.0.0.1:0": "http://127.0.0.1:"} {
		srv := start(t, sim.Config{Class: "B", Addr: addr})
		if !strings.HasPrefix(srv.URL(), host) || strings.HasSuffix(srv.URL(), ":0") {
			t.Errorf("Addr %q: URL = %s; want %s<port>", addr, srv.URL(), host)
		}
		wantStatus(t, mustSend(t, http.MethodGet, srv.URL()+"/_sim/objects", nil, nil), http.StatusOK)
	}
}
