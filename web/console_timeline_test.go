package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"settle/ledger"
	"settle/web"
)

// An operation at a lagging target, looked up again and again with the
// same answer, shows one lookup entry that says how many there were and
// from when to when; the reconciler's reasons and absence checks, in
// engineering words, are folded under "Technical detail" (a <details>,
// open without JavaScript); durations are written as people read them.
func TestConsole_TimelineCollapsesRepeatedLookups(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{})
		ctx := context.Background()
		op := c.create("acme", "lag-1")
		held, err := c.store.Claim(ctx, "acme", op.ID, op.PayloadHash, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.store.Record(ctx, ledger.Outcome{Tenant: "acme", OperationID: op.ID, Fence: held.Fence,
			From: ledger.InFlight, To: ledger.Unknown, Actor: ledger.ActorExecutor, Reason: "no response: timeout",
			Evidence: map[string]any{"failure": "timeout"}}); err != nil {
			t.Fatal(err)
		}
		for i := range 4 {
			leased, err := c.store.LeaseUnknown(ctx, 10, time.Minute)
			if err != nil || len(leased) != 1 {
				t.Fatalf("lease %d: %v %d", i, err, len(leased))
			}
			// Due again at once, so that the next lease takes it.
			next := time.Now()
			if _, err := c.store.Record(ctx, ledger.Outcome{Tenant: "acme", OperationID: op.ID, Fence: leased[0].Fence,
				From: ledger.Unknown, To: ledger.Unknown, Actor: ledger.ActorReconciler, NextAt: &next,
				Reason: "not found yet; absence alone proves nothing",
				Evidence: map[string]any{"via": "lookup", "status": 200, "results": 0, "absence": []any{
					map[string]any{"rule": "visibility", "met": false,
						"detail": fmt.Sprintf("the lookup was sent only %s after the last possible commit", ledger.SpokenDuration(time.Duration(i+1)*49365359066))},
				}}}); err != nil {
				t.Fatal(err)
			}
		}
		r := c.as("support").get(c.opPath(op))
		body := string(r.body)
		if r.status != http.StatusOK {
			t.Fatalf("page: %d", r.status)
		}
		if n := strings.Count(body, `data-kind="lookup"`); n != 1 {
			t.Fatalf("%d lookup entries, want one for all four: %s", n, body)
		}
		if !testid(r.body, "event-repeats", "4 times") {
			t.Fatalf("the lookup entry does not count its repeats: %s", body)
		}
		detail := body[strings.Index(body, `data-testid="event-detail"`):]
		if !strings.Contains(detail, "<summary>Technical detail</summary>") || !strings.Contains(detail, "absence alone proves nothing") ||
			!strings.Contains(detail, "3 min 17 s after the last possible commit") {
			t.Fatalf("technical detail: %s", detail)
		}
		// Outside the fold the story is in plain words.
		plain := body[:strings.Index(body, `data-testid="event-detail"`)]
		for _, jargon := range []string{"absence alone proves nothing", "Absence check", "m5.8"} {
			if strings.Contains(plain[strings.Index(plain, `data-testid="timeline"`):], jargon) {
				t.Errorf("the timeline says %q outside the technical detail", jargon)
			}
		}
	})
}
