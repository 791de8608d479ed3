package ledgertest

import (
	"context"
	"encoding/base64"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"settle/ledger"
)

func testList(t *testing.T, h Harness) {
	t.Run("Pages", func(t *testing.T) {
		f := setup(t, h)
		var ops []ledger.Operation
		for i := 0; i < 7; i++ {
			ops = append(ops, f.create("acme"))
			if i%2 == 0 {
				f.clk.Advance(time.Millisecond) // some share a created_at
			}
		}
		sort.Slice(ops, func(i, j int) bool {
			if !ops[i].CreatedAt.Equal(ops[j].CreatedAt) {
				return ops[i].CreatedAt.After(ops[j].CreatedAt)
			}
			return ops[i].ID > ops[j].ID
		})
		f.create("globex")
		var got []string
		cursor := ""
		for pages := 0; ; pages++ {
			page, err := f.store.List(f.ctx, ledger.ListFilter{Tenant: "acme", Limit: 3, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			for _, op := range page.Operations {
				got = append(got, op.ID)
			}
			if page.Next == "" {
				if pages != 2 {
					t.Fatalf("%d pages, want 3", pages+1)
				}
				break
			}
			cursor = page.Next
		}
		if len(got) != len(ops) {
			t.Fatalf("listed %d, want %d", len(got), len(ops))
		}
		for i, op := range ops {
			if got[i] != op.ID {
				t.Fatalf("position %d: %s, want %s (newest first, then id)", i, got[i], op.ID)
			}
		}
	})

	t.Run("Filters", func(t *testing.T) {
		f := setup(t, h)
		a := f.create("acme")
		b := f.claim("acme")
		page, err := f.store.List(f.ctx, ledger.ListFilter{Tenant: "acme", IntentRef: a.IntentRef})
		if err != nil || len(page.Operations) != 1 || page.Operations[0].ID != a.ID {
			t.Fatalf("by intent: %+v, %v", page, err)
		}
		page, _ = f.store.List(f.ctx, ledger.ListFilter{Tenant: "acme", State: ledger.InFlight})
		if len(page.Operations) != 1 || page.Operations[0].ID != b.ID {
			t.Fatalf("by state: %d", len(page.Operations))
		}
		// A cursor naming its operation in upper case is the same cursor.
		upper := cursor(strconv.FormatInt(b.CreatedAt.UnixMicro(), 10) + "/" + strings.ToUpper(b.ID))
		lower := cursor(strconv.FormatInt(b.CreatedAt.UnixMicro(), 10) + "/" + b.ID)
		pu, errU := f.store.List(f.ctx, ledger.ListFilter{Tenant: "acme", Cursor: upper})
		pl, errL := f.store.List(f.ctx, ledger.ListFilter{Tenant: "acme", Cursor: lower})
		if errU != nil || errL != nil || len(pu.Operations) != len(pl.Operations) {
			t.Fatalf("upper-case cursor: %d operations (%v), lower-case: %d (%v)", len(pu.Operations), errU, len(pl.Operations), errL)
		}
		page, _ = f.store.List(f.ctx, ledger.ListFilter{Tenant: "globex"})
		if len(page.Operations) != 0 {
			t.Fatal("listed another tenant's operations")
		}
		for name, bad := range map[string]ledger.ListFilter{
			"Limit":  {Tenant: "acme", Limit: 501},
			"State":  {Tenant: "acme", State: "DONE"},
			"Cursor": {Tenant: "acme", Cursor: "not-a-cursor"},
			// Both stores refuse alike what only one could answer.
			"IntentNUL":          {Tenant: "acme", IntentRef: "a\x00"},
			"IntentInvalidUTF8":  {Tenant: "acme", IntentRef: "a\xff"},
			"CursorBracedId":     {Tenant: "acme", Cursor: cursor("1/{" + a.ID + "}")},
			"CursorHugeTime":     {Tenant: "acme", Cursor: cursor("9223372036854775807/" + a.ID)},
			"CursorNegativeTime": {Tenant: "acme", Cursor: cursor("-1/" + a.ID)},
		} {
			if _, err := f.store.List(f.ctx, bad); ledger.ErrorCode(err) != ledger.EInvalid {
				t.Fatalf("%s: %v", name, err)
			}
		}
	})
}

func testTokens(t *testing.T, h Harness, wrap func(ledger.TokenStore, func() time.Time) ledger.TokenStore) {
	f := setup(t, h)
	ts, ok := f.store.(ledger.TokenStore)
	if !ok {
		t.Fatal("store does not implement ledger.TokenStore")
	}
	if wrap != nil {
		ts = wrap(ts, f.clk.Now)
	}
	secret, tok, err := ledger.NewToken("acme", "billing", f.clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	f.knownTenant("acme")
	f.knownTenant("globex")
	if err := ts.CreateToken(context.Background(), tok); ledger.ErrorCode(err) != ledger.EInvalid {
		t.Fatalf("create without an actor: %v, want %s", err, ledger.EInvalid)
	}
	if list, _ := ts.ListTokens(f.ctx, "acme"); len(list) != 0 {
		t.Fatalf("a refused creation stored the token: %+v", list)
	}
	admin := f.as("oidc:ada", "Ada", "admin")
	if err := ts.CreateToken(admin, tok); err != nil {
		t.Fatal(err)
	}
	_, globexTok, _ := ledger.NewToken("globex", "billing", f.clk.Now())
	if err := ts.CreateToken(f.ctx, globexTok); err != nil {
		t.Fatal(err)
	}
	other, _, _ := ledger.NewToken("acme", "never stored", f.clk.Now()) // well-formed, never stored
	got, err := ledger.Authenticate(f.ctx, ts, secret, f.clk.Now())
	if err != nil || got.Tenant != "acme" || got.ID != tok.ID {
		t.Fatalf("authenticate: %+v, %v", got, err)
	}
	for name, bad := range map[string]string{
		"Empty": "", "Malformed": "Bearer x", "Unknown": other,
	} {
		if _, err := ledger.Authenticate(f.ctx, ts, bad, f.clk.Now()); ledger.ErrorCode(err) != ledger.EUnauthorized {
			t.Fatalf("%s: %v", name, err)
		}
	}
	// Another tenant's token is not found, and stays valid.
	if err := ts.RevokeToken(admin, "globex", tok.ID, f.clk.Now()); ledger.ErrorCode(err) != ledger.ENotFound {
		t.Fatalf("revoke another tenant's token: %v", err)
	}
	if err := ts.RevokeToken(context.Background(), "acme", tok.ID, f.clk.Now()); ledger.ErrorCode(err) != ledger.EInvalid {
		t.Fatalf("revoke without an actor: %v", err)
	}
	if _, err := ledger.Authenticate(f.ctx, ts, secret, f.clk.Now()); err != nil {
		t.Fatalf("a refused revocation revoked: %v", err)
	}
	if err := ts.RevokeToken(admin, "acme", tok.ID, f.clk.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := ledger.Authenticate(f.ctx, ts, secret, f.clk.Now()); ledger.ErrorCode(err) != ledger.EUnauthorized {
		t.Fatalf("revoked token accepted: %v", err)
	}
	if err := ts.RevokeToken(admin, "acme", "tok_missing", f.clk.Now()); ledger.ErrorCode(err) != ledger.ENotFound {
		t.Fatalf("revoke missing: %v", err)
	}
	list, err := ts.ListTokens(f.ctx, "acme")
	if err != nil || len(list) != 1 || list[0].RevokedAt == nil || list[0].ID != tok.ID {
		t.Fatalf("list: %+v, %v", list, err)
	}
	if list, err := ts.ListTokens(f.ctx, "globex"); err != nil || len(list) != 1 || list[0].ID != globexTok.ID {
		t.Fatalf("globex's list: %+v, %v", list, err)
	}
	as, ok := f.store.(ledger.ActionStore)
	if !ok {
		t.Fatal("store does not implement ledger.ActionStore")
	}
	acts, err := as.Actions(f.ctx, ledger.ActionFilter{Tenant: "acme"})
	if err != nil || len(acts) != 3 || acts[2].Kind != ledger.ActionTenantCreate {
		t.Fatalf("actions: %+v, %v", acts, err)
	}
	rev, made := acts[0], acts[1]
	if rev.Kind != ledger.ActionTokenRevoke || made.Kind != ledger.ActionTokenCreate || rev.Object != tok.ID ||
		made.Object != tok.ID || rev.Subject != "oidc:ada" || rev.Name != "Ada" || rev.Role != "admin" ||
		rev.RequestID != "req-oidc:ada" || rev.Tenant != "acme" || !rev.At.Equal(f.clk.Now().UTC().Truncate(time.Microsecond)) ||
		rev.ID <= made.ID {
		t.Fatalf("actions: %+v", acts)
	}
	if _, err := as.Actions(f.ctx, ledger.ActionFilter{}); ledger.ErrorCode(err) != ledger.EInvalid {
		t.Fatalf("actions without a tenant: %v", err)
	}
	if acts, _ := as.Actions(f.ctx, ledger.ActionFilter{Tenant: "acme", Limit: 1}); len(acts) != 1 || acts[0].ID != rev.ID {
		t.Fatalf("bounded actions: %+v", acts)
	}
}

// cursor encodes a keyset position as ledger.NextPage does.
func cursor(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
