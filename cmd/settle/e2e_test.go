package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// simWithContract runs `settle sim` with args and writes the contract it
// prints for the same address to dir/contracts.yaml.
func simWithContract(t *testing.T, dir string, args ...string) (base, contracts string) {
	t.Helper()
	addr := freeAddr(t)
	out, err := exec.Command(binary, append([]string{"sim", "--addr", addr, "--print-contract", "--name", "payments"}, args...)...).Output()
	if err != nil {
		t.Fatalf("print contract: %v", err)
	}
	contracts = filepath.Join(dir, "contracts.yaml")
	if err := os.WriteFile(contracts, out, 0o600); err != nil {
		t.Fatal(err)
	}
	base, stop := startSim(t, append([]string{"--addr", addr, "--name", "payments"}, args...)...)
	t.Cleanup(stop)
	return base, contracts
}

// newToken runs `settle token create`.
func newToken(t *testing.T, db string) string {
	t.Helper()
	out, err := exec.Command(binary, "token", "create", "--name", "test client", "--new-tenant", "--tenant", "acme", "--database-url", db).Output()
	if err != nil {
		t.Fatalf("token create: %v", err)
	}
	return strings.TrimSpace(string(out))
}

type apiOp struct {
	ID, State, Status, RemoteKey, RemoteRef string
}

func apiCall(t *testing.T, method, url, token, body string) (int, apiOp) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw struct {
		OperationID string `json:"operation_id"`
		State       string `json:"state"`
		Status      string `json:"status"`
		RemoteKey   string `json:"remote_key"`
		RemoteRef   string `json:"remote_ref"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&raw)
	return resp.StatusCode, apiOp{raw.OperationID, raw.State, raw.Status, raw.RemoteKey, raw.RemoteRef}
}

// waitState polls the API until the operation is in state.
func waitState(t *testing.T, base, token, id, state string, timeout time.Duration) apiOp {
	t.Helper()
	var op apiOp
	waitFor(t, timeout, "operation "+id+" "+state, func() (bool, string) {
		_, op = apiCall(t, http.MethodGet, base+"/api/v1/operations/"+id, token, "")
		return op.State == state, "state " + op.State
	})
	return op
}

// simObjects counts the simulator's objects carrying reference.
func simObjects(t *testing.T, base, reference string) int {
	t.Helper()
	resp, err := http.Get(base + "/_sim/objects")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var objs []struct {
		Reference string `json:"reference"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&objs); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, o := range objs {
		if o.Reference == reference {
			n++
		}
	}
	return n
}

const chargeBody = `{"target":"payments","operation_type":"charge","intent_ref":"order-1","payload":{"amount":500,"currency":"EUR"}}`

// The README walkthrough: a simulator that drops every response after
// committing, settle serve with the contract the simulator printed, one
// operation registered through the API: UNKNOWN, then SUCCEEDED by lookup,
// with exactly one remote object.
func TestEndToEnd_DroppedResponseResolved(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	simBase, contracts := simWithContract(t, dir, "--class", "B", "--drop-after-commit", "1")
	db := "sqlite:" + filepath.Join(dir, "settle.db")
	base := start(t, dir, nil, "--database-url", db, "--contracts", contracts, "--lease", "10s")
	token := newToken(t, db)
	status, op := apiCall(t, http.MethodPost, base+"/api/v1/operations", token, chargeBody)
	if status != http.StatusCreated {
		t.Fatalf("POST: %d", status)
	}
	got := waitState(t, base, token, op.ID, "SUCCEEDED", 20*time.Second)
	if got.Status != "Confirmed" || got.RemoteRef == "" {
		t.Fatalf("confirmed operation: %+v", got)
	}
	if n := simObjects(t, simBase, op.RemoteKey); n != 1 {
		t.Fatalf("%d remote objects", n)
	}
	// On-call view of the same operation, found by its intent reference.
	out, err := exec.Command(binary, "operation", "show", "--tenant", "acme", "order-1", "--database-url", db).CombinedOutput()
	if err != nil {
		t.Fatalf("operation show: %v: %s", err, out)
	}
	for _, want := range []string{op.ID, "SUCCEEDED (Confirmed)", "events:", "executor", "reconciler", "no response"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("operation show lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), `"amount"`) {
		t.Fatalf("operation show printed the payload:\n%s", out)
	}
	if err := exec.Command(binary, "operation", "show", "--tenant", "globex", op.ID, "--database-url", db).Run(); err == nil {
		t.Fatal("another tenant's operation was shown")
	}
}

// A settle process killed with SIGKILL while its request is at the target:
// the restarted process sweeps the expired lease into UNKNOWN and resolves
// it by lookup. One remote object, on both stores.
func TestEndToEnd_KilledDuringSend(t *testing.T) {
	t.Parallel()
	for name, db := range map[string]func(t *testing.T, dir string) string{
		"SQLite":   func(t *testing.T, dir string) string { return "sqlite:" + filepath.Join(dir, "settle.db") },
		"Postgres": func(t *testing.T, dir string) string { return schemaURL(t) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			simBase, contracts := simWithContract(t, dir, "--class", "B", "--slow", "1")
			db := db(t, dir)
			victim := startServer(t, dir, nil, "--database-url", db, "--contracts", contracts, "--lease", "8s")
			token := newToken(t, db)
			status, op := apiCall(t, http.MethodPost, victim.URL+"/api/v1/operations", token, chargeBody)
			if status != http.StatusCreated {
				t.Fatalf("POST: %d", status)
			}
			waitFor(t, 10*time.Second, "the charge at the target", func() (bool, string) {
				n := simObjects(t, simBase, op.RemoteKey)
				return n > 0, fmt.Sprintf("%d objects", n)
			})
			victim.Kill() // SIGKILL while the target holds the answer

			base := start(t, dir, nil, "--database-url", db, "--contracts", contracts, "--lease", "8s")
			got := waitState(t, base, token, op.ID, "SUCCEEDED", 30*time.Second)
			if n := simObjects(t, simBase, op.RemoteKey); n != 1 || got.RemoteRef == "" {
				t.Fatalf("%d remote objects, ref %q", n, got.RemoteRef)
			}
		})
	}
}
