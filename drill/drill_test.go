package drill_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"settle/drill"
	"settle/gonogo"
	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/target"
	"settle/target/sim"
)

var harnesses = map[string]ledgertest.Harness{"Postgres": storetest.Postgres(), "SQLite": storetest.SQLite()}

// setup starts a simulator of cfg and returns a drill config for its
// contract, over a fresh store of h.
func setup(t *testing.T, h ledgertest.Harness, cfg sim.Config, tweak func(c *target.Contract)) (drill.Config, *sim.Sim) {
	t.Helper()
	srv, err := sim.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	set, err := target.Parse("sim.yaml", srv.Contract("sim"))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := set.Get("sim")
	if tweak != nil {
		tweak(c)
	}
	st, ok := h.New(t, time.Now).(drill.Store)
	if !ok {
		t.Fatal("store is no drill.Store")
	}
	// A simulator that wants a key gets it, through the contract's auth.
	secrets, err := target.ReadSecrets(set, func(string) string { return cfg.APIKey })
	if err != nil {
		t.Fatal(err)
	}
	return drill.Config{Store: st, Contract: c, Params: st.(target.ParamSource), Secrets: secrets, Version: "test",
		Lease: 500 * time.Millisecond, Poll: 20 * time.Millisecond, Patience: time.Minute,
		Log: slog.New(slog.DiscardHandler)}, srv.Sim()
}

// byNumber indexes results and fails unless there is one per test.
func byNumber(t *testing.T, rs []ledger.DrillResult) map[int]ledger.DrillResult {
	t.Helper()
	out := map[int]ledger.DrillResult{}
	for _, r := range rs {
		out[r.Number] = r
	}
	if len(out) != len(gonogo.Tests) || len(rs) != len(gonogo.Tests) {
		t.Fatalf("%d results for %d tests: %+v", len(rs), len(gonogo.Tests), rs)
	}
	return out
}

// A drill against the simulator (class A and B, with webhooks) passes every
// test, leaves every drill operation final, and its stored run is what the
// gate reads: one remote object per operation it sent.
func TestDrill_Simulator(t *testing.T) {
	t.Parallel()
	for name, h := range harnesses {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg, s := setup(t, h, sim.Config{Class: "A"}, func(c *target.Contract) {
				c.Webhook = &target.Webhook{SecretEnv: "UNUSED", ObjectField: "data", EventIDField: "id"}
			})
			const canary = "PAYLOAD-CANARY-51c0"
			cfg.Payload = []byte(`{"amount": 700, "currency": "EUR", "note": "` + canary + `"}`)
			var logs bytes.Buffer // every line, DEBUG up; read once the run has returned
			cfg.Log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			ctx := context.Background()
			rs, err := drill.Run(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			// Evidence and reasons are stored and shown: never a payload value.
			if raw, _ := json.Marshal(rs); strings.Contains(string(raw), canary) {
				t.Fatalf("a drill result carries a payload value: %s", raw)
			}
			if !strings.Contains(logs.String(), "test done") || strings.Contains(logs.String(), canary) {
				t.Fatalf("the drill's log holds a payload value, or nothing:\n%s", logs.String())
			}
			for n, r := range byNumber(t, rs) {
				if !r.Passed || r.NotApplicable || r.Reason == "" || r.Version != "test" {
					t.Errorf("test %d %s: passed=%v n/a=%v: %s %v", n, r.Name, r.Passed, r.NotApplicable, r.Reason, r.Evidence)
				}
			}
			stored, err := cfg.Store.LatestDrill(ctx, "sim")
			if err != nil || len(stored) != len(rs) || stored[0].RunID != rs[0].RunID {
				t.Fatalf("LatestDrill = %+v, %v", stored, err)
			}
			if ev := stored[0].Evidence; ev["remote_objects"] != float64(1) || ev["responses_dropped"] != float64(1) {
				t.Errorf("test 1 evidence = %v; want one dropped response and one remote object", ev)
			}
			page, err := cfg.Store.List(ctx, ledger.ListFilter{Tenant: "drill", Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			objects := 0
			for _, op := range page.Operations {
				if op.State != ledger.Succeeded {
					t.Errorf("drill operation %s left %s: %s", op.IntentRef, op.State, op.Reason)
				}
				objects++
			}
			// Every drill operation made exactly one remote object, the
			// dropped and the racing ones included.
			if got := len(s.Objects()); got != objects || objects != 8 {
				t.Errorf("the simulator holds %d objects for %d drill operations; want 8 each", got, objects)
			}
		})
	}
}

// A target without lookup or webhooks (class D) cannot take every test:
// test 1 is not applicable and fails (nothing can count the remote
// objects), tests 5 and 6 are not applicable and pass (absence is never
// consulted; nothing inbound is accepted), and the gate is a no-go.
func TestDrill_NoLookup(t *testing.T) {
	t.Parallel()
	for name, h := range harnesses {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg, _ := setup(t, h, sim.Config{Class: "D"}, nil)
			rs, err := drill.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			got := byNumber(t, rs)
			want := map[int][2]bool{1: {false, true}, 5: {true, true}, 6: {true, true}}
			for n, r := range got {
				w, special := want[n]
				if !special {
					w = [2]bool{true, false} // a 201 with the object's id confirms a send directly
				}
				if r.Passed != w[0] || r.NotApplicable != w[1] {
					t.Errorf("test %d %s: passed=%v n/a=%v, want %v/%v: %s", n, r.Name, r.Passed, r.NotApplicable, w[0], w[1], r.Reason)
				}
			}
			if !strings.Contains(got[1].Reason, "no lookup") {
				t.Errorf("test 1 reason %q does not name the missing lookup", got[1].Reason)
			}
		})
	}
}

// A contract that claims more than the target does fails the drill: with
// late requests "rejected" and the deadline past, an empty lookup during
// lag would make the operation FAILED_TERMINAL, which test 5 catches.
func TestDrill_UnsafeContractFails(t *testing.T) {
	t.Parallel()
	cfg, _ := setup(t, harnesses["SQLite"], sim.Config{Class: "B"}, func(c *target.Contract) {
		c.LateRequestsRejected = true
		c.Lookup.ReadAfterWrite = true
		// Past by the second of test 5's three lag rounds, a poll apart.
		c.Deadline = 150 * time.Millisecond
	})
	cfg.Poll = 100 * time.Millisecond
	rs, err := drill.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := byNumber(t, rs)[5]
	if r.Passed || !strings.Contains(r.Reason, "FAILED_TERMINAL") {
		t.Fatalf("test 5 = passed=%v: %s; want a FAIL naming FAILED_TERMINAL", r.Passed, r.Reason)
	}
}

// mapParams is a target.ParamSource over fixed values.
type mapParams map[string]map[string]string

func (m mapParams) TenantParams(_ context.Context, tenant string) (map[string]string, error) {
	return m[tenant], nil
}

// A drill against the Stripe-shaped simulator, with its bearer key and the
// drill tenant's connected account, passes every test, and neither its
// results nor any line of its log holds the key, the account or a payload
// value.
func TestDrill_StripeKeepsSecretsOutOfLogs(t *testing.T) {
	t.Parallel()
	const (
		key     = "sk_test_drill_9f3b2c7d41e6a058"
		account = "acct_1DrillLeakCheck"
		canary  = "PAYLOAD-CANARY-7d2e"
	)
	for name, h := range harnesses {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg, _ := setup(t, h, sim.Config{Flavor: sim.FlavorStripe, APIKey: key, RequireAccount: true}, nil)
			cfg.Params = mapParams{"drill": {"account": account}}
			cfg.Payload = []byte(`{"amount": 700, "currency": "EUR", "payment_method": "pm_card_visa", "confirm": true,
				"description": "` + canary + `"}`)
			var logs bytes.Buffer
			cfg.Log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			rs, err := drill.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(rs)
			for _, secret := range []string{key, account, canary} {
				if strings.Contains(string(raw), secret) || strings.Contains(logs.String(), secret) {
					t.Errorf("%q in the drill's results or log:\n%s\n%s", secret, raw, logs.String())
				}
			}
			for n, r := range byNumber(t, rs) {
				if !r.Passed {
					t.Errorf("test %d %s failed: %s %v", n, r.Name, r.Reason, r.Evidence)
				}
			}
		})
	}
}
