package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"time"

	"settle/ledger"
	"settle/ledger/postgres"
	"settle/reconciler"
	"settle/target"
)

// noopContract is the one target: a loopback server that answers every
// create with 200 and the object (its id and the currency it was sent). The executor still goes through the
// whole path for it: claim committed before the send, the HTTP request with
// the operation's stored bytes and key, the outcome mapped by the contract
// and recorded against the claim's fence with its event row.
const noopContract = `
targets:
  - name: noop
    owner: {team: Bench, escalation_contact: bench@example.invalid}
    documentation: {url: "https://example.invalid/noop", checked: 2026-12-01}
    base_url: BASE
    timeout: 5s
    deadline: 1h
    create: {method: POST, path: /things}
    outcomes:
      - {status: 200, outcome: succeeded}
    response: {id_field: id, match: [currency]}
`

// runSettle migrates settle into s, starts the executor against a no-op
// target and times creating c.jobs operations through ledger.Ledger.Create
// until every one is SUCCEEDED; then it checks that each has its three
// event rows (created, claimed, succeeded).
func runSettle(ctx context.Context, s *schema, c config) (t timed, err error) {
	ctx, cancel := context.WithTimeout(ctx, runTimeout)
	defer cancel()
	if err := postgres.Migrate(ctx, s.pool); err != nil {
		return t, err
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"thing","currency":"EUR"}`))
	}))
	defer srv.Close()
	set, err := target.Parse("noop.yaml", []byte(strings.Replace(noopContract, "BASE", srv.URL, 1)))
	if err != nil {
		return t, err
	}
	contract, _ := set.Get("noop")
	store := postgres.New(s.pool, nil)
	exec := &reconciler.Executor{Store: store, Contracts: set, Client: target.NewClient(target.ClientOptions{}),
		Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})), Workers: c.workers, Idle: pollEvery}
	execCtx, stopExec := context.WithCancel(ctx)
	var execDone sync.WaitGroup
	execDone.Go(func() { _ = exec.Run(execCtx) })
	defer func() { stopExec(); execDone.Wait() }()

	start := time.Now()
	errs := make([]error, c.creators)
	var creators sync.WaitGroup
	for w := range c.creators {
		creators.Go(func() {
			for i := w; i < c.jobs && errs[w] == nil; i += c.creators {
				_, _, errs[w] = store.Create(ctx, ledger.NewOperation{
					Tenant: fmt.Sprintf("tenant-%d", i%4), Type: "charge", IntentRef: fmt.Sprintf("intent-%d", i),
					Target: contract.Name, Payload: fmt.Appendf(nil, `{"amount":%d,"currency":"EUR"}`, 100+i),
					RetryWindow: contract.RetryWindow(), Bind: contract.Bind,
				})
			}
		})
	}
	creators.Wait()
	t.inserted = time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return t, fmt.Errorf("create: %w", err)
	}
	if err := waitCount(ctx, s.pool, "SELECT count(*) FROM operation_ledger WHERE state = 'SUCCEEDED'", c.jobs); err != nil {
		return t, err
	}
	t.done = time.Since(start)
	return t, checkEvents(ctx, s, c.jobs)
}

// checkEvents checks that every operation's life is in the event log: one
// row for its creation, one for its claim and one for its fenced outcome.
func checkEvents(ctx context.Context, s *schema, n int) error {
	var created, claimed, succeeded int
	if err := s.pool.QueryRow(ctx, `SELECT
		count(*) FILTER (WHERE to_state = 'PREPARED'),
		count(*) FILTER (WHERE to_state = 'IN_FLIGHT'),
		count(*) FILTER (WHERE to_state = 'SUCCEEDED')
		FROM operation_events`).Scan(&created, &claimed, &succeeded); err != nil {
		return fmt.Errorf("count events: %w", err)
	}
	if created != n || claimed != n || succeeded != n {
		return fmt.Errorf("event log holds %d creations, %d claims, %d successes for %d operations", created, claimed, succeeded, n)
	}
	return nil
}
