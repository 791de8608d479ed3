package auth_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"settle/auth"
	"settle/fileerr"
	"settle/ledger"
	"settle/ledger/storetest"
)

const goodConfig = `oidc:
  issuer: https://login.example.com/realms/acme
  client_id: settle-console
  client_secret_env: SETTLE_OIDC_SECRET
  redirect_url: https://settle.example.com/auth/callback
  roles_claim: groups
session:
  key_env: SETTLE_SESSION_KEY
bindings:
  - group: settle-support
    role: support
    tenants: all
  - group: payments-oncall
    role: owner
    tenants: [acme, globex]
    targets: [payments]
  - group: finance
    role: manager
    tenants: [acme]
`

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

var goodEnv = envOf(map[string]string{"SETTLE_OIDC_SECRET": "s3cret", "SETTLE_SESSION_KEY": strings.Repeat("k", 32)})

func TestParseConfig(t *testing.T) {
	t.Parallel()
	cfg, err := auth.ParseConfig("console.yaml", []byte(goodConfig), goodEnv)
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.OIDC
	if o.ClientSecret != "s3cret" || !slices.Equal(o.Scopes, []string{"openid", "profile", "email"}) ||
		o.RolesClaim != "groups" || o.NameClaim != "name" || o.ClientID != "settle-console" {
		t.Fatalf("oidc = %+v", o)
	}
	if cfg.Session.Absolute != 12*time.Hour || cfg.Session.Idle != time.Hour || len(cfg.Session.Key) != 32 || cfg.Session.InsecureCookie {
		t.Fatalf("session = %+v", cfg.Session)
	}
	want := []auth.BindingRule{
		{Group: "settle-support", Role: auth.Support},
		{Group: "payments-oncall", Role: auth.Owner, Tenants: []string{"acme", "globex"}, Targets: []string{"payments"}},
		{Group: "finance", Role: auth.Manager, Tenants: []string{"acme"}},
	}
	if len(cfg.Bindings) != len(want) {
		t.Fatalf("bindings = %+v", cfg.Bindings)
	}
	for i, b := range cfg.Bindings {
		w := want[i]
		if b.Group != w.Group || b.Role != w.Role || !slices.Equal(b.Tenants, w.Tenants) || (b.Tenants == nil) != (w.Tenants == nil) ||
			!slices.Equal(b.Targets, w.Targets) || (b.Targets == nil) != (w.Targets == nil) {
			t.Errorf("binding %d = %+v, want %+v", i, b, w)
		}
	}
	got := auth.BindingsFor(cfg.Bindings, []string{"finance", "unrelated", "settle-support"})
	if len(got) != 2 || got[0].Role != auth.Support || got[0].Tenants != nil || got[1].Role != auth.Manager {
		t.Fatalf("BindingsFor = %+v", got)
	}
	if auth.BindingsFor(cfg.Bindings, []string{"marketing"}) != nil {
		t.Fatal("an unbound group got a role")
	}
}

// Each mistake is reported as file:line: field: message.
func TestParseConfig_Errors(t *testing.T) {
	t.Parallel()
	replace := func(old, new string) string {
		if !strings.Contains(goodConfig, old) {
			t.Fatalf("%q not in the config", old)
		}
		return strings.Replace(goodConfig, old, new, 1)
	}
	for name, c := range map[string]struct{ file, want string }{
		"UnknownRole":      {replace("role: manager", "role: superuser"), "console.yaml:18: bindings[2].role: must be support, owner, manager or admin"},
		"TargetsNonOwner":  {replace("tenants: [acme]\n", "tenants: [acme]\n    targets: [payments]\n"), "console.yaml:20: bindings[2].targets: only an owner binding names targets"},
		"EmptyTenants":     {replace("tenants: [acme]\n", "tenants: []\n"), "console.yaml:19: bindings[2].tenants: must be \"all\""},
		"NoTenants":        {replace("    tenants: [acme]\n", ""), "bindings[2].tenants: must be \"all\""},
		"BadTenant":        {replace("tenants: [acme]", "tenants: [ACME!]"), "console.yaml:19: bindings[2].tenants: tenant \"ACME!\""},
		"HTTPIssuer":       {replace("https://login.example.com", "http://login.example.com"), "console.yaml:2: oidc.issuer: must use https"},
		"BadRedirect":      {replace("example.com/auth/callback", "example.com/callback"), "console.yaml:5: oidc.redirect_url: must end in /auth/callback"},
		"UnknownField":     {replace("roles_claim: groups", "role_claim: groups"), "console.yaml:6:"},
		"NoOpenID":         {replace("roles_claim: groups", "scopes: [profile]"), "console.yaml:6: oidc.scopes: must include openid"},
		"IdleTooLong":      {replace("key_env: SETTLE_SESSION_KEY", "key_env: SETTLE_SESSION_KEY\n  idle: 13h"), "console.yaml:9: session.idle: cannot be longer than session.absolute"},
		"BadDuration":      {replace("key_env: SETTLE_SESSION_KEY", "key_env: SETTLE_SESSION_KEY\n  absolute: forever"), "console.yaml:9: session.absolute: must be a duration"},
		"SecretEnvMissing": {replace("SETTLE_OIDC_SECRET", "NOT_SET"), "console.yaml:4: oidc.client_secret_env: environment variable NOT_SET is not set"},
		"NoBindings":       {goodConfig[:strings.Index(goodConfig, "bindings:")], "bindings: at least one binding"},
		"NoIssuer":         {replace("  issuer: https://login.example.com/realms/acme\n", ""), "oidc.issuer: is required"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := auth.ParseConfig("console.yaml", []byte(c.file), goodEnv)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error = %v\nwant it to contain %q", err, c.want)
			}
			var ce *fileerr.Error
			if !errors.As(err, &ce) {
				t.Fatalf("%T is not a *fileerr.Error", err)
			}
			if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "kkkkkkkk") {
				t.Fatalf("the error quotes a secret: %v", err)
			}
		})
	}
	t.Run("ShortKey", func(t *testing.T) {
		_, err := auth.ParseConfig("console.yaml", []byte(goodConfig),
			envOf(map[string]string{"SETTLE_OIDC_SECRET": "s3cret", "SETTLE_SESSION_KEY": "short"}))
		if err == nil || !strings.Contains(err.Error(), "console.yaml:8: session.key_env: environment variable SETTLE_SESSION_KEY must hold at least 32 bytes") {
			t.Fatalf("error = %v", err)
		}
	})
	t.Run("LoopbackHTTPIssuer", func(t *testing.T) {
		_, err := auth.ParseConfig("console.yaml", []byte(replace("https://login.example.com", "http://127.0.0.1:5556")), goodEnv)
		if err != nil {
			t.Fatal(err)
		}
	})
}

// insecure_cookie needs a loopback listen address.
func TestNewConsole_InsecureCookie(t *testing.T) {
	t.Parallel()
	ss := storetest.SQLite().New(t, nil).(ledger.SessionStore)
	cfg, err := auth.ParseConfig("console.yaml", []byte(strings.Replace(goodConfig,
		"key_env: SETTLE_SESSION_KEY", "key_env: SETTLE_SESSION_KEY\n  insecure_cookie: true", 1)), goodEnv)
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{"", "0.0.0.0:8080"} {
		if _, err := auth.NewConsole(context.Background(), cfg, ss, auth.WithListenAddr(addr)); err == nil ||
			!strings.Contains(err.Error(), "loopback") {
			t.Errorf("listen %q: error = %v", addr, err)
		}
	}
}
