package client

import (
	"bufio"
	"bytes"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "modernc.org/sqlite"             // database/sql driver "sqlite"

	"settle/ledger/postgres/pgtest"
)

// binary is the settle binary the tests run, built once by TestMain
// (without -race: the server's code is raced by its own packages' tests).
var binary string

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "settle-client-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "settle")
	if out, err := exec.Command("go", "build", "-o", binary, "settle/cmd/settle").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build settle/cmd/settle: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// settled is one running `settle serve` on loopback, with a tenant acme,
// its API token, and acme's callbacks pointed at Receiver.
type settled struct {
	URL      string
	DB       string // the --database-url
	Token    string
	Secret   []byte // acme's callback secret
	Receiver *httptest.Server
	// Callbacks is what Receiver passes each delivery to; set it before
	// registering anything.
	Callbacks *callbackMux

	log  *bytes.Buffer
	logM sync.Mutex
}

// callbackMux lets a test choose the receiver's handler after the
// receiver's URL is known.
type callbackMux struct {
	mu sync.Mutex
	h  http.Handler
}

func (m *callbackMux) set(h http.Handler) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.h = h
}

func (m *callbackMux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	h := m.h
	m.mu.Unlock()
	if h == nil {
		http.Error(w, "not ready", http.StatusServiceUnavailable)
		return
	}
	h.ServeHTTP(w, r)
}

// stores runs f against a settle serve on each store, in parallel.
func stores(t *testing.T, f func(t *testing.T, s *settled)) {
	for _, name := range []string{"SQLite", "Postgres"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f(t, startSettle(t, name, []string{"--max-creates", "1"}))
		})
	}
}

// run runs the settle binary to completion and returns its stdout.
func run(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	c := exec.Command(binary, args...)
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("settle %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(stdout.String())
}

var allowLoopback = []string{"--callbacks-allow-http", "--callbacks-allow-net", "127.0.0.1"}

// startSettle starts `settle serve --demo-target` on store ("SQLite" or
// "Postgres"), with extra flags, and stops it at cleanup.
func startSettle(t *testing.T, store string, extra []string, tokenFlags ...string) *settled {
	t.Helper()
	dir := t.TempDir()
	s := &settled{Callbacks: &callbackMux{}, log: &bytes.Buffer{}}
	switch store {
	case "SQLite":
		s.DB = "sqlite:" + filepath.Join(dir, "settle.db")
		run(t, "migrate", "--database-url", s.DB)
	case "Postgres":
		s.DB = pgtest.DatabaseURL(t)
	default:
		t.Fatalf("store %q", store)
	}
	s.Receiver = httptest.NewServer(s.Callbacks)
	t.Cleanup(s.Receiver.Close)
	s.Token = run(t, append([]string{"token", "create", "--new-tenant", "--tenant", "acme", "--name", "client tests",
		"--database-url", s.DB}, tokenFlags...)...)
	s.Secret = []byte(run(t, append([]string{"callback", "set", "--tenant", "acme", "--url", s.Receiver.URL + "/hooks",
		"--database-url", s.DB}, allowLoopback...)...))

	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--database-url", s.DB, "--demo-target"}, allowLoopback...)
	cmd := exec.Command(binary, append(args, extra...)...)
	cmd.Dir = dir
	cmd.Stderr = writerFunc(func(p []byte) (int, error) {
		s.logM.Lock()
		defer s.logM.Unlock()
		return s.log.Write(p)
	})
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("settle serve still running 20s after SIGTERM")
		}
	})
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- line
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case line := <-lines:
		_, rest, ok := strings.Cut(line, "listening on ")
		if !ok {
			t.Fatalf("settle serve: first line %q; stderr: %s", line, s.stderr())
		}
		s.URL = strings.Fields(rest)[0]
	case <-time.After(30 * time.Second):
		t.Fatalf("settle serve printed nothing in 30s; stderr: %s", s.stderr())
	}
	return s
}

func (s *settled) stderr() string {
	s.logM.Lock()
	defer s.logM.Unlock()
	return s.log.String()
}

// db opens the server's database beside it.
func (s *settled) db(t *testing.T) *sql.DB {
	t.Helper()
	driver, dsn := "pgx", s.DB
	if path, ok := strings.CutPrefix(s.DB, "sqlite:"); ok {
		driver, dsn = "sqlite", path+"?_pragma=busy_timeout(10000)"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// client is a Client of s with opts.
func (s *settled) client(t *testing.T, opts ...Option) *Client {
	t.Helper()
	c, err := New(s.URL, s.Token, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
