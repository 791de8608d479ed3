package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"settle/auth/oidctest"
)

// consoleConfig writes a console config for provider p, for a settle
// serving on addr with plain http (insecure_cookie), binding the group
// "ops" to admin; it returns the path and the environment it needs.
func consoleConfig(t *testing.T, dir, addr string, p *oidctest.Provider) (string, []string) {
	t.Helper()
	path := filepath.Join(dir, "console.yaml")
	yaml := fmt.Sprintf(`oidc:
  issuer: %s
  client_id: %s
  client_secret_env: TEST_OIDC_SECRET
  redirect_url: http://%s/auth/callback
session:
  key_env: TEST_SESSION_KEY
  insecure_cookie: true
bindings:
  - group: ops
    role: admin
    tenants: all
`, p.Issuer, p.ClientID, addr)
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, []string{"TEST_OIDC_SECRET=" + p.ClientSecret, "TEST_SESSION_KEY=" + strings.Repeat("s", 32)}
}

func getPage(t *testing.T, c *http.Client, u string) (int, string, *http.Response) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp
}

// Invariant 11: with the OpenID provider down, settle serve starts; the
// API records an operation and the executor sends it; the console answers
// 503 "sign-in is unavailable"; /readyz is ready with the console
// degraded. When the provider comes up, sign-in works without a restart;
// the outage and the recovery are each logged once.
func TestServe_SignInProviderDown(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := oidctest.Down(t, oidctest.User{Subject: "CiQxops", Name: "Olga Ops", Email: "olga@example.com", Groups: []string{"ops"}})
	addr := freeAddr(t)
	cfgPath, env := consoleConfig(t, dir, addr, p)
	simBase, contracts := simWithContract(t, dir, "--class", "A")
	db := "sqlite:" + filepath.Join(dir, "settle.db")
	srv := startServer(t, dir, env, "--addr", addr, "--database-url", db, "--contracts", contracts, "--console-config", cfgPath)
	base := srv.URL

	token := newToken(t, db)
	status, op := apiCall(t, http.MethodPost, base+"/api/v1/operations", token, chargeBody)
	if status != http.StatusCreated {
		t.Fatalf("POST: %d", status)
	}
	waitState(t, base, token, op.ID, "SUCCEEDED", 20*time.Second)
	if n := simObjects(t, simBase, op.RemoteKey); n != 1 {
		t.Fatalf("%d remote objects", n)
	}

	if code, body, _ := getPage(t, http.DefaultClient, base+"/readyz"); code != http.StatusOK || !strings.Contains(body, "console degraded") {
		t.Fatalf("/readyz: %d %q", code, body)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if code, body, _ := getPage(t, browser, base+"/operations"); code != http.StatusFound && code != http.StatusSeeOther {
		t.Fatalf("/operations signed out: %d %q", code, body)
	}
	if code, body, _ := getPage(t, browser, base+"/login"); code != http.StatusServiceUnavailable ||
		!strings.Contains(body, "Sign-in is unavailable") {
		t.Fatalf("/login with the provider down: %d %q", code, body)
	}

	p.Up(t)
	var loc string
	waitFor(t, 20*time.Second, "sign-in available", func() (bool, string) {
		code, _, resp := getPage(t, browser, base+"/login")
		loc = resp.Header.Get("Location")
		return code == http.StatusFound, fmt.Sprint("status ", code)
	})
	if code, body, _ := getPage(t, http.DefaultClient, base+"/readyz"); code != http.StatusOK || body != "ready\n" {
		t.Fatalf("/readyz after recovery: %d %q", code, body)
	}
	p.SignInAs(t, "CiQxops")
	_, _, resp := getPage(t, browser, loc)
	back := resp.Header.Get("Location")
	if code, body, resp := getPage(t, browser, back); code != http.StatusSeeOther {
		t.Fatalf("callback: %d %q %v", code, body, resp.Header)
	}
	if code, body, _ := getPage(t, browser, base+"/operations"); code != http.StatusOK {
		t.Fatalf("/operations signed in: %d %q", code, body)
	}

	log := srv.Log.String()
	if n := strings.Count(log, "sign-in is unavailable"); n != 1 {
		t.Errorf("outage logged %d times, want once:\n%s", n, log)
	}
	if n := strings.Count(log, "sign-in is available again"); n != 1 {
		t.Errorf("recovery logged %d times, want once:\n%s", n, log)
	}
}

// settle config check tries the provider's discovery: with the provider
// down it says so and exits 1; once it is up, it says it answered.
func TestConfigCheck_TriesDiscovery(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := oidctest.Down(t)
	cfgPath, env := consoleConfig(t, dir, "127.0.0.1:8080", p)
	check := func() (string, error) {
		cmd := exec.Command(binary, "config", "check", "--addr", "127.0.0.1:8080", "--console-config", cfgPath)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := check()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(out, "the OpenID provider could not be reached") ||
		strings.Contains(out, "settle serve would start with this configuration") {
		t.Fatalf("provider down: %v\n%s", err, out)
	}
	p.Up(t)
	out, err = check()
	if err != nil || !strings.Contains(out, "the OpenID provider at "+p.Issuer+" answered its discovery") {
		t.Fatalf("provider up: %v\n%s", err, out)
	}
}
