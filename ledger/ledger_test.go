package ledger_test

import (
	"crypto/sha256"
	"testing"
	"time"

	"settle/ledger"
)

func TestCanonicalize(t *testing.T) {
	for name, c := range map[string]struct{ in, want string }{
		"KeyOrder":   {`{"b":1,"a":2}`, `{"a":2,"b":1}`},
		"Whitespace": {"{ \"a\" :\n [ 1 , 2 ] }", `{"a":[1,2]}`},
		"Nested":     {`{"z":{"y":1,"x":[{"b":0,"a":0}]}}`, `{"z":{"x":[{"a":0,"b":0}],"y":1}}`},
		// RFC 8785 number and string forms.
		"Numbers":  {`{"n":1.0,"e":1e3,"f":0.00001,"neg":-0}`, `{"e":1000,"f":0.00001,"n":1,"neg":0}`},
		"Unicode":  {`{"s":"\u00e9\u20ac","k":"\/"}`, `{"k":"/","s":"é€"}`},
		"UTF16Key": {`{"\u20ac":1,"\ud83d\ude00":2,"a":3}`, `{"a":3,"€":1,"😀":2}`},
	} {
		t.Run(name, func(t *testing.T) {
			got, hash, err := ledger.Canonicalize([]byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
			sum := sha256.Sum256([]byte(c.want))
			if string(hash) != string(sum[:]) || !ledger.HashMatches(got, hash) {
				t.Fatal("hash is not SHA-256 of the canonical bytes")
			}
		})
	}
	for _, bad := range []string{``, `  `, `[]`, `1`, `null`, `{"a":}`, `{"a":1}x`, `{"a":1e400}`} {
		if _, _, err := ledger.Canonicalize([]byte(bad)); ledger.ErrorCode(err) != ledger.EInvalid {
			t.Errorf("Canonicalize(%q) = %v, want invalid", bad, err)
		}
	}
}

func TestTransitions(t *testing.T) {
	for _, from := range ledger.States {
		if ledger.CanTransition(from, ledger.Prepared) {
			t.Errorf("%s → PREPARED is allowed; nothing may return to PREPARED", from)
		}
		if from.Final() {
			for _, to := range ledger.States {
				if ledger.CanTransition(from, to) {
					t.Errorf("final state %s → %s is allowed", from, to)
				}
			}
		}
	}
	for _, c := range []struct {
		from, to ledger.State
		want     bool
	}{
		{ledger.Prepared, ledger.InFlight, true},
		{ledger.Prepared, ledger.Succeeded, false},
		{ledger.InFlight, ledger.Unknown, true},
		{ledger.InFlight, ledger.InFlight, false},
		{ledger.Unknown, ledger.InFlight, false},
		{ledger.Unknown, ledger.Unknown, true},
		{ledger.Escalated, ledger.Succeeded, true},
		// An approved same-key replay hands it back to the reconciler.
		{ledger.Escalated, ledger.Unknown, true},
		{ledger.Escalated, ledger.InFlight, false},
	} {
		if got := ledger.CanTransition(c.from, c.to); got != c.want {
			t.Errorf("%s → %s = %v, want %v", c.from, c.to, got, c.want)
		}
	}
}

func TestPlain(t *testing.T) {
	want := map[ledger.State]string{
		ledger.Prepared: "Scheduled", ledger.InFlight: "Sending", ledger.Succeeded: "Confirmed",
		ledger.FailedTerminal: "Not applied", ledger.Unknown: "Confirmation pending",
		ledger.Escalated: "Under review by Payments team",
	}
	for s, w := range want {
		if got := s.Plain("Payments team"); got != w {
			t.Errorf("%s: %q, want %q", s, got, w)
		}
	}
	if got := ledger.Escalated.Plain(""); got != "Under review by the owning team" {
		t.Errorf("no owner: %q", got)
	}
}

// The escalation queue's rule: ESCALATED waits for people; UNKNOWN does
// from its deadline on (the moment itself included); nothing else does.
func TestAwaitsPerson(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { x := now.Add(d); return &x }
	for _, c := range []struct {
		op   ledger.Operation
		want bool
	}{
		{ledger.Operation{State: ledger.Escalated}, true},
		{ledger.Operation{State: ledger.Unknown, Deadline: at(0)}, true},
		{ledger.Operation{State: ledger.Unknown, Deadline: at(-time.Second)}, true},
		{ledger.Operation{State: ledger.Unknown, Deadline: at(time.Second)}, false},
		{ledger.Operation{State: ledger.Unknown}, false},
		{ledger.Operation{State: ledger.InFlight, Deadline: at(-time.Hour)}, false},
		{ledger.Operation{State: ledger.Succeeded, Deadline: at(-time.Hour)}, false},
	} {
		if got := ledger.AwaitsPerson(c.op, now); got != c.want {
			t.Errorf("AwaitsPerson(%s, deadline %v) = %v, want %v", c.op.State, c.op.Deadline, got, c.want)
		}
	}
}
