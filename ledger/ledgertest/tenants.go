package ledgertest

import (
	"context"
	"strings"
	"testing"
	"time"

	"settle/ledger"
)

// knownTenant creates tenant in the fixture's store, as an administrator
// would before making its first token.
func (f *fixture) knownTenant(tenant string) {
	f.t.Helper()
	ts, ok := f.store.(ledger.TenantStore)
	if !ok {
		f.t.Fatal("store does not implement ledger.TenantStore")
	}
	if err := ts.CreateTenant(f.ctx, tenant, f.clk.Now()); err != nil && ledger.ErrorCode(err) != ledger.EConflict {
		f.t.Fatalf("create tenant %s: %v", tenant, err)
	}
}

// testTenants: a tenant is created once, on purpose and recorded; a token
// for a tenant nobody created (a typo) is refused with a message that says
// what to do, and nothing is written.
func testTenants(t *testing.T, h Harness) {
	f := setup(t, h)
	ts := f.store.(ledger.TenantStore)
	tok := f.store.(ledger.TokenStore)
	_, typo, err := ledger.NewToken("acmee", "billing", f.clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	err = tok.CreateToken(f.ctx, typo)
	if ledger.ErrorCode(err) != ledger.EInvalid || !strings.Contains(ledger.ErrorMessage(err), "settle knows no tenant “acmee”") {
		t.Fatalf("token for an unknown tenant: %v", err)
	}
	if list, _ := tok.ListTokens(f.ctx, "acmee"); len(list) != 0 {
		t.Fatalf("a refused token was stored: %+v", list)
	}
	if err := ts.CreateTenant(context.Background(), "acme", f.clk.Now()); ledger.ErrorCode(err) != ledger.EInvalid {
		t.Fatalf("create without an actor: %v", err)
	}
	if err := ts.CreateTenant(f.ctx, "Bad Name", f.clk.Now()); ledger.ErrorCode(err) != ledger.EInvalid {
		t.Fatalf("bad name: %v", err)
	}
	for _, name := range []string{"globex", "acme"} {
		if err := ts.CreateTenant(f.as("oidc:ada", "Ada", "admin"), name, f.clk.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if err := ts.CreateTenant(f.ctx, "acme", f.clk.Now()); ledger.ErrorCode(err) != ledger.EConflict {
		t.Fatalf("create twice: %v", err)
	}
	list, err := ts.ListTenants(f.ctx)
	if err != nil || len(list) != 2 || list[0].ID != "acme" || list[1].ID != "globex" ||
		!list[0].CreatedAt.Equal(f.clk.Now().UTC().Truncate(time.Microsecond)) {
		t.Fatalf("tenants: %+v, %v", list, err)
	}
	for name, want := range map[string]bool{"acme": true, "acmee": false} {
		if got, err := ts.TenantKnown(f.ctx, name); err != nil || got != want {
			t.Fatalf("known %s: %v, %v", name, got, err)
		}
	}
	acts, err := f.store.(ledger.ActionStore).Actions(f.ctx, ledger.ActionFilter{Tenant: "acme"})
	if err != nil || len(acts) != 1 || acts[0].Kind != ledger.ActionTenantCreate || acts[0].Object != "acme" ||
		acts[0].Subject != "oidc:ada" {
		t.Fatalf("actions: %+v, %v", acts, err)
	}
	// Known now, the same token is accepted.
	_, good, _ := ledger.NewToken("acme", "billing", f.clk.Now())
	if err := tok.CreateToken(f.ctx, good); err != nil {
		t.Fatal(err)
	}
}

// testTokenRates: a token keeps its own rate (none: zero, the replica's
// default), authentication reads it, and a rate out of range is refused
// with nothing written.
func testTokenRates(t *testing.T, h Harness) {
	f := setup(t, h)
	ts := f.store.(ledger.TokenStore)
	f.knownTenant("acme")
	for _, bad := range []ledger.TokenRate{{PerSecond: -1}, {Burst: -1}, {PerSecond: ledger.MaxTokenRate + 1}} {
		_, tok, _ := ledger.NewToken("acme", "bad rate", f.clk.Now())
		tok.Rate = bad
		if err := ts.CreateToken(f.ctx, tok); ledger.ErrorCode(err) != ledger.EInvalid {
			t.Fatalf("rate %+v: %v", bad, err)
		}
	}
	plainSecret, plain, _ := ledger.NewToken("acme", "plain", f.clk.Now())
	ratedSecret, rated, _ := ledger.NewToken("acme", "rated", f.clk.Now().Add(time.Second))
	rated.Rate = ledger.TokenRate{PerSecond: 2000, Burst: 5000}
	for _, tok := range []ledger.Token{plain, rated} {
		if err := ts.CreateToken(f.ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	list, err := ts.ListTokens(f.ctx, "acme")
	if err != nil || len(list) != 2 || list[0].Rate != rated.Rate || list[1].Rate != (ledger.TokenRate{}) {
		t.Fatalf("tokens %+v, %v (refused ones must not be stored)", list, err)
	}
	for secret, want := range map[string]ledger.TokenRate{plainSecret: {}, ratedSecret: rated.Rate} {
		got, err := ts.TokenByHash(f.ctx, ledger.HashToken(secret))
		if err != nil || got.Rate != want {
			t.Fatalf("by hash: %+v, %v; want rate %+v", got, err, want)
		}
	}
}

// testTokenNames: a token keeps its name and creation time; it has no
// last use until it authenticates, and its last use is written at most
// once per ledger.TouchEvery however many requests it makes.
func testTokenNames(t *testing.T, h Harness) {
	f := setup(t, h)
	ts := f.store.(ledger.TokenStore)
	f.knownTenant("acme")
	f.knownTenant("globex")
	if _, _, err := ledger.NewToken("acme", " ", f.clk.Now()); ledger.ErrorCode(err) != ledger.EInvalid {
		t.Fatalf("blank name: %v", err)
	}
	nameless := ledger.Token{ID: "tok_0123456789ab", Tenant: "acme", Hash: make([]byte, 32), CreatedAt: f.clk.Now()}
	if err := ts.CreateToken(f.ctx, nameless); ledger.ErrorCode(err) != ledger.EInvalid {
		t.Fatalf("a token without a name: %v", err)
	}
	created := f.clk.Now().UTC().Truncate(time.Microsecond)
	secret, tok, err := ledger.NewToken("acme", "billing service, production", f.clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.CreateToken(f.ctx, tok); err != nil {
		t.Fatal(err)
	}
	list, err := ts.ListTokens(f.ctx, "acme")
	if err != nil || len(list) != 1 || list[0].Name != "billing service, production" ||
		!list[0].CreatedAt.Equal(created) || list[0].LastUsedAt != nil {
		t.Fatalf("a new token: %+v, %v", list, err)
	}

	lastUsed := func() *time.Time {
		t.Helper()
		list, err := ts.ListTokens(f.ctx, "acme")
		if err != nil || len(list) != 1 {
			t.Fatalf("list: %+v, %v", list, err)
		}
		return list[0].LastUsedAt
	}
	first := f.clk.Now().UTC().Truncate(time.Microsecond)
	if _, err := ledger.Authenticate(f.ctx, ts, secret, first); err != nil {
		t.Fatal(err)
	}
	if got := lastUsed(); got == nil || !got.Equal(first) {
		t.Fatalf("last used after the first request: %v, want %v", got, first)
	}
	// Requests within the minute write nothing: the store refuses the
	// write itself, so racing replicas do not either.
	for _, d := range []time.Duration{time.Second, 30 * time.Second, ledger.TouchEvery - time.Microsecond} {
		if wrote, err := ts.TouchToken(f.ctx, "acme", tok.ID, first.Add(d)); err != nil || wrote {
			t.Fatalf("touch %v after: wrote %v, %v", d, wrote, err)
		}
	}
	if got := lastUsed(); !got.Equal(first) {
		t.Fatalf("last used moved within the minute: %v", got)
	}
	// Another tenant's token is not touched.
	if wrote, err := ts.TouchToken(f.ctx, "globex", tok.ID, first.Add(time.Hour)); err != nil || wrote {
		t.Fatalf("touch through another tenant: %v, %v", wrote, err)
	}
	later := first.Add(ledger.TouchEvery)
	if wrote, err := ts.TouchToken(f.ctx, "acme", tok.ID, later); err != nil || !wrote {
		t.Fatalf("touch a minute later: %v, %v", wrote, err)
	}
	if got := lastUsed(); !got.Equal(later) {
		t.Fatalf("last used a minute later: %v, want %v", got, later)
	}
	// The token that authenticates carries its last use.
	got, err := ledger.Authenticate(f.ctx, ts, secret, later.Add(time.Second))
	if err != nil || got.LastUsedAt == nil || !got.LastUsedAt.Equal(later) || got.Name != tok.Name {
		t.Fatalf("authenticated: %+v, %v", got, err)
	}
}
