package ledger_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"math/bits"
	"regexp"
	"strings"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
)

var (
	secretRe = regexp.MustCompile(`^stl_[A-Za-z0-9_-]{43}$`)
	idRe     = regexp.MustCompile(`^tok_[0-9a-f]{12}$`)
)

func TestNewToken(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 1, 2, 3, 4, 5, 123456789, time.FixedZone("CET", 3600))
	secret, tok, err := ledger.NewToken("acme", "test", now)
	if err != nil {
		t.Fatal(err)
	}
	if !secretRe.MatchString(secret) {
		t.Fatalf("secret %q is not stl_ and 43 base64url characters", secret)
	}
	key, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(secret, "stl_"))
	if err != nil || len(key) != 32 {
		t.Fatalf("secret does not carry 32 random bytes: %d bytes, %v", len(key), err)
	}
	if !idRe.MatchString(tok.ID) {
		t.Fatalf("id %q is not tok_ and 12 hex digits", tok.ID)
	}
	if strings.Contains(secret, strings.TrimPrefix(tok.ID, "tok_")) {
		t.Fatal("the public id must not be part of the secret")
	}
	if tok.Tenant != "acme" || tok.RevokedAt != nil {
		t.Fatalf("token %+v", tok)
	}
	if sum := sha256.Sum256([]byte(secret)); !bytes.Equal(tok.Hash, sum[:]) {
		t.Fatal("the stored hash is not the SHA-256 of the secret")
	}
	if bytes.Contains(tok.Hash, []byte(secret)) || bytes.Contains(tok.Hash, key) {
		t.Fatal("the stored record carries the secret")
	}
	// Stored with the database's precision, in UTC.
	if want := time.Date(2030, 1, 2, 2, 4, 5, 123456000, time.UTC); !tok.CreatedAt.Equal(want) || tok.CreatedAt.Location() != time.UTC {
		t.Fatalf("created at %v, want %v", tok.CreatedAt, want)
	}
}

// Secrets and ids are random: no repeats, and the 256-bit keys look like
// fair coin flips (a broken generator returning zeros or a counter fails).
func TestNewToken_Entropy(t *testing.T) {
	t.Parallel()
	const n = 500
	secrets, ids := map[string]bool{}, map[string]bool{}
	ones := 0
	for range n {
		secret, tok, err := ledger.NewToken("acme", "test", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if secrets[secret] || ids[tok.ID] {
			t.Fatalf("repeated secret or id after %d tokens", len(secrets))
		}
		secrets[secret], ids[tok.ID] = true, true
		key, _ := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(secret, "stl_"))
		for _, b := range key {
			ones += bits.OnesCount8(b)
		}
	}
	// n*256 fair bits: mean n*128, standard deviation sqrt(n*64) ≈ 179.
	if mean := n * 128; ones < mean-2000 || ones > mean+2000 {
		t.Fatalf("%d one-bits in %d key bits, want about %d", ones, n*256, mean)
	}
}

func TestNewToken_InvalidTenant(t *testing.T) {
	t.Parallel()
	for name, tenant := range map[string]string{
		"Empty":       "",
		"Upper":       "Acme",
		"Space":       "ac me",
		"LeadingDot":  ".acme",
		"LeadingDash": "-acme",
		"TooLong":     strings.Repeat("a", 64),
		"NonASCII":    "acmé",
		"Slash":       "acme/globex",
		"NUL":         "acme\x00",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			secret, tok, err := ledger.NewToken(tenant, "test", time.Now())
			if ledger.ErrorCode(err) != ledger.EInvalid {
				t.Fatalf("error %v, want %s", err, ledger.EInvalid)
			}
			if secret != "" || tok.ID != "" || tok.Hash != nil {
				t.Fatal("a refused tenant still got a token")
			}
		})
	}
	for name, tenant := range map[string]string{
		"Longest": strings.Repeat("a", 63), "Digits": "42", "Punctuation": "a.b_c-d",
	} {
		t.Run("Valid"+name, func(t *testing.T) {
			t.Parallel()
			if _, _, err := ledger.NewToken(tenant, "test", time.Now()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestHashToken(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	} {
		if got := hex.EncodeToString(ledger.HashToken(c.in)); got != c.want {
			t.Fatalf("HashToken(%q) = %s, want %s", c.in, got, c.want)
		}
	}
	a, b := ledger.HashToken("stl_a"), ledger.HashToken("stl_b")
	if len(a) != sha256.Size || bytes.Equal(a, b) || !bytes.Equal(a, ledger.HashToken("stl_a")) {
		t.Fatal("HashToken must be a deterministic 32-byte digest that separates inputs")
	}
}

// tokenStore is what both ledger adapters implement.
type tokenStore interface {
	ledger.Store
	ledger.TokenStore
}

// fixture is a real store holding one valid and one revoked token.
type fixture struct {
	store            tokenStore
	valid, revoked   string
	validTok, revTok ledger.Token
}

func setup(t *testing.T, h ledgertest.Harness) fixture {
	t.Helper()
	s := h.New(t, time.Now).(tokenStore)
	ctx := ledger.NewContextWithActor(context.Background(), ledger.Actor{Subject: "cli:test", Name: "test", Role: "admin"})
	f := fixture{store: s}
	if err := s.(ledger.TenantStore).CreateTenant(ctx, "acme", time.Now()); err != nil {
		t.Fatal(err)
	}
	var err error
	if f.valid, f.validTok, err = ledger.NewToken("acme", "test", time.Now()); err != nil {
		t.Fatal(err)
	}
	if f.revoked, f.revTok, err = ledger.NewToken("acme", "test", time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, tok := range []ledger.Token{f.validTok, f.revTok} {
		if err := s.CreateToken(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RevokeToken(ctx, "acme", f.revTok.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestAuthenticate(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		t.Parallel()
		f := setup(t, h)
		ctx := context.Background()

		got, err := ledger.Authenticate(ctx, f.store, f.valid, time.Now())
		if err != nil || got.ID != f.validTok.ID || got.Tenant != "acme" || !bytes.Equal(got.Hash, f.validTok.Hash) {
			t.Fatalf("valid token: %+v, %v", got, err)
		}

		unknown, _, _ := ledger.NewToken("acme", "test", time.Now()) // well-formed, never stored
		body := strings.TrimPrefix(f.valid, "stl_")
		for name, secret := range map[string]string{
			"Empty":         "",
			"PrefixOnly":    "stl_",
			"NoPrefix":      body,
			"WrongPrefix":   "sk_" + body,
			"UpperPrefix":   "STL_" + body,
			"OneShort":      f.valid[:len(f.valid)-1],
			"OneLong":       f.valid + "A",
			"BearerHeader":  "Bearer " + f.valid, // the caller strips the scheme
			"Whitespace":    " " + f.valid[:len(f.valid)-1],
			"NonASCII":      "stl_" + body[:41] + "é", // right byte length, not the token
			"NUL":           "stl_" + body[:42] + "\x00",
			"CaseChanged":   "stl_" + strings.ToUpper(body[:1]) + strings.ToLower(body[1:]),
			"Unknown":       unknown,
			"Revoked":       f.revoked,
			"HashAsSecret":  hex.EncodeToString(f.validTok.Hash),
			"IDAsSecret":    f.validTok.ID,
			"OtherTokenMix": f.valid[:20] + f.revoked[20:],
		} {
			t.Run(name, func(t *testing.T) {
				if secret == f.valid {
					t.Skip("the mutation left the valid token unchanged")
				}
				tok, err := ledger.Authenticate(ctx, f.store, secret, time.Now())
				if ledger.ErrorCode(err) != ledger.EUnauthorized {
					t.Fatalf("error %v, want %s", err, ledger.EUnauthorized)
				}
				if tok.ID != "" || tok.Tenant != "" {
					t.Fatalf("a refused secret returned token %+v", tok)
				}
			})
		}

		// A store that cannot answer is not a bad token: the error is
		// internal (500), never unauthorized (401), so an outage cannot be
		// mistaken for a revocation.
		f.store.Close()
		if _, err := ledger.Authenticate(ctx, f.store, f.valid, time.Now()); err == nil || ledger.ErrorCode(err) == ledger.EUnauthorized {
			t.Fatalf("closed store: %v, want an internal error", err)
		}
	})
}

// The TokenStore contract auth relies on, beyond the ledger conformance
// suite: lookups find revoked tokens too (so Authenticate can tell), and a
// second revocation keeps the first time.
func TestTokenStore(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		t.Parallel()
		f := setup(t, h)
		ctx := ledger.NewContextWithActor(context.Background(), ledger.Actor{Subject: "cli:test", Name: "test", Role: "admin"})
		rev, err := f.store.TokenByHash(ctx, f.revTok.Hash)
		if err != nil || rev.ID != f.revTok.ID || rev.RevokedAt == nil {
			t.Fatalf("revoked token by hash: %+v, %v", rev, err)
		}
		first := *rev.RevokedAt
		if err := f.store.RevokeToken(ctx, "acme", f.revTok.ID, first.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		again, _ := f.store.TokenByHash(ctx, f.revTok.Hash)
		if again.RevokedAt == nil || !again.RevokedAt.Equal(first) {
			t.Fatalf("second revocation moved the time: %v, want %v", again.RevokedAt, first)
		}
		if _, err := f.store.TokenByHash(ctx, ledger.HashToken("stl_nothing")); ledger.ErrorCode(err) != ledger.ENotFound {
			t.Fatalf("unknown hash: %v, want %s", err, ledger.ENotFound)
		}
		if err := f.store.RevokeToken(ctx, "acme", "tok_000000000000", time.Now()); ledger.ErrorCode(err) != ledger.ENotFound {
			t.Fatalf("revoke unknown: %v, want %s", err, ledger.ENotFound)
		}
		for _, id := range []string{"tok_\x00", "a\x00b", "tok_" + strings.Repeat("0", 3000), "TOK_ABC", ""} {
			if err := f.store.RevokeToken(ctx, "acme", id, time.Now()); ledger.ErrorCode(err) != ledger.ENotFound {
				t.Fatalf("revoke %q: %v, want %s", id, err, ledger.ENotFound)
			}
		}
		list, err := f.store.ListTokens(ctx, "acme")
		if err != nil || len(list) != 2 {
			t.Fatalf("list: %d tokens, %v", len(list), err)
		}
		for _, tok := range list {
			if tok.Tenant != "acme" || len(tok.Hash) != sha256.Size {
				t.Fatalf("listed token %+v", tok)
			}
		}
	})
}

// touchCounter is a token store that counts the writes of last use.
type touchCounter struct {
	ledger.TokenStore
	tok     ledger.Token
	touches int
}

func (c *touchCounter) TokenByHash(context.Context, []byte) (ledger.Token, error) { return c.tok, nil }

func (c *touchCounter) TouchToken(_ context.Context, _, _ string, at time.Time) (bool, error) {
	c.touches++
	c.tok.LastUsedAt = &at
	return true, nil
}

// TestAuthenticate_TouchesOnceAMinute: a client sending a request a second
// for five minutes costs five writes of last use, not three hundred.
func TestAuthenticate_TouchesOnceAMinute(t *testing.T) {
	t.Parallel()
	secret, tok, err := ledger.NewToken("acme", "billing", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	c := &touchCounter{tok: tok}
	start := time.Date(2030, 1, 2, 3, 0, 0, 0, time.UTC)
	for i := range 300 {
		if _, err := ledger.Authenticate(context.Background(), c, secret, start.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	if c.touches != 5 {
		t.Fatalf("%d writes of last use for 300 requests over 5 minutes, want 5", c.touches)
	}
}
