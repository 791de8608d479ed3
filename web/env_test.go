package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/web"
)

// store is what both adapters implement.
type store interface {
	web.Store
	ledger.SessionStore
}

// adminCtx carries the operator who issues and revokes the tests' tokens.
var adminCtx = ledger.NewContextWithActor(context.Background(),
	ledger.Actor{Subject: "cli:test", Name: "test", Role: "admin"})

type targets map[string]web.Target

func (t targets) Target(name string) (web.Target, bool) { x, ok := t[name]; return x, ok }

var testTargets = targets{
	"payments": {RetryWindow: 24 * time.Hour, Deadline: time.Hour, Owner: "Payments team"},
}

// env is one settle HTTP server on loopback over a real store. Its client
// checks every API exchange against the OpenAPI document the server serves.
type env struct {
	t      *testing.T
	base   string
	store  store
	token  string // bearer token of tenant "acme"
	api    *apiDoc
	client *http.Client
}

// stores runs fn once per store kind, the kinds in parallel.
func stores(t *testing.T, fn func(t *testing.T, open func(t *testing.T) store)) {
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		t.Parallel()
		fn(t, func(t *testing.T) store { return h.New(t, time.Now).(store) })
	})
}

// serve starts the server over s; cfg.Store may decorate s, and cfg.Targets
// defaults to testTargets.
func serve(t *testing.T, s store, cfg web.Config) *env {
	t.Helper()
	if cfg.Store == nil {
		cfg.Store = s
	}
	if cfg.Targets == nil {
		cfg.Targets = testTargets
	}
	srv := httptest.NewServer(web.New(cfg))
	t.Cleanup(srv.Close)
	e := &env{t: t, base: srv.URL, store: s, api: loadAPIDoc(t, srv.URL)}
	e.client = &http.Client{Transport: checkingTransport{t: t, doc: e.api, next: http.DefaultTransport}}
	e.token = e.newToken("acme")
	return e
}

func (e *env) newToken(tenant string) string {
	e.t.Helper()
	return e.newTokenRated(tenant, ledger.TokenRate{})
}

// newTokenRated is newToken with the token's own rate.
func (e *env) newTokenRated(tenant string, r ledger.TokenRate) string {
	e.t.Helper()
	knownTenants(e.t, e.store, tenant)
	secret, tok, err := ledger.NewToken(tenant, "test client", time.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	tok.Rate = r
	if err := e.store.CreateToken(adminCtx, tok); err != nil {
		e.t.Fatal(err)
	}
	return secret
}

// response is a decoded reply.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("response is not a JSON object: %s", r.body)
	}
	return m
}

// do sends a request with the env's token (override with headers).
func (e *env) do(method, path, contentType string, body []byte, header ...string) response {
	e.t.Helper()
	req, err := http.NewRequest(method, e.base+path, bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

func (e *env) post(body string, header ...string) response {
	e.t.Helper()
	return e.do(http.MethodPost, "/api/v1/operations", "application/json", []byte(body), header...)
}

// wantError checks an error reply's status and code.
func wantError(t *testing.T, r response, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	m := r.json(t)
	if m["error"] != code || m["message"] == "" {
		t.Fatalf("error body %s, want error %q with a message", r.body, code)
	}
}

// knownTenants creates the tenants a test uses, as an administrator does
// before their first token (an already known one is fine).
func knownTenants(t *testing.T, s ledger.TenantStore, tenants ...string) {
	t.Helper()
	for _, tenant := range tenants {
		if err := s.CreateTenant(adminCtx, tenant, time.Now()); err != nil && ledger.ErrorCode(err) != ledger.EConflict {
			t.Fatalf("create tenant %s: %v", tenant, err)
		}
	}
}
