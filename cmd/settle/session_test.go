package main

import (
	"context"
	"crypto/sha256"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/postgres"
	"settle/ledger/sqlite"
)

// openSessions opens the store at db (sqlite:PATH or postgres://…) as the
// test's own SessionStore.
func openSessions(t *testing.T, db string) ledger.SessionStore {
	t.Helper()
	ctx := context.Background()
	if path, ok := strings.CutPrefix(db, "sqlite:"); ok {
		s, err := sqlite.Open(ctx, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	pool, err := postgres.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := postgres.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	return postgres.New(pool, nil)
}

func addSession(t *testing.T, ss ledger.SessionStore, id, subject string) []byte {
	t.Helper()
	h := sha256.Sum256([]byte(id))
	now := time.Now().UTC().Truncate(time.Microsecond)
	err := ss.CreateSession(context.Background(), ledger.Session{IDHash: h[:], Subject: subject, Name: "N",
		CreatedAt: now, LastSeenAt: now, IdleExpiresAt: now.Add(time.Hour), ExpiresAt: now.Add(12 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	return h[:]
}

// settle session revoke ends every session of one subject, and only those.
func TestSession_Revoke(t *testing.T) {
	t.Parallel()
	for name, db := range map[string]string{
		"SQLite":   "sqlite:" + filepath.Join(t.TempDir(), "settle.db"),
		"Postgres": schemaURL(t),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ss := openSessions(t, db)
			a1 := addSession(t, ss, "a1", "oidc:ada")
			a2 := addSession(t, ss, "a2", "oidc:ada")
			g := addSession(t, ss, "g", "oidc:grace")

			code, out, errOut := settleCmd(t, "session", "revoke", "--subject", "oidc:ada", "--database-url", db)
			if code != 0 || out != "revoked 2 session(s) of oidc:ada\n" || errOut != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			ctx := context.Background()
			for _, h := range [][]byte{a1, a2} {
				if _, err := ss.GetSession(ctx, h); ledger.ErrorCode(err) != ledger.ENotFound {
					t.Fatalf("a revoked session is still there: %v", err)
				}
			}
			if _, err := ss.GetSession(ctx, g); err != nil {
				t.Fatalf("another person's session: %v", err)
			}
			code, out, _ = settleCmd(t, "session", "revoke", "--subject", "oidc:ada", "--database-url", db)
			if code != 0 || out != "revoked 0 session(s) of oidc:ada\n" {
				t.Fatalf("again: exit %d, stdout %q", code, out)
			}
		})
	}
}

func TestSession_Usage(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "settle.db")
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"session"}, 2},
		{[]string{"session", "lst"}, 2},
		{[]string{"session", "revoke", "--database-url", db}, 2},
		{[]string{"session", "revoke", "--subject", "ada", "--database-url", db}, 1},
		{[]string{"session", "-h"}, 0},
		{[]string{"session", "revoke", "-h"}, 0},
	} {
		if code, out, errOut := settleCmd(t, c.args...); code != c.code {
			t.Errorf("%v: exit %d, want %d (stdout %q, stderr %q)", c.args, code, c.code, out, errOut)
		}
	}
}

// settle session list shows whose an opaque provider subject is: the name
// and e-mail beside it, of live sessions only, narrowed by --subject.
func TestSession_List(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "settle.db")
	ss := openSessions(t, db)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	for i, who := range []struct{ subject, name, email string }{
		{"oidc:CiQxZGV4LXVzZXI", "Olga Ops", "olga@example.com"},
		{"oidc:CiQyb3RoZXI", "Per Person", "per@example.com"},
	} {
		h := sha256.Sum256([]byte{byte(i)})
		if err := ss.CreateSession(ctx, ledger.Session{IDHash: h[:], Subject: who.subject, Name: who.name, Email: who.email,
			CreatedAt: now, LastSeenAt: now, IdleExpiresAt: now.Add(time.Hour), ExpiresAt: now.Add(12 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := settleCmd(t, "session", "list", "--database-url", db)
	if code != 0 || errOut != "" || !strings.Contains(out, "SUBJECT") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, want := range []string{"oidc:CiQxZGV4LXVzZXI  Olga Ops    olga@example.com", "oidc:CiQyb3RoZXI", "per@example.com"} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = settleCmd(t, "session", "list", "--subject", "oidc:CiQyb3RoZXI", "--database-url", db)
	if code != 0 || strings.Contains(out, "Olga") || !strings.Contains(out, "Per Person") {
		t.Fatalf("--subject: exit %d:\n%s", code, out)
	}
	settleCmd(t, "session", "revoke", "--subject", "oidc:CiQyb3RoZXI", "--database-url", db)
	if _, out, _ = settleCmd(t, "session", "list", "--subject", "oidc:CiQyb3RoZXI", "--database-url", db); out != "no live console sessions\n" {
		t.Fatalf("after revoke:\n%s", out)
	}
}
