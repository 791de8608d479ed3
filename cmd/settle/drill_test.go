package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestDrill_DatabaseRestart is invariant 6 with a database restart: settle
// serve on PostgreSQL sends 300 operations of 10 tenants to a simulator that
// drops 20% of responses after committing, while PostgreSQL is restarted
// twice. Clients retry their POSTs through the outage. At the end: every
// operation resolved, zero duplicate remote objects, zero lost operations.
//
// It restarts the machine's PostgreSQL, so it runs only on request:
//
//	SETTLE_DRILL=1 go test -run Drill -v -timeout 10m ./cmd/settle/
func TestDrill_DatabaseRestart(t *testing.T) {
	if os.Getenv("SETTLE_DRILL") == "" {
		t.Skip("restarts PostgreSQL: run with SETTLE_DRILL=1 go test -run Drill -v ./cmd/settle/")
	}
	version := strings.TrimSpace(mustOutput(t, "sh", "-c", "ls /etc/postgresql | sort -V | tail -n 1"))
	restart := func() {
		t.Helper()
		start := time.Now()
		if out, err := exec.Command("pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "restart").CombinedOutput(); err != nil {
			t.Fatalf("restart PostgreSQL: %v: %s", err, out)
		}
		t.Logf("PostgreSQL restarted in %s", time.Since(start).Round(time.Millisecond))
	}
	dir := t.TempDir()
	simBase, contracts := simWithContract(t, dir, "--class", "B", "--drop-after-commit", "0.2", "--seed", "3")
	db := schemaURL(t)
	base := start(t, dir, nil, "--database-url", db, "--contracts", contracts, "--lease", "8s")
	tokens := map[string]string{}
	for i := 0; i < 10; i++ {
		tenant := fmt.Sprintf("tenant-%d", i)
		out := mustOutput(t, binary, "token", "create", "--tenant", tenant, "--database-url", db)
		tokens[tenant] = strings.TrimSpace(out)
	}
	type registered struct{ tenant, id, key string }
	var ops []registered
	post := func(i int) registered {
		tenant := fmt.Sprintf("tenant-%d", i%10)
		body := fmt.Sprintf(`{"target":"payments","operation_type":"charge","intent_ref":"drill-%d","payload":{"amount":%d,"currency":"EUR"}}`, i, 100+i)
		for attempt := 0; ; attempt++ { // a client retrying through the outage
			status, op := apiCall(t, http.MethodPost, base+"/api/v1/operations", tokens[tenant], body)
			if status == http.StatusCreated || status == http.StatusOK {
				return registered{tenant, op.ID, op.RemoteKey}
			}
			if attempt > 300 {
				t.Fatalf("POST %d never accepted (last status %d)", i, status)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for i := 0; i < 300; i++ {
		ops = append(ops, post(i))
		if i == 100 || i == 200 {
			restart()
		}
	}
	// Everything settles; nothing is PREPARED or IN_FLIGHT, and nothing
	// whose object exists stays UNKNOWN.
	deadline := time.Now().Add(3 * time.Minute)
	var counts map[string]int
	for {
		counts = map[string]int{}
		objects := simRefs(t, simBase)
		pending := 0
		for _, o := range ops {
			_, got := apiCall(t, http.MethodGet, base+"/api/v1/operations/"+o.id, tokens[o.tenant], "")
			counts[got.State]++
			if got.State == "PREPARED" || got.State == "IN_FLIGHT" || got.State == "" ||
				(got.State == "UNKNOWN" && objects[o.key] > 0) {
				pending++
			}
		}
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d operations still unresolved after the restarts: %v", pending, counts)
		}
		time.Sleep(500 * time.Millisecond)
	}
	objects := simRefs(t, simBase)
	duplicates, lost := 0, 0
	for _, o := range ops {
		if objects[o.key] > 1 {
			duplicates++
		}
		_, got := apiCall(t, http.MethodGet, base+"/api/v1/operations/"+o.id, tokens[o.tenant], "")
		if got.State == "SUCCEEDED" && objects[o.key] != 1 {
			lost++
		}
	}
	t.Logf("drill: 300 operations, 2 PostgreSQL restarts: states %v, remote objects %d, duplicates %d, lost %d",
		counts, len(objects), duplicates, lost)
	if duplicates+lost > 0 {
		t.Fatal("duplicates or lost operations after database restarts")
	}
}

func mustOutput(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return string(out)
}

// simRefs counts the simulator's objects per reference.
func simRefs(t *testing.T, base string) map[string]int {
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
	out := map[string]int{}
	for _, o := range objs {
		out[o.Reference]++
	}
	return out
}
