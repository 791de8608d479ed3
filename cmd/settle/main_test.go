package main

import (
	"bufio"
	"bytes"
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
	dir, err := os.MkdirTemp("", "settle-bin")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "settle")
	out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
	if err != nil {
		os.Stderr.Write(out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// start runs `settle serve` in dir and returns its base URL once it prints
// where it listens; the process is stopped with SIGTERM at cleanup and must
// exit cleanly.
func start(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	base, _ := startLogged(t, dir, env, args...)
	return base
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

// startLogged is start that also returns the server's log (stderr).
func startLogged(t *testing.T, dir string, env []string, args ...string) (string, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
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
	var line string
	select {
	case line = <-lines:
	case <-time.After(30 * time.Second):
		t.Fatal("settle serve printed nothing in 30s")
	}
	_, url, ok := strings.Cut(line, "listening on ")
	if !ok {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("unexpected first line %q; stderr: %s", line, stderr.String())
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("settle serve did not stop cleanly: %v; stderr: %s", err, stderr.String())
		}
	})
	return strings.Fields(url)[0], stderr
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

func TestServe_DefaultSQLite(t *testing.T) {
	dir := t.TempDir()
	healthy(t, start(t, dir, []string{"DATABASE_URL="}))
	if _, err := os.Stat(filepath.Join(dir, "settle.db")); err != nil {
		t.Fatalf("default store ./settle.db was not created: %v", err)
	}
}

func TestServe_PostgresFromEnv(t *testing.T) {
	url := schemaURL(t)
	healthy(t, start(t, t.TempDir(), []string{"DATABASE_URL=" + url}))
}

// schemaURL returns the URL of a fresh, migrated database.
func schemaURL(t *testing.T) string {
	return pgtest.DatabaseURL(t)
}

func TestMigrate_Idempotent(t *testing.T) {
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

func TestBadDatabaseURL(t *testing.T) {
	for name, url := range map[string]string{
		"Malformed":   "postgres://admin:hunter2@db:notaport/x",
		"Unreachable": "postgres://admin:hunter2@127.0.0.1:1/x?connect_timeout=2",
		"Unsupported": "mysql://admin:hunter2@db/x",
		"Unwritable":  "sqlite:/proc/settle/x.db",
	} {
		t.Run(name, func(t *testing.T) {
			for _, cmd := range []string{"serve", "migrate"} {
				args := []string{cmd, "--database-url", url}
				if cmd == "serve" {
					args = append(args, "--addr", "127.0.0.1:0")
				}
				c := exec.Command(binary, args...)
				var stdout, stderr bytes.Buffer
				c.Stdout, c.Stderr = &stdout, &stderr
				err := c.Run()
				exit, ok := err.(*exec.ExitError)
				if !ok || exit.ExitCode() == 0 {
					t.Fatalf("%s: err = %v, want a non-zero exit", cmd, err)
				}
				msg := stderr.String()
				if strings.Count(msg, "\n") != 1 || strings.Contains(msg, "hunter2") || stdout.Len() != 0 {
					t.Fatalf("%s: want one error line without the password, got %q", cmd, msg)
				}
			}
		})
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"bogus"}, {"serve", "--no-such-flag"}, {"migrate", "extra"}} {
		err := exec.Command(binary, args...).Run()
		if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 2 {
			t.Fatalf("settle %v: %v, want exit 2", args, err)
		}
	}
}

// settle token create prints only the token; the token works against a
// running server on the same store; revoke makes it fail.
func TestToken_EndToEnd(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "settle.db")
	base := start(t, dir, nil, "--database-url", db, "--demo")

	c := exec.Command(binary, "token", "create", "--tenant", "acme", "--database-url", db)
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

	out, err := exec.Command(binary, "token", "list", "--database-url", db).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "acme") || strings.Contains(string(out), token) {
		t.Fatalf("token list: %v: %s", err, out)
	}
	id := strings.Fields(strings.Split(string(out), "\n")[1])[0]
	if out, err := exec.Command(binary, "token", "revoke", id, "--database-url", db).CombinedOutput(); err != nil {
		t.Fatalf("token revoke: %v: %s", err, out)
	}
	if got := post(); got != http.StatusUnauthorized {
		t.Fatalf("POST with a revoked token: %d", got)
	}
	for _, args := range [][]string{
		{"token"}, {"token", "create"}, {"token", "revoke"}, {"token", "frob"},
	} {
		if err := exec.Command(binary, args...).Run(); err == nil {
			t.Fatalf("settle %v succeeded", args)
		}
	}
	if out, err := exec.Command(binary, "token", "create", "--tenant", "Bad Name", "--database-url", db).CombinedOutput(); err == nil {
		t.Fatalf("invalid tenant accepted: %s", out)
	}
}

// --demo: an operation for target "demo" is sent to the in-process
// simulator, confirmed, and the simulator's signed webhook is received,
// verified and processed (consistent with the confirmation).
func TestServe_Demo(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "settle.db")
	base := start(t, dir, nil, "--database-url", db, "--demo")
	token := newToken(t, db)
	status, op := apiCall(t, http.MethodPost, base+"/api/v1/operations", token,
		`{"target":"demo","operation_type":"charge","intent_ref":"demo-1","payload":{"amount":1200,"currency":"EUR"}}`)
	if status != http.StatusCreated {
		t.Fatalf("POST: %d", status)
	}
	waitState(t, base, token, op.ID, "SUCCEEDED", 10*time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), `settle_webhook_events_processed_total{outcome="finished",target="demo"} 1`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the demo webhook was not processed:\n%s", body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
