package auth_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"settle/auth"
	"settle/auth/oidctest"
	"settle/ledger/storetest"
)

// syncBuffer is a log sink the console's goroutines and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// body GETs u with c and returns the status and the page.
func (e *env) body(c *http.Client, u string) (int, string) {
	e.t.Helper()
	resp, err := c.Get(e.srv.URL + u)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// With the provider down, the console still starts; /login answers 503
// "sign-in is unavailable"; the outage is logged once however often
// discovery is retried; once the provider comes up, Run finds it, the
// recovery is logged once, and sign-in works without a restart.
func TestDiscovery_ProviderDownThenUp(t *testing.T) {
	p := oidctest.Down(t, ada)
	logs := &syncBuffer{}
	e := newEnvWith(t, storetest.SQLite(), p, auth.WithLogger(slog.New(slog.NewTextHandler(logs, nil))),
		auth.WithDiscoveryRetry(20*time.Millisecond, 100*time.Millisecond))

	if err := e.console.Unavailable(); err == nil || !strings.Contains(err.Error(), "sign-in is unavailable") {
		t.Fatalf("Unavailable() = %v", err)
	}
	for _, path := range []string{auth.LoginPath, auth.CallbackPath + "?state=x&code=y"} {
		status, page := e.body(e.client, path)
		if status != http.StatusServiceUnavailable || !strings.Contains(page, "Sign-in is unavailable") ||
			!strings.Contains(page, "cannot reach your organisation&#39;s identity provider") {
			t.Fatalf("GET %s: status %d, page %q", path, status, page)
		}
	}
	for range 3 {
		if err := e.console.Discover(context.Background()); err == nil {
			t.Fatal("Discover succeeded with the provider down")
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- e.console.Run(ctx) }()
	time.Sleep(150 * time.Millisecond) // a few failed retries
	p.Up(t)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not find the provider once it was up")
	}
	if err := e.console.Unavailable(); err != nil {
		t.Fatalf("Unavailable() after recovery = %v", err)
	}
	e.follow(e.signIn(e.client, "ada-sub", flow{ret: "/"}), http.StatusSeeOther)
	if w := e.who(e.client); w == nil || w.Subject != "oidc:ada-sub" {
		t.Fatalf("whoami = %+v", w)
	}
	out := logs.String()
	if n := strings.Count(out, "sign-in is unavailable"); n != 1 {
		t.Errorf("outage logged %d times, want once:\n%s", n, out)
	}
	if n := strings.Count(out, "sign-in is available again"); n != 1 {
		t.Errorf("recovery logged %d times, want once:\n%s", n, out)
	}
}

// A provider that goes away between the start of a sign-in and its end:
// the page says it could not be reached, not that its answer was wrong.
func TestSignIn_ProviderUnreachableAtExchange(t *testing.T) {
	e := newEnv(t, storetest.SQLite())
	e.provider.SignInAs(t, "ada-sub")
	authURL := e.follow(e.get(e.client, e.srv.URL+auth.LoginPath), http.StatusFound)
	back := e.follow(e.get(e.client, authURL), http.StatusFound)
	e.provider.Stop()
	resp, err := e.client.Get(back)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(page), "could not be reached") ||
		strings.Contains(string(page), "could not be verified") {
		t.Fatalf("status %d, page %q", resp.StatusCode, page)
	}
}
