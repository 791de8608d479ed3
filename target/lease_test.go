package target

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestContract_Lease(t *testing.T) {
	c := parseOne(t, "    timeout: 3s\n")
	if c.Lease() != 3*time.Second+LeaseMargin {
		t.Fatalf("lease %s, want the timeout + %s", c.Lease(), LeaseMargin)
	}
}

// A class A target's retention must leave room for a replay after a crash:
// the claim lease expires, then the replay's timeout and margin.
func TestContract_CheckReplayRoom(t *testing.T) {
	for name, c := range map[string]struct {
		extra string
		want  string // "" = room enough
	}{
		"Day":          {"    idempotency: {header: K, retention: 24h, mismatch: rejected}\n", ""},
		"JustEnough":   {"    timeout: 2s\n    idempotency: {header: K, retention: 15s, mismatch: rejected}\n", ""},
		"StatedMargin": {"    timeout: 2s\n    idempotency: {header: K, retention: 11s, mismatch: rejected, replay_margin: 1s}\n", ""},
		"NoRoom": {"    timeout: 2s\n    idempotency: {header: K, retention: 14s, mismatch: rejected}\n",
			"target t1: claim lease 7s + timeout 2s + replay margin 5s = 14s leaves no time for a same-key replay inside its 14s retention;"},
		"NotClassA": {"    timeout: 2s\n    idempotency: {header: K, retention: 1s}\n", ""},
		"NoKeys":    {"    timeout: 2s\n", ""},
	} {
		t.Run(name, func(t *testing.T) {
			err := parseOne(t, c.extra).CheckReplayRoom()
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
				t.Fatalf("error %v, want it to start %q", err, c.want)
			}
		})
	}
}

func TestSet_CheckLeases(t *testing.T) {
	parse := func(extra string) *Set {
		t.Helper()
		s, err := Parse("c.yaml", []byte(edit(extra)))
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		return s
	}
	short := parse("    timeout: 3s\n")
	if err := short.CheckLeases(8 * time.Second); err != nil {
		t.Fatalf("lease = timeout + margin: %v", err)
	}
	err := short.CheckLeases(8*time.Second - time.Millisecond)
	var sl *ShortLeaseError
	if !errors.As(err, &sl) || sl.Target != "t1" || sl.Timeout != 3*time.Second {
		t.Fatalf("a reconciler lease shorter than a send: %v", err)
	}
	noRoom := parse("    timeout: 2s\n    idempotency: {header: K, retention: 14s, mismatch: rejected}\n")
	if err := noRoom.CheckLeases(time.Hour); err == nil || !strings.Contains(err.Error(), "leaves no time for a same-key replay") {
		t.Fatalf("no room for a replay: %v", err)
	}
}
