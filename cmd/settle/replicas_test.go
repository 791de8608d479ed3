package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
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
				sent = append(sent, strings.Count(log, "msg=sent component=executor "))
			}
			if sent[0]+sent[1] != n {
				t.Errorf("the replicas logged %d and %d sends for %d operations", sent[0], sent[1], n)
			}
			t.Logf("%s: %d operations, sent by the replicas %d and %d, %d remote objects", name, n, sent[0], sent[1], total)
		})
	}
}

// countingSim runs `settle sim --class B` behind a proxy on loopback that
// counts the lookups (GET /v1/charges…) reaching it, and writes the
// contract, naming the proxy, to dir/contracts.yaml.
func countingSim(t *testing.T, dir string) (lookups *atomic.Int64, contracts string) {
	t.Helper()
	// --print-contract refuses an address in use, so the proxy listens
	// after it has printed.
	addr := freeAddr(t)
	out, err := exec.Command(binary, "sim", "--addr", addr, "--print-contract", "--name", "payments", "--class", "B").Output()
	if err != nil {
		t.Fatalf("print contract: %v", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	contracts = filepath.Join(dir, "contracts.yaml")
	if err := os.WriteFile(contracts, out, 0o600); err != nil {
		t.Fatal(err)
	}
	simBase, stop := startSim(t, "--addr", freeAddr(t), "--name", "payments", "--class", "B")
	t.Cleanup(stop)
	u, err := url.Parse(simBase)
	if err != nil {
		t.Fatal(err)
	}
	lookups = &atomic.Int64{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/charges") {
			lookups.Add(1)
		}
		proxy.ServeHTTP(w, r)
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return lookups, contracts
}

// leads reports whether the replica's /metrics says it runs the auditor.
func leads(t *testing.T, s *server) bool {
	t.Helper()
	return strings.Contains(scrape(t, s.URL), "\nsettle_leader{duty=\"auditor\"} 1\n")
}

// Two replicas on one PostgreSQL database audit the target once, not
// twice: the auditor runs under a leader lease. The leader then dies
// (SIGKILL, no release): the other replica takes over when the lease
// expires, not before, and only then audits.
func TestServe_ReplicasAuditOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lookups, contracts := countingSim(t, dir)
	db := schemaURL(t)
	token := newToken(t, db)

	// The operations are confirmed by a replica without an auditor, so
	// that every lookup counted later is the audit's.
	const n = 6
	filler := startServer(t, dir, nil, "--database-url", db, "--contracts", contracts, "--lease", "10s", "--no-auditor")
	for i := range n {
		body := fmt.Sprintf(`{"target":"payments","operation_type":"charge","intent_ref":"audit-%d","payload":{"amount":%d,"currency":"EUR"}}`, i, 100+i)
		status, op := apiCall(t, http.MethodPost, filler.URL+"/api/v1/operations", token, body)
		if status != http.StatusCreated {
			t.Fatalf("POST %d: %d", i, status)
		}
		waitState(t, filler.URL, token, op.ID, "SUCCEEDED", 30*time.Second)
	}
	if err := filler.Stop(); err != nil {
		t.Fatal(err)
	}
	before := lookups.Load()

	// One audit step covers all n operations, and the next is an hour
	// away: a replica that audits makes exactly n lookups at start.
	const lease = 3 * time.Second
	args := []string{"--database-url", db, "--contracts", contracts, "--lease", "10s",
		"--leader-lease", lease.String(), "--audit-interval", "1h", "--no-executor", "--no-reconciler"}
	replicas := []*server{startServer(t, dir, nil, args...), startServer(t, dir, nil, args...)}
	waitFor(t, 20*time.Second, "one replica audits", func() (bool, string) {
		got := lookups.Load() - before
		return got >= n, fmt.Sprintf("%d lookups", got)
	})
	var leader, follower *server
	waitFor(t, 10*time.Second, "one leader", func() (bool, string) {
		a, b := leads(t, replicas[0]), leads(t, replicas[1])
		switch {
		case a && !b:
			leader, follower = replicas[0], replicas[1]
		case b && !a:
			leader, follower = replicas[1], replicas[0]
		}
		return leader != nil, fmt.Sprintf("leading: %v, %v", a, b)
	})

	leader.Kill()
	killed := time.Now()
	waitFor(t, 30*time.Second, "the other replica takes over", func() (bool, string) {
		// Until it leads, nobody audits: one pass's lookups, not two. The
		// count is read first: if the replica does not lead after, it did
		// not lead when the count was read either.
		got := lookups.Load() - before
		if leads(t, follower) {
			return true, ""
		}
		if got != n {
			t.Fatalf("%d audit lookups before the takeover, want %d (one replica's)", got, n)
		}
		return false, "not leading"
	})
	// The last renewal began at most a third of the lease (the tick) plus
	// a sixth (one attempt's limit) before the kill, so the lease outlived
	// the leader by at least half of it; a third leaves room for a slow
	// machine.
	if took := time.Since(killed); took < lease/3 {
		t.Errorf("took over %s after the kill; the lease (%s) cannot have expired yet", took, lease)
	}
	waitFor(t, 20*time.Second, "the new leader audits", func() (bool, string) {
		got := lookups.Load() - before
		return got >= 2*n, fmt.Sprintf("%d lookups", got)
	})
	if got := lookups.Load() - before; got != 2*n {
		t.Errorf("%d audit lookups after the takeover, want %d", got, 2*n)
	}
	if log := follower.Log.String(); !strings.Contains(log, "duty=auditor") {
		t.Errorf("the new leader did not log taking the auditor duty:\n%s", log)
	}
}
