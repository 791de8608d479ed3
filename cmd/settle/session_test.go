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
		{[]string{"session", "list"}, 2},
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
