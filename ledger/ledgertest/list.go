package ledgertest

import (
	"encoding/base64"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"settle/auth"
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

func testTokens(t *testing.T, h Harness) {
	f := setup(t, h)
	ts, ok := f.store.(auth.TokenStore)
	if !ok {
		t.Fatal("store does not implement auth.TokenStore")
	}
	secret, tok, err := auth.NewToken("acme", f.clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.CreateToken(f.ctx, tok); err != nil {
		t.Fatal(err)
	}
	other, _, _ := auth.NewToken("acme", f.clk.Now()) // well-formed, never stored
	got, err := auth.Authenticate(f.ctx, ts, secret)
	if err != nil || got.Tenant != "acme" || got.ID != tok.ID {
		t.Fatalf("authenticate: %+v, %v", got, err)
	}
	for name, bad := range map[string]string{
		"Empty": "", "Malformed": "Bearer x", "Unknown": other,
	} {
		if _, err := auth.Authenticate(f.ctx, ts, bad); ledger.ErrorCode(err) != ledger.EUnauthorized {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if err := ts.RevokeToken(f.ctx, tok.ID, f.clk.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := auth.Authenticate(f.ctx, ts, secret); ledger.ErrorCode(err) != ledger.EUnauthorized {
		t.Fatalf("revoked token accepted: %v", err)
	}
	if err := ts.RevokeToken(f.ctx, "tok_missing", f.clk.Now()); ledger.ErrorCode(err) != ledger.ENotFound {
		t.Fatalf("revoke missing: %v", err)
	}
	list, err := ts.ListTokens(f.ctx)
	if err != nil || len(list) != 1 || list[0].RevokedAt == nil {
		t.Fatalf("list: %+v, %v", list, err)
	}
}

// cursor encodes a keyset position as ledger.NextPage does.
func cursor(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
