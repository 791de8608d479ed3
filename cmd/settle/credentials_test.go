package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// providerContracts writes a contracts file with two targets on one
// Stripe-like provider at base: "stripe" sends form bodies with a bearer
// credential from SETTLE_TEST_STRIPE_KEY; "connect" also needs the
// tenant's parameter "account" in a Stripe-Account header.
func providerContracts(t *testing.T, dir, base string) string {
	t.Helper()
	target := func(name, path, extra string) string {
		return `  - name: ` + name + `
    owner: {team: Payments team, escalation_contact: pay@example.com}
    documentation: {url: "https://docs.stripe.com/api", checked: 2026-11-01}
    base_url: ` + base + `
    timeout: 5s
    deadline: 1h
    create: {method: POST, path: ` + path + `}
    reference_field: metadata.settle_ref
    tenant_field: metadata.settle_tenant
    auth: {header: Authorization, scheme: Bearer, secret_env: SETTLE_TEST_STRIPE_KEY}
    encoding: form
    outcomes: [{status: 200, outcome: succeeded}]
    response:
      id_field: id
      match:
        - metadata.settle_ref
        - metadata.settle_tenant
        - {field: amount, rule: numeric}
        - {field: currency, rule: case_insensitive}
      status_field: status
      statuses: [{value: succeeded, outcome: succeeded}]
` + extra
	}
	yaml := "targets:\n" + target("stripe", "/v1/charges", "") +
		target("connect", "/v1/connect/charges", "    headers: {Stripe-Account: \"{tenant.account}\"}\n")
	path := filepath.Join(dir, "contracts.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// stripeLike answers a form-encoded charge as Stripe's API does: 200, the
// amount as a number, the currency in lower case.
type stripeLike struct {
	mu   sync.Mutex
	seen []http.Header
	body [][]byte
	path []string
}

func (s *stripeLike) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(r.Body)
	s.mu.Lock()
	s.seen = append(s.seen, r.Header.Clone())
	s.body = append(s.body, buf.Bytes())
	s.path = append(s.path, r.URL.Path)
	s.mu.Unlock()
	r.Body = http.NoBody
	form, err := parseForm(buf.String())
	if err != nil || r.Header.Get("Authorization") != "Bearer sk_test_e2e_51Hx" {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "ch_1", "status": "succeeded", "amount": json.Number(form["amount"]), "currency": strings.ToLower(form["currency"]),
		"metadata": map[string]string{"settle_ref": form["metadata[settle_ref]"], "settle_tenant": form["metadata[settle_tenant]"]},
	})
}

func parseForm(s string) (map[string]string, error) {
	req, _ := http.NewRequest(http.MethodPost, "/", strings.NewReader(s))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if err := req.ParseForm(); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for k, v := range req.PostForm {
		out[k] = v[0]
	}
	return out, nil
}

// settle serve refuses to start, in one line naming the variable, when a
// contract's credential is not in the environment.
func TestServe_RefusesMissingCredential(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	contracts := providerContracts(t, dir, "http://127.0.0.1:1")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "serve", "--addr", "127.0.0.1:0", "--database-url", "sqlite:"+filepath.Join(dir, "settle.db"),
		"--contracts", contracts)
	cmd.Env = append(os.Environ(), "SETTLE_TEST_STRIPE_KEY=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 {
		t.Fatalf("err = %v, want exit status 1; stderr %q", err, stderr.String())
	}
	const want = "settle serve: target connect: auth secret environment variable SETTLE_TEST_STRIPE_KEY is not set\n"
	if stderr.String() != want || stdout.Len() != 0 {
		t.Fatalf("stderr %q, stdout %q; want %q", stderr.String(), stdout.String(), want)
	}
}

// End to end against a Stripe-like provider: the credential from the
// environment and a form body reach it, its 200 with a lower-cased
// currency confirms the operation; an operation to a target needing a
// tenant parameter the tenant lacks is escalated and never sent. The
// credential appears nowhere in settle's log.
func TestServe_ProviderCredentialsAndParameters(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	provider := &stripeLike{}
	srv := httptest.NewServer(provider)
	defer srv.Close()
	db := "sqlite:" + filepath.Join(dir, "settle.db")
	base, logs := startLogged(t, dir, []string{"SETTLE_TEST_STRIPE_KEY=sk_test_e2e_51Hx"},
		"--database-url", db, "--contracts", providerContracts(t, dir, srv.URL), "--lease", "15s")
	token := newToken(t, db)

	status, op := apiCall(t, http.MethodPost, base+"/api/v1/operations", token,
		`{"target":"stripe","operation_type":"charge","intent_ref":"order-1","payload":{"amount":1000,"currency":"EUR"}}`)
	if status != http.StatusCreated {
		t.Fatalf("POST: %d", status)
	}
	if got := waitState(t, base, token, op.ID, "SUCCEEDED", 20*time.Second); got.RemoteRef != "ch_1" {
		t.Fatalf("confirmed operation: %+v", got)
	}
	status, held := apiCall(t, http.MethodPost, base+"/api/v1/operations", token,
		`{"target":"connect","operation_type":"charge","intent_ref":"order-2","payload":{"amount":1000,"currency":"EUR"}}`)
	if status != http.StatusCreated {
		t.Fatalf("POST: %d", status)
	}
	waitState(t, base, token, held.ID, "ESCALATED", 20*time.Second)
	out, err := exec.Command(binary, "operation", "show", "--tenant", "acme", held.ID, "--database-url", db).CombinedOutput()
	if err != nil || !strings.Contains(string(out), `nothing was sent: tenant acme has no parameter \"account\", which target connect needs`) &&
		!strings.Contains(string(out), `nothing was sent: tenant acme has no parameter "account", which target connect needs`) {
		t.Fatalf("operation show: %v\n%s", err, out)
	}

	provider.mu.Lock()
	defer provider.mu.Unlock()
	if len(provider.seen) != 1 || provider.path[0] != "/v1/charges" {
		t.Fatalf("the provider received %d requests (%q); want the one charge", len(provider.seen), provider.path)
	}
	h := provider.seen[0]
	if h.Get("Content-Type") != "application/x-www-form-urlencoded" || h.Get("Idempotency-Key") != "" {
		t.Errorf("headers %v", h)
	}
	form, _ := parseForm(string(provider.body[0]))
	if form["amount"] != "1000" || form["currency"] != "EUR" || form["metadata[settle_ref]"] != op.RemoteKey || form["metadata[settle_tenant]"] != "acme" {
		t.Errorf("form %q", form)
	}
	if strings.Contains(logs.String(), "sk_test_e2e_51Hx") {
		t.Errorf("the credential is in the log:\n%s", logs.String())
	}
}
