package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/sqlite"
)

// idle is how long a disabled loop is watched doing nothing. Every loop,
// enabled, acts well within it: the executor polls every 200ms, the sweeper
// every 1s, the reconciler every 500ms (an UNKNOWN is due at once), the
// inbox every 250ms, the notifier every 500ms and the auditor at start.
const idle = 3 * time.Second

// wantLoops fails the test unless the start-up line counts n loops.
func wantLoops(t *testing.T, s *server, n int) {
	t.Helper()
	if want := fmt.Sprintf("background loops: %d)", n); !strings.Contains(s.Line, want) {
		t.Fatalf("start-up line %q; want %q", s.Line, want)
	}
}

// Each --no-X flag disables its loop in this replica only: with the flag,
// the work the loop does stays undone for a while; a second replica on the
// same store without the flag then does it.
func TestServe_NoLoopFlags(t *testing.T) {
	t.Parallel()
	sqliteDB := migratedSQLite

	t.Run("Executor", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		simBase, contracts := simWithContract(t, dir, "--class", "B")
		db := sqliteDB(t, dir)
		args := []string{"--database-url", db, "--contracts", contracts, "--lease", "10s"}
		off := startServer(t, dir, nil, append(args, "--no-executor")...)
		wantLoops(t, off, 7)
		token := newToken(t, db)
		status, op := apiCall(t, http.MethodPost, off.URL+"/api/v1/operations", token, chargeBody)
		if status != http.StatusCreated {
			t.Fatalf("POST: %d", status)
		}
		time.Sleep(idle)
		if _, got := apiCall(t, http.MethodGet, off.URL+"/api/v1/operations/"+op.ID, token, ""); got.State != "PREPARED" || simObjects(t, simBase, op.RemoteKey) != 0 {
			t.Fatalf("with --no-executor the operation is %s after %s, with %d remote objects; want PREPARED and none",
				got.State, idle, simObjects(t, simBase, op.RemoteKey))
		}
		on := startServer(t, dir, nil, args...)
		wantLoops(t, on, 8)
		waitState(t, on.URL, token, op.ID, "SUCCEEDED", 20*time.Second)
		if n := simObjects(t, simBase, op.RemoteKey); n != 1 {
			t.Fatalf("%d remote objects, want 1", n)
		}
	})

	t.Run("Sweeper", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		_, contracts := simWithContract(t, dir, "--class", "B")
		db := sqliteDB(t, dir)
		token := newToken(t, db)
		// An operation whose sender died: IN_FLIGHT, its lease long gone.
		id := expiredInFlight(t, strings.TrimPrefix(db, "sqlite:"))
		args := []string{"--database-url", db, "--contracts", contracts, "--lease", "10s"}
		off := startServer(t, dir, nil, append(args, "--no-sweeper")...)
		wantLoops(t, off, 7)
		time.Sleep(idle)
		if _, got := apiCall(t, http.MethodGet, off.URL+"/api/v1/operations/"+id, token, ""); got.State != "IN_FLIGHT" {
			t.Fatalf("with --no-sweeper an expired lease became %s", got.State)
		}
		on := startServer(t, dir, nil, args...)
		waitFor(t, 20*time.Second, "the expired lease swept", func() (bool, string) {
			_, got := apiCall(t, http.MethodGet, on.URL+"/api/v1/operations/"+id, token, "")
			return got.State != "IN_FLIGHT", "state " + got.State
		})
	})

	t.Run("Reconciler", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		simBase, contracts := simWithContract(t, dir, "--class", "B", "--drop-after-commit", "1")
		db := sqliteDB(t, dir)
		args := []string{"--database-url", db, "--contracts", contracts, "--lease", "10s"}
		off := startServer(t, dir, nil, append(args, "--no-reconciler")...)
		wantLoops(t, off, 7)
		token := newToken(t, db)
		_, op := apiCall(t, http.MethodPost, off.URL+"/api/v1/operations", token, chargeBody)
		waitState(t, off.URL, token, op.ID, "UNKNOWN", 20*time.Second)
		time.Sleep(idle)
		if _, got := apiCall(t, http.MethodGet, off.URL+"/api/v1/operations/"+op.ID, token, ""); got.State != "UNKNOWN" {
			t.Fatalf("with --no-reconciler an UNKNOWN operation became %s", got.State)
		}
		on := startServer(t, dir, nil, args...)
		waitState(t, on.URL, token, op.ID, "SUCCEEDED", 20*time.Second)
		if n := simObjects(t, simBase, op.RemoteKey); n != 1 {
			t.Fatalf("%d remote objects, want 1", n)
		}
	})

	t.Run("Inbox", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		db := sqliteDB(t, dir)
		off := startServer(t, dir, nil, "--database-url", db, "--demo-target", "--no-inbox")
		wantLoops(t, off, 7)
		token := newToken(t, db)
		_, op := apiCall(t, http.MethodPost, off.URL+"/api/v1/operations", token,
			`{"target":"demo","operation_type":"charge","intent_ref":"inbox-1","payload":{"amount":1200,"currency":"EUR"}}`)
		waitState(t, off.URL, token, op.ID, "SUCCEEDED", 20*time.Second)
		const accepted = `settle_webhook_deliveries_total{result="accepted",target="demo"} 1`
		waitFor(t, 10*time.Second, "the demo webhook received", func() (bool, string) {
			m := scrape(t, off.URL)
			return strings.Contains(m, accepted), metricLines(m, "settle_webhook_")
		})
		time.Sleep(idle)
		if m := scrape(t, off.URL); strings.Contains(m, "settle_webhook_events_processed_total{") {
			t.Fatalf("with --no-inbox a delivery was processed: %s", metricLines(m, "settle_webhook_"))
		}
		on := startServer(t, dir, nil, "--database-url", db, "--demo-target")
		waitFor(t, 20*time.Second, "the stored delivery processed by the other replica", func() (bool, string) {
			m := scrape(t, on.URL)
			return strings.Contains(m, "settle_webhook_events_processed_total{"), metricLines(m, "settle_webhook_")
		})
	})

	t.Run("Notifier", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		db := sqliteDB(t, dir)
		var calls atomic.Int32
		receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			w.WriteHeader(http.StatusNoContent)
		}))
		t.Cleanup(receiver.Close)
		if out, err := exec.Command(binary, "callback", "set", "--tenant", "acme", "--url", receiver.URL, "--database-url", db, "--callbacks-allow-http", "--callbacks-allow-net", "127.0.0.1").CombinedOutput(); err != nil {
			t.Fatalf("callback set: %v: %s", err, out)
		}
		off := startServer(t, dir, nil, "--database-url", db, "--demo-target", "--no-notifier")
		wantLoops(t, off, 5) // callbacks, escalation notices and the digest are all off
		token := newToken(t, db)
		_, op := apiCall(t, http.MethodPost, off.URL+"/api/v1/operations", token,
			`{"target":"demo","operation_type":"charge","intent_ref":"notify-1","payload":{"amount":1200,"currency":"EUR"}}`)
		waitState(t, off.URL, token, op.ID, "SUCCEEDED", 20*time.Second)
		time.Sleep(idle)
		if n := calls.Load(); n != 0 {
			t.Fatalf("with --no-notifier the callback was called %d times", n)
		}
		startServer(t, dir, nil, "--database-url", db, "--demo-target", "--callbacks-allow-http", "--callbacks-allow-net", "127.0.0.1")
		waitFor(t, 20*time.Second, "the callback delivered by the other replica", func() (bool, string) {
			n := calls.Load()
			return n > 0, fmt.Sprintf("%d calls", n)
		})
	})

	t.Run("Auditor", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		simBase, contracts := simWithContract(t, dir, "--class", "B")
		db := sqliteDB(t, dir)
		args := []string{"--database-url", db, "--contracts", contracts, "--lease", "10s"}
		first := startServer(t, dir, nil, append(args, "--no-auditor")...)
		wantLoops(t, first, 7)
		token := newToken(t, db)
		_, op := apiCall(t, http.MethodPost, first.URL+"/api/v1/operations", token, chargeBody)
		waitState(t, first.URL, token, op.ID, "SUCCEEDED", 20*time.Second)
		resp, err := http.Post(simBase+"/_sim/duplicate?reference="+op.RemoteKey, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if err := first.Stop(); err != nil {
			t.Fatalf("stop: %v", err)
		}
		// An auditor audits at start, so a replica started now with
		// --no-auditor is where it would have found the duplicate at once.
		startServer(t, dir, nil, append(args, "--no-auditor")...)
		time.Sleep(idle)
		if got := duplicatesFound(t, db); got != "0" {
			t.Fatalf("with --no-auditor the duplicate was found (%s)", got)
		}
		startServer(t, dir, nil, args...)
		waitFor(t, 20*time.Second, "the duplicate found by the other replica's auditor", func() (bool, string) {
			got := duplicatesFound(t, db)
			return got == "1", got + " duplicates"
		})
	})

	t.Run("All", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		s := startServer(t, dir, nil, "--database-url", sqliteDB(t, dir), "--no-executor", "--no-sweeper",
			"--no-reconciler", "--no-inbox", "--no-notifier", "--no-auditor")
		wantLoops(t, s, 0)
		healthy(t, s.URL)
	})
}

// expiredInFlight stores an operation of tenant acme for target payments
// and claims it with a lease that has already run out, as a sender that
// died mid-send leaves it.
func expiredInFlight(t *testing.T, path string) string {
	t.Helper()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, _, err := s.Create(ctx, ledger.NewOperation{Tenant: "acme", Type: "charge", IntentRef: "swept-1",
		Target: "payments", Payload: []byte(`{"amount":500,"currency":"EUR"}`)}); err != nil {
		t.Fatal(err)
	}
	claimed, err := s.ClaimBatch(ctx, 1, time.Millisecond)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim: %v (%d claimed)", err, len(claimed))
	}
	return claimed[0].ID
}

// duplicatesFound is the tenant acme's "duplicates" figure.
func duplicatesFound(t *testing.T, db string) string {
	t.Helper()
	out, err := exec.Command(binary, "figures", "--tenant", "acme", "--csv", "--database-url", db).Output()
	if err != nil {
		t.Fatalf("figures: %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		// tenant,target,day,metric,value,counts
		if v, ok := strings.CutPrefix(line, "acme,,,duplicates,"); ok {
			v, _, _ = strings.Cut(v, ",")
			return v
		}
	}
	t.Fatalf("no duplicates row in:\n%s", out)
	return ""
}

// --workers bounds the executor's concurrent sends. A proxy in front of
// the simulator holds every create for a moment and records how many were
// in progress at once, while one replica sends operations that are all
// ready when it starts.
func TestServe_Workers(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		workers  int
		min, max int32
	}{
		{1, 1, 1},
		{4, 2, 4}, // the proxy is sensitive: concurrent sends are seen
	} {
		t.Run(fmt.Sprintf("%d", tt.workers), func(t *testing.T) {
			t.Parallel()
			peak, sends := workersPeak(t, tt.workers, 6)
			if peak < tt.min || peak > tt.max || sends != 6 {
				t.Fatalf("--workers %d: %d sends, at most %d at once; want 6 sends, %d to %d at once",
					tt.workers, sends, peak, tt.min, tt.max)
			}
			t.Logf("--workers %d: %d sends, at most %d at once", tt.workers, sends, peak)
		})
	}
}

// workersPeak has n operations sent with --workers workers and returns the
// most creates the target saw at once, and how many it saw.
func workersPeak(t *testing.T, workers, n int) (peak, sends int32) {
	t.Helper()
	dir := t.TempDir()
	// The contract names the proxy's address; the simulator listens elsewhere.
	proxyAddr := freeAddr(t)
	out, err := exec.Command(binary, "sim", "--addr", proxyAddr, "--print-contract", "--name", "payments", "--class", "B").Output()
	if err != nil {
		t.Fatalf("print contract: %v", err)
	}
	contracts := filepath.Join(dir, "contracts.yaml")
	if err := os.WriteFile(contracts, out, 0o600); err != nil {
		t.Fatal(err)
	}
	simBase, _ := startSim(t, "--addr", freeAddr(t), "--class", "B")
	target, err := url.Parse(simBase)
	if err != nil {
		t.Fatal(err)
	}
	forward := httputil.NewSingleHostReverseProxy(target)
	var inflight, most, count atomic.Int32
	ln, err := net.Listen("tcp", proxyAddr)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/charges" {
			count.Add(1)
			now := inflight.Add(1)
			defer inflight.Add(-1)
			for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
			}
			time.Sleep(300 * time.Millisecond) // a slow target, well inside the contract's timeout
		}
		forward.ServeHTTP(w, r)
	})}}
	proxy.Start()
	t.Cleanup(proxy.Close)

	db := "sqlite:" + filepath.Join(dir, "settle.db")
	args := []string{"--database-url", db, "--contracts", contracts, "--lease", "10s"}
	api := startServer(t, dir, nil, append(args, "--no-executor")...)
	token := newToken(t, db)
	ids := make([]string, n)
	for i := range ids {
		status, op := apiCall(t, http.MethodPost, api.URL+"/api/v1/operations", token,
			fmt.Sprintf(`{"target":"payments","operation_type":"charge","intent_ref":"w-%d","payload":{"amount":%d,"currency":"EUR"}}`, i, 100+i))
		if status != http.StatusCreated {
			t.Fatalf("POST %d: %d", i, status)
		}
		ids[i] = op.ID
	}
	startServer(t, dir, nil, append(args, "--workers", fmt.Sprint(workers))...)
	for _, id := range ids {
		waitState(t, api.URL, token, id, "SUCCEEDED", 30*time.Second)
	}
	return most.Load(), count.Load()
}

// --body-limit bounds API request bodies: a body of exactly the limit is
// taken, one byte more is 413 with a JSON error. Values that are not a
// positive number of bytes are refused at start, in one line.
func TestServe_BodyLimit(t *testing.T) {
	t.Parallel()
	const limit = 400
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "settle.db")
	base := start(t, dir, nil, "--database-url", db, "--demo-target", "--body-limit", fmt.Sprint(limit))
	token := newToken(t, db)
	body := func(ref string, size int) string {
		b := fmt.Sprintf(`{"target":"demo","operation_type":"charge","intent_ref":"%s","payload":{"amount":1,"currency":"EUR","pad":""}}`, ref)
		return strings.Replace(b, `"pad":""`, `"pad":"`+strings.Repeat("x", size-len(b))+`"`, 1)
	}
	for _, tt := range []struct {
		ref    string
		size   int
		status int
	}{
		{"under", limit - 1, http.StatusCreated},
		{"at", limit, http.StatusCreated},
		{"over", limit + 1, http.StatusRequestEntityTooLarge},
	} {
		b := body(tt.ref, tt.size)
		if len(b) != tt.size {
			t.Fatalf("test body is %d bytes, want %d", len(b), tt.size)
		}
		req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/operations", strings.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e struct{ Error, Message string }
		decodeErr := json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Fatalf("%d-byte body with --body-limit %d: %d, want %d", tt.size, limit, resp.StatusCode, tt.status)
		}
		if tt.status == http.StatusRequestEntityTooLarge &&
			(decodeErr != nil || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || e.Error != "body_too_large" || e.Message == "") {
			t.Fatalf("413 answer: %s, %+v, %v; want a JSON error body_too_large with a message", resp.Header.Get("Content-Type"), e, decodeErr)
		}
	}

	for _, v := range []string{"0", "-1", "abc", "", "1.5"} {
		code, stdout, stderr := runIn(t, t.TempDir(), []string{"DATABASE_URL="}, "serve", "--addr", "127.0.0.1:0", "--body-limit", v)
		if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "body-limit") {
			t.Errorf("--body-limit %q: exit %d, stdout %q, stderr %q; want exit 2 and one line about --body-limit", v, code, stdout, stderr)
		}
	}
}
