package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"settle/ledger"
)

// A create is acknowledged only once it is durable, and a group commit is
// written whole or not at all: 32 clients create at once through the API
// of a `settle serve` that is killed (SIGKILL) at a random moment under
// that load, mid-batch, and restarted on the same database. Every create
// that was answered 201 or 200 is in the ledger with its creation event;
// every operation in the ledger has its creation event; a retry of every
// create after the restart returns the operation it made or creates it
// now, once.
func TestServe_KilledMidGroupCommit(t *testing.T) {
	t.Parallel()
	for name, db := range map[string]func(t *testing.T, dir string) string{
		"SQLite":   func(t *testing.T, dir string) string { return "sqlite:" + filepath.Join(dir, "settle.db") },
		"Postgres": func(t *testing.T, dir string) string { return schemaURL(t) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			db := db(t, dir)
			args := []string{"--database-url", db, "--demo-target", "--rate-limit", "0", "--max-creates", "64",
				"--max-creates-per-tenant", "64"}
			first := startServer(t, dir, nil, args...)
			token := newToken(t, db)

			const clients, each = 32, 100
			var (
				mu       sync.Mutex
				answered = map[string]string{} // intent → operation id, for a 201 or 200
				sent     []string              // every intent sent, answered or not
				acked    atomic.Int64
				wg       sync.WaitGroup
			)
			killAt := int64(100 + rand.IntN(300))
			for c := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						intent := fmt.Sprintf("kill-%d-%d", c, i)
						mu.Lock()
						sent = append(sent, intent)
						mu.Unlock()
						status, id, err := createIntent(first.URL, token, intent)
						if err != nil || status >= 500 {
							return // killed: the answer never came
						}
						if status != http.StatusCreated {
							t.Errorf("POST %s before the kill: %d", intent, status)
							return
						}
						mu.Lock()
						answered[intent] = id
						mu.Unlock()
						if acked.Add(1) == killAt {
							first.Kill()
						}
					}
				}()
			}
			wg.Wait()
			if acked.Load() < killAt {
				t.Fatalf("the server was not killed: %d creates acknowledged, kill due at %d", acked.Load(), killAt)
			}

			second := startServer(t, dir, nil, args...)
			ctx := context.Background()
			st, _, err := openStoreWith(ctx, db, false, func(string) {})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			for intent, id := range answered {
				op, err := st.GetByIntent(ctx, "acme", "charge", intent)
				if err != nil || op.ID != id {
					t.Fatalf("acknowledged create %s (%s) after the restart: %s, %v", intent, id, op.ID, err)
				}
			}
			ops := listAll(t, st, "acme")
			for _, op := range ops {
				evs, err := st.Events(ctx, "acme", op.ID)
				if err != nil || len(evs) == 0 || evs[0].From != "" || evs[0].To != ledger.Prepared {
					t.Fatalf("operation %s (%s) without its creation event: %+v %v", op.ID, op.IntentRef, evs, err)
				}
			}
			unanswered := len(sent) - len(answered)
			t.Logf("%d creates sent, %d acknowledged before the kill; of the %d unanswered, %d were committed",
				len(sent), len(answered), unanswered, len(ops)-len(answered))

			// Retried after the restart: the same operation, or one new one.
			ids := map[string]bool{}
			for _, intent := range sent {
				status, id, err := createIntent(second.URL, token, intent)
				if err != nil {
					t.Fatal(err)
				}
				if was, ok := answered[intent]; ok && (status != http.StatusOK || id != was) {
					t.Fatalf("retry of acknowledged %s: %d %s, want 200 %s", intent, status, id, was)
				}
				if status != http.StatusOK && status != http.StatusCreated {
					t.Fatalf("retry of %s: %d", intent, status)
				}
				ids[id] = true
			}
			if after := listAll(t, st, "acme"); len(after) != len(sent) || len(ids) != len(sent) {
				t.Fatalf("after the retries: %d operations, %d distinct answers, for %d intents", len(after), len(ids), len(sent))
			}
		})
	}
}

// createIntent POSTs a create of intent and returns the status and the
// operation id; err is a request that got no answer.
func createIntent(base, token, intent string) (int, string, error) {
	body := fmt.Sprintf(`{"target":"demo","operation_type":"charge","intent_ref":%q,"payload":{"amount":1200,"currency":"EUR"}}`, intent)
	req, err := http.NewRequest(http.MethodPost, base+"/api/v1/operations", strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	var op struct {
		ID string `json:"operation_id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&op); err != nil {
		return 0, "", err // cut off mid-answer
	}
	return resp.StatusCode, op.ID, nil
}

// listAll returns every operation of tenant, page by page.
func listAll(t *testing.T, st store, tenant string) []ledger.Operation {
	t.Helper()
	var out []ledger.Operation
	f := ledger.ListFilter{Tenant: tenant, Limit: ledger.MaxListLimit}
	for {
		p, err := st.List(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Operations...)
		if p.Next == "" {
			return out
		}
		f.Cursor = p.Next
	}
}
