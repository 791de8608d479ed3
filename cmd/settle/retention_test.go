package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/postgres"
	"settle/ledger/sqlite"
)

// storeAt opens the database db names with a clock fixed at now, to write
// history as it would have been written then.
func storeAt(t *testing.T, db string, now time.Time) store {
	t.Helper()
	ctx := context.Background()
	clock := func() time.Time { return now }
	if path, ok := strings.CutPrefix(db, "sqlite:"); ok {
		s, err := sqlite.Open(ctx, path, clock)
		if err != nil {
			t.Fatal(err)
		}
		return &openDB{Ledger: s.Ledger, db: s}
	}
	pool, err := postgres.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if err := postgres.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	s := postgres.New(pool, clock)
	t.Cleanup(func() { s.Close() })
	return &openDB{Ledger: s.Ledger, db: s}
}

// settled writes one operation of tenant that reached to at now, with a
// recognisable payload value, and returns it.
func settled(t *testing.T, s store, tenant, intent string, to ledger.State) ledger.Operation {
	t.Helper()
	ctx := context.Background()
	op, _, err := s.Create(ctx, ledger.NewOperation{Tenant: tenant, Type: "charge", IntentRef: intent, Target: "payments",
		Payload: []byte(`{"amount":4242,"card_holder":"PAYLOAD-SECRET-` + intent + `"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if to == ledger.Prepared {
		return op
	}
	op, err = s.Claim(ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	o := ledger.Outcome{Tenant: op.Tenant, OperationID: op.ID, Fence: op.Fence, From: ledger.InFlight, To: to,
		Actor: ledger.ActorExecutor}
	if to == ledger.Succeeded {
		o.RemoteRef = "ch_" + intent
	}
	if op, err = s.Record(ctx, o); err != nil {
		t.Fatal(err)
	}
	return op
}

// settle purge prints, per kind, what would go (changing nothing) and then
// what went, on both stores.
func TestPurge(t *testing.T) {
	t.Parallel()
	for name, db := range tenantStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			now := time.Now()
			old := storeAt(t, db, now.Add(-40*24*time.Hour))
			a := settled(t, old, "acme", "order-old", ledger.Succeeded)
			pending := settled(t, old, "acme", "order-open", ledger.Prepared)
			old.Close()
			recent := storeAt(t, db, now.Add(-10*24*time.Hour))
			b := settled(t, recent, "globex", "order-recent", ledger.FailedTerminal)
			recent.Close()

			args := []string{"purge", "--redact-payloads-after", "7d", "--delete-operations-after", "30d",
				"--purge-reviewed-after", "2160h", "--retention-owner", "payments-team", "--database-url", db}
			code, out, errOut := settleCmd(t, append(args, "--dry-run")...)
			want := "settle purge: would remove (owner payments-team; payloads redacted after 7d; operations deleted after 30d; reviewed items purged after 90d)\n" +
				"  payloads_redacted  1\n  operations         1\n  events             3\n"
			if code != 0 || errOut != "" || !strings.HasPrefix(out, want) || !strings.Contains(out, "  deliveries         0\n") {
				t.Fatalf("dry run: exit %d, stderr %q, stdout\n%s\nwant it to begin\n%s", code, errOut, out, want)
			}
			st := storeAt(t, db, now)
			if _, err := st.Get(context.Background(), "acme", a.ID); err != nil {
				t.Fatalf("the dry run deleted: %v", err)
			}
			st.Close()

			code, out, errOut = settleCmd(t, args...)
			if code != 0 || errOut != "" || !strings.HasPrefix(out, strings.Replace(want, "would remove", "removed", 1)) ||
				strings.Contains(out, "PAYLOAD-SECRET") {
				t.Fatalf("purge: exit %d, stderr %q, stdout\n%s", code, errOut, out)
			}
			st = storeAt(t, db, now)
			defer st.Close()
			ctx := context.Background()
			if _, err := st.Get(ctx, "acme", a.ID); ledger.ErrorCode(err) != ledger.ENotFound {
				t.Fatalf("40-day-old operation: %v, want deleted", err)
			}
			if got, err := st.Get(ctx, "globex", b.ID); err != nil || !got.Redacted() {
				t.Fatalf("10-day-old operation: %+v %v, want redacted", got, err)
			}
			if got, err := st.Get(ctx, "acme", pending.ID); err != nil || got.Redacted() || got.State != ledger.Prepared {
				t.Fatalf("operation not yet final: %+v %v, want untouched", got, err)
			}
			if code, out, _ := settleCmd(t, args...); code != 0 || strings.Contains(out, " 1\n") {
				t.Fatalf("a second purge: exit %d\n%s", code, out)
			}
		})
	}
}

// The retention flags are checked before any store is opened, with one
// line naming the flag; serve checks them the same way.
func TestPurge_InvalidPolicy(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "settle.db")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--redact-payloads-after", "30d", "--delete-operations-after", "7d"},
			"--delete-operations-after (168h0m0s) must not be shorter than redact-payloads-after (720h0m0s)"},
		{[]string{"--redact-payloads-after", "10m"}, "--redact-payloads-after must be 0 (never) or at least 1h0m0s, got 10m0s"},
		{[]string{"--purge-reviewed-after=-1h"}, "--purge-reviewed-after must not be negative"},
		{[]string{"--delete-operations-after", "thirty"}, "--delete-operations-after: want a whole number of days such as 30d"},
		{[]string{"--delete-operations-after", "1.5d"}, "want a whole number of days"},
		{nil, "no rule given"},
	} {
		code, out, errOut := settleCmd(t, append([]string{"purge", "--database-url", db}, c.args...)...)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, out, errOut, c.want)
		}
	}
	code, _, errOut := settleCmd(t, "serve", "--addr", "127.0.0.1:0", "--database-url", db,
		"--redact-payloads-after", "30d", "--delete-operations-after", "7d")
	if code != 2 || !strings.Contains(errOut, "settle serve: --delete-operations-after") {
		t.Errorf("serve: exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(strings.TrimPrefix(db, "sqlite:")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused policy created or opened the store: %v", err)
	}
}

// settle tenant erase is refused, naming the count, while the tenant has
// an operation not yet final; --force removes all of its data, prints the
// counts, leaves the erasure's record and another tenant's data.
func TestTenant_Erase(t *testing.T) {
	t.Parallel()
	for name, db := range tenantStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, tenant := range []string{"acme", "globex"} {
				if code, _, errOut := settleCmd(t, "tenant", "set", "--tenant", tenant, "--param", "account=acct_"+tenant, "--by", "ada", "--database-url", db); code != 0 {
					t.Fatalf("set: %s", errOut)
				}
				if code, _, errOut := settleCmd(t, "token", "create", "--name", "test client", "--new-tenant", "--tenant", tenant, "--by", "ada", "--database-url", db); code != 0 {
					t.Fatalf("token: %s", errOut)
				}
				if code, _, errOut := settleCmd(t, "callback", "set", "--tenant", tenant, "--url", "https://hooks.example.com/"+tenant, "--by", "ada", "--database-url", db); code != 0 {
					t.Fatalf("callback: %s", errOut)
				}
			}
			st := storeAt(t, db, time.Now())
			var acme, globex []ledger.Operation
			for i, s := range []ledger.State{ledger.Succeeded, ledger.FailedTerminal, ledger.Prepared} {
				acme = append(acme, settled(t, st, "acme", fmt.Sprintf("a-%d", i), s))
				globex = append(globex, settled(t, st, "globex", fmt.Sprintf("g-%d", i), s))
			}
			st.Close()

			code, out, errOut := settleCmd(t, "tenant", "erase", "--tenant", "acme", "--by", "ada", "--database-url", db)
			if code != 1 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "1 operation not yet final") ||
				!strings.Contains(errOut, "--force") {
				t.Fatalf("refusal: exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			code, out, errOut = settleCmd(t, "tenant", "erase", "--tenant", "acme", "--force", "--by", "ada", "--database-url", db)
			if code != 0 || errOut != "" || !strings.HasPrefix(out, "settle tenant erase: tenant acme erased by cli:ada (erasure ") ||
				!strings.Contains(out, "forced with 1 not yet final") {
				t.Fatalf("erase: exit %d, stderr %q, stdout\n%s", code, errOut, out)
			}
			for _, line := range []string{"  operations     3\n", "  tokens         1\n", "  callbacks      1\n", "  params         1\n",
				"  notifications  2\n"} {
				if !strings.Contains(out, line) {
					t.Fatalf("erase output lacks %q:\n%s", line, out)
				}
			}
			if strings.Contains(out, "acct_") || strings.Contains(out, "PAYLOAD-SECRET") {
				t.Fatalf("erase printed erased data:\n%s", out)
			}
			st = storeAt(t, db, time.Now())
			defer st.Close()
			ctx := context.Background()
			for _, op := range acme {
				if _, err := st.Get(ctx, "acme", op.ID); ledger.ErrorCode(err) != ledger.ENotFound {
					t.Fatalf("acme's operation: %v", err)
				}
			}
			for _, op := range globex {
				if _, err := st.Get(ctx, "globex", op.ID); err != nil {
					t.Fatalf("globex's operation: %v", err)
				}
			}
			if p, _ := st.TenantParams(ctx, "globex"); p["account"] != "acct_globex" {
				t.Fatalf("globex's parameters: %v", p)
			}
			if toks, _ := st.ListTokens(ctx, "globex"); len(toks) != 1 {
				t.Fatalf("globex's tokens: %v", toks)
			}
			recs, err := st.Erasures(ctx, "acme")
			if err != nil || len(recs) != 1 || recs[0].Subject != "cli:ada" || !recs[0].Forced || recs[0].Counts.Operations != 3 {
				t.Fatalf("erasure record: %+v %v", recs, err)
			}
		})
	}
}

// settle serve with retention flags runs the loop: history older than the
// periods is redacted and deleted soon after start, and the log says so.
func TestServe_RetentionLoop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "settle.db")
	now := time.Now()
	old := storeAt(t, db, now.Add(-60*24*time.Hour))
	gone := settled(t, old, "acme", "order-gone", ledger.Succeeded)
	old.Close()
	mid := storeAt(t, db, now.Add(-10*24*time.Hour))
	redacted := settled(t, mid, "acme", "order-redacted", ledger.Succeeded)
	mid.Close()

	_, logs := startLogged(t, dir, nil, "--database-url", db, "--retention-owner", "payments-team",
		"--redact-payloads-after", "7d", "--delete-operations-after", "30d")
	waitFor(t, 15*time.Second, "the retention loop's first pass", func() (bool, string) {
		return strings.Contains(logs.String(), "pass done") && strings.Contains(logs.String(), "component=retention"), logs.String()
	})
	log := logs.String()
	if !strings.Contains(log, "payloads_redacted=1") || !strings.Contains(log, "operations=1") ||
		strings.Contains(log, "PAYLOAD-SECRET") {
		t.Fatalf("log:\n%s", log)
	}
	st := storeAt(t, db, now)
	defer st.Close()
	if _, err := st.Get(context.Background(), "acme", gone.ID); ledger.ErrorCode(err) != ledger.ENotFound {
		t.Fatalf("60-day-old operation: %v", err)
	}
	if got, err := st.Get(context.Background(), "acme", redacted.ID); err != nil || !got.Redacted() {
		t.Fatalf("10-day-old operation: %+v %v", got, err)
	}
}
