package sim_test

import (
	"strings"
	"testing"
	"time"

	"settle/target/sim"
)

func TestNew_InvalidConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  sim.Config
		want string
	}{
		{"no class", sim.Config{}, `class "" is not one of A, B, C, D`},
		{"unknown class", sim.Config{Class: "E"}, `class "E"`},
		{"negative retention", sim.Config{Class: "A", Retention: -time.Second}, "Retention must not be negative"},
		{"negative lag", sim.Config{Class: "B", LookupLag: -1}, "LookupLag must not be negative"},
		{"mismatch not 4xx", sim.Config{Class: "A", MismatchStatus: 200}, "MismatchStatus must be a 4xx"},
		{"probability above 1", sim.Config{Class: "B", Reset: 1.5}, "Reset probability must be within 0–1"},
		{"negative probability", sim.Config{Class: "B", Slow: -0.1}, "Slow probability"},
		{"probabilities sum above 1", sim.Config{Class: "B", DropAfterCommit: 0.6, FailAfterCommit: 0.6}, "sum to"},
		{"webhook duplicates", sim.Config{Class: "B", WebhookDuplicates: 2}, "WebhookDuplicates"},
		{"webhook url", sim.Config{Class: "B", WebhookURL: "not a url", WebhookSecret: "s"}, "WebhookURL"},
		{"webhook secret", sim.Config{Class: "B", WebhookURL: "http://127.0.0.1:1/hook"}, "WebhookSecret is required"},
		{"reference path", sim.Config{Class: "B", ReferenceField: "metadata..ref"}, "empty path segment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sim.New(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New error = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestStart_BadAddr(t *testing.T) {
	if _, err := sim.Start(sim.Config{Class: "A", Addr: "256.0.0.1:bad"}); err == nil {
		t.Fatal("Start on a bad address succeeded")
	}
}

func TestFault_String(t *testing.T) {
	if got := sim.DropAfterCommit.String(); got != "DropAfterCommit" {
		t.Errorf("String = %q", got)
	}
	if got := sim.Fault(42).String(); got != "Fault(42)" {
		t.Errorf("String = %q", got)
	}
}
