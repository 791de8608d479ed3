package ledgertest

import (
	"crypto/sha256"
	"slices"
	"testing"
	"time"

	"settle/ledger"
)

// RunSessions checks ledger.SessionStore on the stores h makes: a session
// round-trips, ends at its idle or absolute expiry by the store's clock,
// and sign-out, revocation and cleanup remove it at once.
func RunSessions(t *testing.T, h Harness) {
	t.Run("RoundTrip", func(t *testing.T) { testSessionRoundTrip(t, h) })
	t.Run("Invalid", func(t *testing.T) { testSessionInvalid(t, h) })
	t.Run("IdleExpiry", func(t *testing.T) { testSessionIdle(t, h) })
	t.Run("AbsoluteExpiry", func(t *testing.T) { testSessionAbsolute(t, h) })
	t.Run("DeleteAndRevoke", func(t *testing.T) { testSessionDelete(t, h) })
	t.Run("DeleteExpired", func(t *testing.T) { testSessionDeleteExpired(t, h) })
	t.Run("KnownPerson", func(t *testing.T) { testKnownPerson(t, h) })
}

// testKnownPerson: a person is known by a session row, or by a console
// action in the tenant; never a CLI subject, and normalised.
func testKnownPerson(t *testing.T, h Harness) {
	f := setup(t, h)
	ps, ok := f.store.(ledger.PersonStore)
	if !ok {
		t.Fatal("store does not implement ledger.PersonStore")
	}
	rs := f.store.(ledger.ResolutionStore)
	f.addSession("s1", "demo:ada")
	op := f.inState("acme", ledger.Escalated)
	if _, err := rs.Propose(f.as("oidc:zed", "Zed", "owner"), ledger.Resolution{Tenant: "acme", OperationID: op.ID,
		To: ledger.FailedTerminal, Reason: "never arrived"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tenant, subject string
		want            bool
	}{
		{"acme", "demo:ada", true}, {"globex", "demo:ada", true}, {"acme", " demo:ada\t", true},
		{"acme", "oidc:zed", true}, {"globex", "oidc:zed", false}, {"acme", "oidc:nobody", false},
		{"acme", "cli:ada", false}, {"acme", "ada", false}, {"acme", "demo:", false},
	} {
		if got, err := ps.KnownPerson(f.ctx, c.tenant, c.subject); err != nil || got != c.want {
			t.Errorf("KnownPerson(%q, %q) = %v, %v; want %v", c.tenant, c.subject, got, err, c.want)
		}
	}
}

func (f *fixture) sessions() ledger.SessionStore {
	f.t.Helper()
	ss, ok := f.store.(ledger.SessionStore)
	if !ok {
		f.t.Fatal("store does not implement ledger.SessionStore")
	}
	return ss
}

// newSession returns a valid session of subject created now, idle for an
// hour, ending in twelve.
func (f *fixture) newSession(id, subject string) ledger.Session {
	h := sha256.Sum256([]byte(id))
	now := f.clk.Now()
	return ledger.Session{
		IDHash: h[:], Subject: subject, Name: "Ada Lovelace", Email: "ada@example.com",
		Claims:    []string{"settle-support", "settle-owners"},
		CreatedAt: now, LastSeenAt: now, IdleExpiresAt: now.Add(time.Hour), ExpiresAt: now.Add(12 * time.Hour),
	}
}

func (f *fixture) addSession(id, subject string) ledger.Session {
	f.t.Helper()
	s := f.newSession(id, subject)
	if err := f.sessions().CreateSession(f.ctx, s); err != nil {
		f.t.Fatalf("create session: %v", err)
	}
	return s
}

func sameSession(t testing.TB, got, want ledger.Session) {
	t.Helper()
	if string(got.IDHash) != string(want.IDHash) || got.Subject != want.Subject || got.Name != want.Name ||
		got.Email != want.Email || !slices.Equal(got.Claims, want.Claims) || !got.CreatedAt.Equal(want.CreatedAt) ||
		!got.LastSeenAt.Equal(want.LastSeenAt) || !got.IdleExpiresAt.Equal(want.IdleExpiresAt) ||
		!got.ExpiresAt.Equal(want.ExpiresAt) {
		t.Fatalf("session:\n got %+v\nwant %+v", got, want)
	}
}

func testSessionRoundTrip(t *testing.T, h Harness) {
	f := setup(t, h)
	ss := f.sessions()
	s := f.addSession("id-1", "oidc:ada")
	got, err := ss.GetSession(f.ctx, s.IDHash)
	if err != nil {
		t.Fatal(err)
	}
	sameSession(t, got, s)

	other := sha256.Sum256([]byte("id-unknown"))
	_, err = ss.GetSession(f.ctx, other[:])
	wantCode(t, err, ledger.ENotFound)
	_, err = ss.TouchSession(f.ctx, other[:], time.Hour)
	wantCode(t, err, ledger.ENotFound)

	wantCode(t, ss.CreateSession(f.ctx, s), ledger.EConflict)

	noClaims := f.newSession("id-2", "demo:support")
	noClaims.Claims = nil
	if err := ss.CreateSession(f.ctx, noClaims); err != nil {
		t.Fatal(err)
	}
	got, err = ss.GetSession(f.ctx, noClaims.IDHash)
	if err != nil || got.Claims != nil {
		t.Fatalf("get = %+v, %v; want no claims", got, err)
	}
}

func testSessionInvalid(t *testing.T, h Harness) {
	f := setup(t, h)
	ss := f.sessions()
	for name, mutate := range map[string]func(s *ledger.Session){
		"ShortHash":      func(s *ledger.Session) { s.IDHash = s.IDHash[:16] },
		"NoSubject":      func(s *ledger.Session) { s.Subject = "" },
		"BareSubject":    func(s *ledger.Session) { s.Subject = "ada" },
		"ExpiredAtBirth": func(s *ledger.Session) { s.ExpiresAt = s.CreatedAt },
		"IdlePastEnd":    func(s *ledger.Session) { s.IdleExpiresAt = s.ExpiresAt.Add(time.Second) },
		"HugeClaim":      func(s *ledger.Session) { s.Claims = []string{string(make([]byte, 201))} },
	} {
		s := f.newSession("id-"+name, "oidc:ada")
		mutate(&s)
		if err := ss.CreateSession(f.ctx, s); ledger.ErrorCode(err) != ledger.EInvalid {
			t.Errorf("%s: create = %v, want invalid", name, err)
		}
	}
	s := f.addSession("id-ok", "oidc:ada")
	_, err := ss.TouchSession(f.ctx, s.IDHash, 0)
	wantCode(t, err, ledger.EInvalid)
}

func testSessionIdle(t *testing.T, h Harness) {
	f := setup(t, h)
	ss := f.sessions()
	s := f.addSession("id-1", "oidc:ada")

	f.clk.Advance(59 * time.Minute)
	touched, err := ss.TouchSession(f.ctx, s.IDHash, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	now := f.clk.Now()
	if !touched.LastSeenAt.Equal(now) || !touched.IdleExpiresAt.Equal(now.Add(time.Hour)) ||
		!touched.ExpiresAt.Equal(s.ExpiresAt) || !touched.CreatedAt.Equal(s.CreatedAt) {
		t.Fatalf("touched = %+v", touched)
	}
	got, err := ss.GetSession(f.ctx, s.IDHash)
	if err != nil {
		t.Fatal(err)
	}
	sameSession(t, got, touched)

	// An hour without use ends it, exactly at the idle expiry.
	f.clk.Advance(time.Hour)
	_, err = ss.GetSession(f.ctx, s.IDHash)
	wantCode(t, err, ledger.ENotFound)
	_, err = ss.TouchSession(f.ctx, s.IDHash, time.Hour)
	wantCode(t, err, ledger.ENotFound)
}

func testSessionAbsolute(t *testing.T, h Harness) {
	f := setup(t, h)
	ss := f.sessions()
	s := f.addSession("id-1", "oidc:ada")
	// Used every 50 minutes, it still ends at its absolute expiry, and the
	// idle expiry never passes it.
	for f.clk.Now().Add(50 * time.Minute).Before(s.ExpiresAt) {
		f.clk.Advance(50 * time.Minute)
		got, err := ss.TouchSession(f.ctx, s.IDHash, time.Hour)
		if err != nil {
			t.Fatalf("at %s: %v", f.clk.Now(), err)
		}
		if got.IdleExpiresAt.After(s.ExpiresAt) {
			t.Fatalf("idle expiry %s passes the absolute %s", got.IdleExpiresAt, s.ExpiresAt)
		}
	}
	f.clk.Advance(s.ExpiresAt.Sub(f.clk.Now()))
	_, err := ss.GetSession(f.ctx, s.IDHash)
	wantCode(t, err, ledger.ENotFound)
	_, err = ss.TouchSession(f.ctx, s.IDHash, time.Hour)
	wantCode(t, err, ledger.ENotFound)
}

func testSessionDelete(t *testing.T, h Harness) {
	f := setup(t, h)
	ss := f.sessions()
	a1 := f.addSession("id-a1", "oidc:ada")
	a2 := f.addSession("id-a2", "oidc:ada")
	g := f.addSession("id-g", "oidc:grace")

	if err := ss.DeleteSession(f.ctx, a1.IDHash); err != nil {
		t.Fatal(err)
	}
	_, err := ss.GetSession(f.ctx, a1.IDHash)
	wantCode(t, err, ledger.ENotFound)
	if err := ss.DeleteSession(f.ctx, a1.IDHash); err != nil {
		t.Fatalf("second sign-out: %v", err)
	}

	f.addSession("id-a3", "oidc:ada")
	n, err := ss.RevokeSessions(f.ctx, "oidc:ada")
	if err != nil || n != 2 {
		t.Fatalf("revoke = %d, %v; want 2", n, err)
	}
	_, err = ss.GetSession(f.ctx, a2.IDHash)
	wantCode(t, err, ledger.ENotFound)
	if _, err := ss.GetSession(f.ctx, g.IDHash); err != nil {
		t.Fatalf("another person's session: %v", err)
	}
	if n, err := ss.RevokeSessions(f.ctx, "oidc:nobody"); err != nil || n != 0 {
		t.Fatalf("revoke nobody = %d, %v", n, err)
	}
}

func testSessionDeleteExpired(t *testing.T, h Harness) {
	f := setup(t, h)
	ss := f.sessions()
	idle := f.addSession("id-idle", "oidc:ada")
	f.clk.Advance(30 * time.Minute)
	live := f.addSession("id-live", "oidc:grace")
	f.clk.Advance(31 * time.Minute) // idle is past its hour; live is not
	n, err := ss.DeleteExpiredSessions(f.ctx)
	if err != nil || n != 1 {
		t.Fatalf("delete expired = %d, %v; want 1", n, err)
	}
	_, err = ss.GetSession(f.ctx, idle.IDHash)
	wantCode(t, err, ledger.ENotFound)
	if _, err := ss.GetSession(f.ctx, live.IDHash); err != nil {
		t.Fatal(err)
	}
	if n, err := ss.DeleteExpiredSessions(f.ctx); err != nil || n != 0 {
		t.Fatalf("again = %d, %v; want 0", n, err)
	}
}
