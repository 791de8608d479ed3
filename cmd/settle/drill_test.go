package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestDrill_DatabaseRestart is invariant 6 with database restarts: settle
// serve on PostgreSQL sends the operations of 10 tenants to a simulator
// that drops 20% of responses after committing, while PostgreSQL is
// restarted twice. Ten clients, one per tenant, keep POSTing new operations
// throughout, and retry every POST that fails with the same intent and
// body until it is accepted, as a client must; some of those POSTs meet an
// outage (the drill fails if none does, since it would then prove
// nothing). At the end: every accepted operation resolved, one ledger row
// per intent, zero duplicate remote objects, zero lost operations.
//
// It restarts the machine's PostgreSQL, so it runs only on request, and
// never in parallel with the other tests of this package:
//
//	SETTLE_DRILL=1 go test -race -run Drill -v -timeout 15m ./cmd/settle/
func TestDrill_DatabaseRestart(t *testing.T) {
	if os.Getenv("SETTLE_DRILL") == "" {
		t.Skip("restarts PostgreSQL: run with SETTLE_DRILL=1 go test -run Drill -v ./cmd/settle/")
	}
	version := strings.TrimSpace(mustOutput(t, "sh", "-c", "ls /etc/postgresql | sort -V | tail -n 1"))
	dir := t.TempDir()
	simBase, contracts := simWithContract(t, dir, "--class", "B", "--drop-after-commit", "0.2", "--seed", "3")
	db := schemaURL(t)
	srv := startServer(t, dir, nil, "--database-url", db, "--contracts", contracts, "--lease", "8s")
	const tenants = 10
	tokens := make([]string, tenants)
	for i := range tokens {
		tokens[i] = strings.TrimSpace(mustOutput(t, binary, "token", "create", "--name", "test client", "--new-tenant", "--tenant", fmt.Sprintf("tenant-%d", i), "--database-url", db))
	}

	c := &drillClients{base: srv.URL, tokens: tokens, http: &http.Client{Timeout: 10 * time.Second}}
	c.start()
	defer c.stop() // also when the test fails early
	var outages []time.Duration
	for round := 1; round <= 2; round++ {
		before := c.count()
		waitFor(t, time.Minute, fmt.Sprintf("clients accepted 50 operations before restart %d", round), func() (bool, string) {
			n := c.count() - before
			return n >= 50, fmt.Sprintf("%d accepted", n)
		})
		c.outage.Store(true)
		start := time.Now()
		out, err := exec.Command("pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "restart").CombinedOutput()
		took := time.Since(start)
		// Failures just after the restart still belong to it: the pool's
		// connections were cut and are replaced on first use.
		time.Sleep(2 * time.Second)
		c.outage.Store(false)
		if err != nil {
			t.Fatalf("restart PostgreSQL: %v: %s", err, out)
		}
		outages = append(outages, took.Round(time.Millisecond))
		t.Logf("restart %d: PostgreSQL restarted in %s", round, took.Round(time.Millisecond))
	}
	before := c.count()
	waitFor(t, 2*time.Minute, "clients accepted 50 operations after the last restart", func() (bool, string) {
		n := c.count() - before
		return n >= 50, fmt.Sprintf("%d accepted", n)
	})
	c.stop()
	for _, err := range c.errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
	t.Logf("clients: %d POSTs, %d accepted operations; %d POSTs failed, %d of them during an outage; %d retries found their operation already created (200)",
		c.posts.Load(), len(c.ops), c.failed.Load(), c.failedInOutage.Load(), c.replayed.Load())
	if c.failedInOutage.Load() == 0 {
		t.Fatal("no POST met an outage: the drill did not exercise the restarts")
	}

	// Every accepted operation resolves: nothing PREPARED or IN_FLIGHT, and
	// nothing UNKNOWN (every create the simulator received committed).
	var counts map[string]int
	waitFor(t, 3*time.Minute, "every accepted operation resolved", func() (bool, string) {
		counts = map[string]int{}
		for _, o := range c.ops {
			_, got := apiCall(t, http.MethodGet, srv.URL+"/api/v1/operations/"+o.id, tokens[o.tenant], "")
			counts[got.State]++
		}
		pending := counts["PREPARED"] + counts["IN_FLIGHT"] + counts["UNKNOWN"] + counts[""]
		return pending == 0, fmt.Sprintf("states %v", counts)
	})

	objects := simRefs(t, simBase)
	duplicates, lost := 0, 0
	for _, o := range c.ops {
		_, got := apiCall(t, http.MethodGet, srv.URL+"/api/v1/operations/"+o.id, tokens[o.tenant], "")
		switch n := objects[o.key]; {
		case n > 1:
			duplicates++
		case got.State == "SUCCEEDED" && n != 1, got.State == "FAILED_TERMINAL" && n != 0:
			lost++
		}
	}
	total := 0
	for _, n := range objects {
		total += n
	}
	rows := ledgerRows(t, db)
	t.Logf("drill: %d operations of %d tenants, PostgreSQL restarted %d times (%v): states %v; %d ledger rows; %d remote objects; duplicates %d, lost %d; %d ERROR lines in the server log",
		len(c.ops), tenants, len(outages), outages, counts, rows, total, duplicates, lost, strings.Count(srv.Log.String(), "level=ERROR"))
	if rows != len(c.ops) {
		t.Errorf("%d ledger rows for %d accepted intents: a retried POST made a second operation", rows, len(c.ops))
	}
	if duplicates+lost > 0 || total > len(c.ops) {
		t.Fatal("duplicates or lost operations after database restarts")
	}
}

// drillClients are the drill's client services: one goroutine per tenant,
// each POSTing new operations one after another and retrying a failed POST
// with the same intent and body until it is accepted.
type drillClients struct {
	base   string
	tokens []string
	http   *http.Client

	outage                                  atomic.Bool // set while PostgreSQL restarts
	posts, failed, failedInOutage, replayed atomic.Int64

	mu       sync.Mutex
	ops      []drillOp
	errs     []error
	done     chan struct{}
	wg       sync.WaitGroup
	stopOnce sync.Once
}

type drillOp struct {
	tenant  int
	id, key string
}

func (c *drillClients) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.ops)
}

func (c *drillClients) start() {
	c.done = make(chan struct{})
	for tenant := range c.tokens {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			for i := 0; ; i++ {
				select {
				case <-c.done:
					return
				case <-time.After(20 * time.Millisecond):
				}
				body := fmt.Sprintf(`{"target":"payments","operation_type":"charge","intent_ref":"drill-%d-%d","payload":{"amount":%d,"currency":"EUR"}}`,
					tenant, i, 100+i)
				if err := c.register(tenant, body); err != nil {
					c.mu.Lock()
					c.errs = append(c.errs, err)
					c.mu.Unlock()
					return
				}
			}
		}()
	}
}

// register POSTs body until it is accepted (201, or 200 when an earlier
// attempt's row was committed but its answer lost), for up to two minutes.
func (c *drillClients) register(tenant int, body string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for attempt := 0; ; attempt++ {
		status, op, err := c.post(c.tokens[tenant], body)
		c.posts.Add(1)
		switch {
		case status == http.StatusCreated, status == http.StatusOK:
			if attempt > 0 && status == http.StatusOK {
				c.replayed.Add(1)
			}
			c.mu.Lock()
			c.ops = append(c.ops, drillOp{tenant, op.OperationID, op.RemoteKey})
			c.mu.Unlock()
			return nil
		case status >= 400 && status < 500:
			return fmt.Errorf("POST %s: %d: the API refused it", body, status)
		}
		c.failed.Add(1)
		if c.outage.Load() {
			c.failedInOutage.Add(1)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("POST %s never accepted in 2m (last: %d, %v)", body, status, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type drillAnswer struct {
	OperationID string `json:"operation_id"`
	RemoteKey   string `json:"remote_key"`
}

// post is one POST; a transport error is status 0.
func (c *drillClients) post(token, body string) (int, drillAnswer, error) {
	var a drillAnswer
	req, err := http.NewRequest(http.MethodPost, c.base+"/api/v1/operations", strings.NewReader(body))
	if err != nil {
		return 0, a, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, a, err
	}
	defer resp.Body.Close()
	err = json.NewDecoder(resp.Body).Decode(&a)
	return resp.StatusCode, a, err
}

// stop ends the clients once their POSTs in progress are accepted.
func (c *drillClients) stop() {
	c.stopOnce.Do(func() { close(c.done) })
	c.wg.Wait()
}

// ledgerRows counts the operations in the drill's database.
func ledgerRows(t *testing.T, db string) int {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM operation_ledger").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
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
