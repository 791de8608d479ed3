package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"settle/ledger/postgres/pgtest"
)

var binary string

// TestMain builds the real binary once; the tests run it as a user would.
func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

// raceChildrenEnv, set to any value under -race, builds the settle binary
// the tests start with -race too.
const raceChildrenEnv = "SETTLE_TEST_RACE_CHILDREN"

// buildAndRun builds the binary the tests start, and runs them. Under
// -race the binary itself is built without it unless $SETTLE_TEST_RACE_CHILDREN
// is set: race-instrumented children were 247 of the package's 300 CPU
// seconds (40 without), and on the 2-core reference machine the suite is
// CPU-bound. The code the children run is raced in-process by the web,
// reconciler and ledger tests, over real HTTP and both databases; set the
// variable to have these tests check the processes too (a data race makes
// one exit 66, which the tests see). Under -cover the binary is built with
// -cover: it then warns on stderr at every exit unless GOCOVERDIR is set,
// and the tests read stderr, so the child processes get a directory (one
// the caller set is kept).
func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "settle-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "settle")
	args := []string{"build", "-o", binary}
	if raceEnabled && os.Getenv(raceChildrenEnv) != "" {
		args = append(args, "-race")
		// A program built with -race sleeps 1s at exit unless told not to,
		// and the tests run hundreds; a GORACE the caller set still wins.
		os.Setenv("GORACE", strings.TrimSpace("atexit_sleep_ms=0 "+os.Getenv("GORACE")))
	}
	if mode := testing.CoverMode(); mode != "" {
		args = append(args, "-cover", "-covermode="+mode)
		if os.Getenv("GOCOVERDIR") == "" {
			cover := filepath.Join(dir, "cover")
			if err := os.Mkdir(cover, 0o700); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			os.Setenv("GOCOVERDIR", cover) // inherited by every process the tests start
		}
	}
	out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "go %s: %v\n%s", strings.Join(args, " "), err, out)
		return 1
	}
	return m.Run()
}

// waitFor polls cond until it reports done, and fails the test with what
// and cond's last status if that takes longer than timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (done bool, status string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		done, status := cond()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s (last seen: %s)", what, timeout, status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// server is one running `settle serve`.
type server struct {
	t    *testing.T
	URL  string      // base URL, http://HOST:PORT
	Line string      // the start-up line it printed on stdout
	Log  *syncBuffer // everything it wrote on stderr

	cmd  *exec.Cmd
	once sync.Once
	err  error // how it exited
}

// startServer runs `settle serve --addr 127.0.0.1:0 args…` in dir and
// returns once it has printed where it listens. At cleanup it is stopped
// with SIGTERM and must exit cleanly.
func startServer(t *testing.T, dir string, env []string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	return runServer(t, cmd)
}

// runServer starts cmd, a `settle serve` however wrapped, as startServer
// does.
func runServer(t *testing.T, cmd *exec.Cmd) *server {
	t.Helper()
	s := &server{t: t, Log: &syncBuffer{}, cmd: cmd}
	cmd.Stderr = s.Log
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- line
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case s.Line = <-lines:
	case <-time.After(30 * time.Second):
		s.Kill()
		t.Fatalf("settle serve printed nothing in 30s; stderr: %s", s.Log.String())
	}
	_, rest, ok := strings.Cut(s.Line, "listening on ")
	if !ok {
		s.Kill()
		t.Fatalf("unexpected first line %q; stderr: %s", s.Line, s.Log.String())
	}
	s.URL = strings.Fields(rest)[0]
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("settle serve did not stop cleanly: %v; stderr: %s", err, s.Log.String())
		}
	})
	return s
}

// Stop sends SIGTERM and returns how the process exited (nil: exit 0).
// Later calls, and a call after Kill, return the same result.
func (s *server) Stop() error {
	s.once.Do(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- s.cmd.Wait() }()
		select {
		case s.err = <-done:
		case <-time.After(30 * time.Second):
			_ = s.cmd.Process.Kill()
			s.err = fmt.Errorf("still running 30s after SIGTERM: %v", <-done)
		}
	})
	return s.err
}

// Kill stops the process with SIGKILL, as a crash would; its cleanup then
// expects nothing of its exit.
func (s *server) Kill() {
	s.once.Do(func() {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	})
}

// start runs `settle serve` and returns its base URL (see startServer).
func start(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	return startServer(t, dir, env, args...).URL
}

// startLogged is start that also returns the server's log (stderr).
func startLogged(t *testing.T, dir string, env []string, args ...string) (string, *syncBuffer) {
	t.Helper()
	s := startServer(t, dir, env, args...)
	return s.URL, s.Log
}

func healthy(t *testing.T, base string) {
	t.Helper()
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz = %d", resp.StatusCode)
	}
}

// schemaURL returns the URL of a fresh, migrated PostgreSQL database of
// the test's own (see pgtest.DatabaseURL).
func schemaURL(t *testing.T) string {
	return pgtest.DatabaseURL(t)
}

func TestServe_DefaultSQLite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	healthy(t, start(t, dir, []string{"DATABASE_URL="}))
	if _, err := os.Stat(filepath.Join(dir, "settle.db")); err != nil {
		t.Fatalf("default store ./settle.db was not created: %v", err)
	}
}

func TestServe_PostgresFromEnv(t *testing.T) {
	t.Parallel()
	url := schemaURL(t)
	healthy(t, start(t, t.TempDir(), []string{"DATABASE_URL=" + url}))
}

func TestMigrate_Idempotent(t *testing.T) {
	t.Parallel()
	for name, url := range map[string]string{
		"SQLite":   "sqlite:" + filepath.Join(t.TempDir(), "x.db"),
		"Postgres": schemaURL(t),
	} {
		t.Run(name, func(t *testing.T) {
			for i := 0; i < 2; i++ {
				out, err := exec.Command(binary, "migrate", "--database-url", url).CombinedOutput()
				if err != nil || !strings.Contains(string(out), "migrations applied") {
					t.Fatalf("run %d: %v: %s", i, err, out)
				}
			}
		})
	}
}

// settle token create prints only the token; the token works against a
// running server on the same store; revoke makes it fail.
func TestToken_EndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "settle.db")
	base := start(t, dir, nil, "--database-url", db, "--demo-target")

	c := exec.Command(binary, "token", "create", "--name", "test client", "--new-tenant", "--tenant", "acme", "--database-url", db)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("token create: %v: %s", err, stderr.String())
	}
	token := strings.TrimSuffix(stdout.String(), "\n")
	if !strings.HasPrefix(token, "stl_") || strings.ContainsAny(token, " \n\t") {
		t.Fatalf("stdout must be the token alone, got %q", stdout.String())
	}

	post := func() int {
		req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/operations", strings.NewReader(
			`{"target":"demo","operation_type":"charge","intent_ref":"a-1","payload":{"amount":1,"currency":"EUR"}}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := post(); got != http.StatusCreated {
		t.Fatalf("POST with a fresh token: %d", got)
	}

	out, err := exec.Command(binary, "token", "list", "--tenant", "acme", "--database-url", db).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "acme") || strings.Contains(string(out), token) {
		t.Fatalf("token list: %v: %s", err, out)
	}
	id := strings.Fields(strings.Split(string(out), "\n")[1])[0]
	if out, err := exec.Command(binary, "token", "revoke", id, "--tenant", "globex", "--database-url", db).CombinedOutput(); err == nil {
		t.Fatalf("another tenant revoked acme's token: %s", out)
	}
	if got := post(); got != http.StatusCreated && got != http.StatusOK {
		t.Fatalf("POST after another tenant's revocation attempt: %d", got)
	}
	if out, err := exec.Command(binary, "token", "list", "--tenant", "globex", "--database-url", db).CombinedOutput(); err != nil || strings.Contains(string(out), id) {
		t.Fatalf("another tenant lists acme's token: %v: %s", err, out)
	}
	if out, err := exec.Command(binary, "token", "revoke", id, "--tenant", "acme", "--by", "ada", "--database-url", db).CombinedOutput(); err != nil {
		t.Fatalf("token revoke: %v: %s", err, out)
	}
	// The server answers a token from its cache for up to a second
	// (ledger.TokenCacheTTL) after a revocation made by another process.
	waitFor(t, 5*time.Second, "a POST with the revoked token to be refused", func() (bool, string) {
		got := post()
		return got == http.StatusUnauthorized, fmt.Sprint(got)
	})
	if out, err := exec.Command(binary, "token", "create", "--name", "test client", "--new-tenant", "--tenant", "Bad Name", "--database-url", db).CombinedOutput(); err == nil {
		t.Fatalf("invalid tenant accepted: %s", out)
	}
}

// --demo-target: an operation for target "demo" is sent to the in-process
// simulator, confirmed, and the simulator's signed webhook is received,
// verified and processed (consistent with the confirmation).
func TestServe_Demo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "settle.db")
	base := start(t, dir, nil, "--database-url", db, "--demo-target")
	token := newToken(t, db)
	status, op := apiCall(t, http.MethodPost, base+"/api/v1/operations", token,
		`{"target":"demo","operation_type":"charge","intent_ref":"demo-1","payload":{"amount":1200,"currency":"EUR"}}`)
	if status != http.StatusCreated {
		t.Fatalf("POST: %d", status)
	}
	waitState(t, base, token, op.ID, "SUCCEEDED", 10*time.Second)
	const processed = `settle_webhook_events_processed_total{outcome="finished",target="demo"} 1`
	waitFor(t, 10*time.Second, "the demo webhook processed", func() (bool, string) {
		m := scrape(t, base)
		return strings.Contains(m, processed), metricLines(m, "settle_webhook_")
	})
}

// scrape returns the server's /metrics page.
func scrape(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// metricLines is the lines of a metrics page whose names start with prefix,
// for failure messages.
func metricLines(page, prefix string) string {
	var out []string
	for _, l := range strings.Split(page, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return "no " + prefix + "* series"
	}
	return strings.Join(out, "; ")
}

// migratedSQLite runs `settle migrate` on dir/settle.db and returns its
// URL: commands other than migrate and serve refuse a database without
// settle's schema.
func migratedSQLite(t *testing.T, dir string) string {
	t.Helper()
	db := "sqlite:" + filepath.Join(dir, "settle.db")
	if out, err := exec.Command(binary, "migrate", "--database-url", db).CombinedOutput(); err != nil {
		t.Fatalf("settle migrate: %v: %s", err, out)
	}
	return db
}
