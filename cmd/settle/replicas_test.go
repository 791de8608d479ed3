package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Two `settle serve` processes on one database, as replicas run: both serve
// the same ledger and both run every loop over it. Operations POSTed to
// either are sent exactly once; the same intent POSTed to the other is the
// same operation; neither logs an error; both stop cleanly on SIGTERM.
func TestServe_TwoReplicasOneDatabase(t *testing.T) {
	t.Parallel()
	for name, db := range map[string]func(t *testing.T, dir string) string{
		"SQLite":   func(t *testing.T, dir string) string { return "sqlite:" + filepath.Join(dir, "settle.db") },
		"Postgres": func(t *testing.T, dir string) string { return schemaURL(t) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			simBase, contracts := simWithContract(t, dir, "--class", "B")
			db := db(t, dir)
			args := []string{"--database-url", db, "--contracts", contracts, "--lease", "10s"}
			replicas := []*server{startServer(t, dir, nil, args...), startServer(t, dir, nil, args...)}
			token := newToken(t, db)

			const n = 20
			ops := make([]apiOp, n)
			for i := range ops {
				here, there := replicas[i%2], replicas[(i+1)%2]
				body := fmt.Sprintf(`{"target":"payments","operation_type":"charge","intent_ref":"replica-%d","payload":{"amount":%d,"currency":"EUR"}}`, i, 100+i)
				status, op := apiCall(t, http.MethodPost, here.URL+"/api/v1/operations", token, body)
				if status != http.StatusCreated {
					t.Fatalf("POST %d to replica %d: %d", i, i%2, status)
				}
				// The other replica knows it at once, as the same operation.
				if status, again := apiCall(t, http.MethodPost, there.URL+"/api/v1/operations", token, body); status != http.StatusOK || again.ID != op.ID {
					t.Fatalf("the same intent POSTed to the other replica: %d, operation %q; want 200 and %q", status, again.ID, op.ID)
				}
				ops[i] = op
				time.Sleep(20 * time.Millisecond) // spread the work over both replicas' claims
			}
			for i, op := range ops {
				got := waitState(t, replicas[(i+1)%2].URL, token, op.ID, "SUCCEEDED", 30*time.Second)
				if got.RemoteRef == "" {
					t.Fatalf("operation %s confirmed without a remote reference", op.ID)
				}
			}
			objects := simRefs(t, simBase)
			total := 0
			for _, c := range objects {
				total += c
			}
			for _, op := range ops {
				if objects[op.RemoteKey] != 1 {
					t.Errorf("operation %s: %d remote objects, want 1", op.ID, objects[op.RemoteKey])
				}
			}
			if total != n {
				t.Errorf("%d remote objects for %d operations", total, n)
			}

			var sent []int
			for i, r := range replicas {
				if err := r.Stop(); err != nil {
					t.Errorf("replica %d did not stop cleanly on SIGTERM: %v", i, err)
				}
				log := r.Log.String()
				for _, bad := range []string{"level=ERROR", "level=WARN"} {
					if strings.Contains(log, bad) {
						t.Errorf("replica %d logged %s:\n%s", i, bad, log)
					}
				}
				sent = append(sent, strings.Count(log, "executor: sent"))
			}
			if sent[0]+sent[1] != n {
				t.Errorf("the replicas logged %d and %d sends for %d operations", sent[0], sent[1], n)
			}
			t.Logf("%s: %d operations, sent by the replicas %d and %d, %d remote objects", name, n, sent[0], sent[1], total)
		})
	}
}
