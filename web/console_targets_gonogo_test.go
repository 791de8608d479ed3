package web_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"settle/gonogo"
	"settle/ledger"
	"settle/web"
)

// The Targets pages show the go/no-go gate, computed by package gonogo from
// the same facts as `settle gonogo`: a no-go with the reason before the
// target's drill, a go on every control after it, for every role.
func TestConsoleTargets_GoNoGo(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		s := open(t)
		ds := s
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		c := newConsole(t, s, web.Config{Now: func() time.Time { return now },
			Retention: ledger.RetentionPolicy{Owner: "Data protection team", RedactPayloadsAfter: 30 * 24 * time.Hour}})

		b := c.as("support")
		list := b.get("/targets")
		if list.status != http.StatusOK || !testid(list.body, "target-gonogo", "NO-GO: 6 of 11 controls failed") {
			t.Fatalf("listing before the drill: %d %s", list.status, list.body)
		}
		p := b.get("/targets/payments")
		if !testid(p.body, "gonogo-verdict", "NO-GO: 6 of 11 controls failed") ||
			bytes.Count(p.body, []byte(`data-testid="control-row"`)) != 11 ||
			!anyTestid(p.body, "control-evidence", "no drill recorded (run: settle drill --target payments)") ||
			!anyTestid(p.body, "control-evidence", "retention owner Data protection team") {
			t.Fatalf("payments before the drill: %s", p.body)
		}

		var run []ledger.DrillResult
		for _, tt := range gonogo.Tests {
			run = append(run, ledger.DrillResult{RunID: "run-1", Target: "payments", Number: tt.Number, Name: tt.Name,
				Passed: true, Reason: "held", RanAt: now.Add(-24 * time.Hour)})
		}
		if err := ds.RecordDrill(context.Background(), run); err != nil {
			t.Fatal(err)
		}
		for _, who := range []string{"support", "owner", "manager", "admin"} {
			p := c.as(who).get("/targets/payments")
			if p.status != http.StatusOK || !testid(p.body, "gonogo-verdict", "GO") || bytes.Contains(p.body, []byte("NO-GO")) ||
				bytes.Count(p.body, []byte(`data-testid="control-verdict">PASS`)) != 11 ||
				!anyTestid(p.body, "control-evidence", "drill test 3 claim_race passed on 2026-11-30") {
				t.Fatalf("%s: payments after the drill: %d %s", who, p.status, p.body)
			}
		}
		if list := b.get("/targets"); !testid(list.body, "target-gonogo", "GO") {
			t.Fatalf("listing after the drill: %s", list.body)
		}
	})
}

// anyTestid reports whether any element with the test id holds text.
func anyTestid(body []byte, id, text string) bool {
	for _, part := range strings.Split(string(body), `data-testid="`+id+`"`)[1:] {
		end := strings.Index(part, "</")
		if end >= 0 && strings.Contains(part[:end], text) {
			return true
		}
	}
	return false
}
