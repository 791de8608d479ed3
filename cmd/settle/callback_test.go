package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"settle/target"
)

// settleCmd runs the binary and returns its exit code, stdout and stderr.
func settleCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	c := exec.Command(binary, args...)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	err := c.Run()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stderr.String(), `unknown command "callback"`) {
		t.Fatal(`settle callback is not wired: add case "callback": err = callback(ctx, args[1:], stdout, stderr) to run in main.go`)
	}
	return code, stdout.String(), stderr.String()
}

var secretRe = regexp.MustCompile(`^scs_[A-Za-z0-9_-]{43}\n$`)

// set prints the secret and nothing else on stdout; show prints the URL and
// never the secret; remove removes it.
func TestCallback_SetShowRemove(t *testing.T) {
	t.Parallel()
	for name, db := range map[string]string{
		"SQLite":   migratedSQLite(t, t.TempDir()),
		"Postgres": schemaURL(t),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			const url = "https://hooks.example.com/settle?k=1"
			code, out, errOut := settleCmd(t, "callback", "set", "--tenant", "acme", "--url", url, "--database-url", db)
			if code != 0 || !secretRe.MatchString(out) {
				t.Fatalf("set: exit %d, stdout %q (want the secret alone), stderr %q", code, out, errOut)
			}
			secret := strings.TrimSpace(out)
			if strings.Contains(errOut, secret) || strings.Count(errOut, "\n") != 1 {
				t.Fatalf("set: stderr %q", errOut)
			}
			code, out, errOut = settleCmd(t, "callback", "show", "--tenant", "acme", "--database-url", db)
			if code != 0 || out != url+"\n" || strings.Contains(out+errOut, secret) {
				t.Fatalf("show: exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			_, again, _ := settleCmd(t, "callback", "set", "--database-url", db, "--tenant", "acme", "--url", url)
			if !secretRe.MatchString(again) || again == secret+"\n" {
				t.Fatalf("second set must print a new secret, got %q", again)
			}
			if code, out, errOut = settleCmd(t, "callback", "remove", "--tenant", "acme", "--database-url", db); code != 0 {
				t.Fatalf("remove: exit %d, %q %q", code, out, errOut)
			}
			code, out, errOut = settleCmd(t, "callback", "show", "--tenant", "acme", "--database-url", db)
			if code != 1 || out != "" || strings.Count(errOut, "\n") != 1 {
				t.Fatalf("show after remove: exit %d, stdout %q, stderr %q", code, out, errOut)
			}
		})
	}
}

// A bad URL or tenant is one error line and a non-zero exit; nothing is
// stored, not even a database file is created. Missing flags are usage.
func TestCallback_Invalid(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "settle.db")
	for name, args := range map[string][]string{
		"Scheme":   {"--tenant", "acme", "--url", "ftp://hooks.example.com/x"},
		"Relative": {"--tenant", "acme", "--url", "/hooks"},
		"UserInfo": {"--tenant", "acme", "--url", "https://admin:hunter2@hooks.example.com/x"},
		"Garbage":  {"--tenant", "acme", "--url", "not a url"},
		// The receivers: plain http, loopback, the cloud metadata
		// address, spaces and markup.
		"HTTP":      {"--tenant", "acme", "--url", "http://hooks.example.com/x"},
		"Loopback":  {"--tenant", "acme", "--url", "https://127.0.0.1:9/x"},
		"Localhost": {"--tenant", "acme", "--url", "https://localhost/x"},
		"Metadata":  {"--tenant", "acme", "--url", "https://169.254.169.254/latest"},
		"Private":   {"--tenant", "acme", "--url", "https://10.0.0.7/x"},
		"Spaces":    {"--tenant", "acme", "--url", "https://hooks.example.com/a b"},
		"Markup":    {"--tenant", "acme", "--url", "https://hooks.example.com/<b>x</b>"},
		"DevNotNet": {"--tenant", "acme", "--callbacks-allow-http", "--url", "http://127.0.0.1:9/x"},
		"Tenant":    {"--tenant", "Not Valid", "--url", "https://hooks.example.com/x"},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := settleCmd(t, append([]string{"callback", "set", "--database-url", "sqlite:" + path}, args...)...)
			if code != 1 || out != "" || strings.Count(errOut, "\n") != 1 || strings.Contains(errOut, "hunter2") {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 1 and one line without the URL's password", code, out, errOut)
			}
		})
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a rejected command touched the store: %v", err)
	}
	for _, args := range [][]string{
		{"callback"}, {"callback", "frob"}, {"callback", "set", "--tenant", "acme"}, {"callback", "show"},
		{"callback", "remove", "--tenant", "acme", "extra"},
	} {
		if code, _, _ := settleCmd(t, args...); code != 2 {
			t.Fatalf("settle %v: exit %d, want 2", args, code)
		}
	}
}

// settle serve delivers a signed notification to the tenant's endpoint once
// an operation is confirmed.
func TestCallback_EndToEnd(t *testing.T) {
	t.Parallel()
	got := make(chan []byte, 10)
	var secret []byte
	var refuse atomic.Bool
	// Started only once the secret is known, so the handler reads it safely.
	receiver := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if refuse.Load() {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if err := target.Verify(r.Header.Get("Settle-Signature"), body, secret, time.Minute, time.Now()); err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		got <- body
	}))
	defer receiver.Close()

	dir := t.TempDir()
	db := migratedSQLite(t, dir)
	endpoint := "http://" + receiver.Listener.Addr().String() + "/hooks"
	code, out, errOut := settleCmd(t, "callback", "set", "--tenant", "acme", "--url", endpoint, "--database-url", db, "--callbacks-allow-http", "--callbacks-allow-net", "127.0.0.1")
	if code != 0 {
		t.Fatalf("callback set: %d %s", code, errOut)
	}
	secret = []byte(strings.TrimSpace(out))
	receiver.Start()
	_, token, _ := settleCmd(t, "token", "create", "--name", "test client", "--new-tenant", "--tenant", "acme", "--database-url", db)
	base := start(t, dir, nil, "--database-url", db, "--demo-target", "--callbacks-allow-http", "--callbacks-allow-net", "127.0.0.1")

	req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/operations", strings.NewReader(
		`{"target":"demo","operation_type":"charge","intent_ref":"a-1","payload":{"amount":1,"currency":"EUR"}}`))
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(token))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST: %d", resp.StatusCode)
	}
	select {
	case body := <-got:
		var m struct {
			Operation struct{ State, IntentRef string } `json:"operation"`
		}
		if err := json.Unmarshal(body, &m); err != nil || m.Operation.State != "SUCCEEDED" {
			t.Fatalf("notification %s: %v", body, err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no signed notification within 15s: is the notifier started by settle serve?")
	}

	// show tells how the endpoint answered, once the notifier recorded it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, out, _ = settleCmd(t, "callback", "show", "--tenant", "acme", "--database-url", db)
		if strings.Contains(out, ", answered 200: delivered\n") && strings.Contains(out, "waiting to be delivered: 0\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("show does not tell the delivery: %q", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.HasPrefix(out, endpoint+"\nlast attempt: ") || !strings.Contains(out, "\nlast success: 20") {
		t.Fatalf("show: %q", out)
	}

	// test sends one signed message under the flags' policy: refused
	// without them (plain http to loopback), answered with them.
	if code, out, errOut := settleCmd(t, "callback", "test", "--tenant", "acme", "--database-url", db); code != 1 ||
		out != "" || !strings.Contains(errOut, "https://") {
		t.Fatalf("test under the production policy: exit %d, %q %q", code, out, errOut)
	}
	code, out, errOut = settleCmd(t, "callback", "test", "--tenant", "acme", "--database-url", db,
		"--callbacks-allow-http", "--callbacks-allow-net", "127.0.0.1")
	if code != 0 || !strings.HasPrefix(out, "the endpoint answered 200 in ") {
		t.Fatalf("test: exit %d, %q %q", code, out, errOut)
	}
	select {
	case body := <-got:
		if !strings.Contains(string(body), `"event":"callback.test"`) {
			t.Fatalf("test message %s", body)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the test message did not verify at the endpoint")
	}
	refuse.Store(true) // the endpoint now refuses every signature
	if code, _, errOut := settleCmd(t, "callback", "test", "--tenant", "acme", "--database-url", db,
		"--callbacks-allow-http", "--callbacks-allow-net", "127.0.0.1"); code != 1 || !strings.Contains(errOut, "answered 401") {
		t.Fatalf("test refused by the endpoint: exit %d, %q", code, errOut)
	}
}
