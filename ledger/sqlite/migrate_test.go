package sqlite_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/sqlite"
	"settle/migrations"
)

// Several processes (here: stores) opening one new file at once all end up
// with a fully migrated store.
func TestOpen_ConcurrentMigrations(t *testing.T) {
	t.Parallel()
	for round := 0; round < 5; round++ {
		path := filepath.Join(t.TempDir(), "settle.db")
		var wg sync.WaitGroup
		errs := make(chan error, 6)
		for i := 0; i < 6; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := sqlite.Open(context.Background(), path, nil)
				if err == nil {
					_, err = s.Find(context.Background(), "acme", "x")
					s.Close()
				}
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
}

// oldOp is an operation as an older settle left it; its number n gives its
// ids, intent "order-n", payload {"amount":n} and remote reference "ch_n".
type oldOp struct {
	n                int
	state            ledger.State
	fence            int64
	age              time.Duration // created this long before now
	lease, reconcile time.Duration // relative to now; 0 means NULL
	reason           string
}

// oldOps covers every state, each with what the claim, sweep and
// reconciler need to pick it up after the upgrade.
var oldOps = []oldOp{
	{n: 1, state: ledger.Prepared, age: 6 * time.Hour},
	{n: 2, state: ledger.InFlight, fence: 1, age: 5 * time.Hour, lease: -time.Minute},
	{n: 3, state: ledger.Unknown, fence: 2, age: 4 * time.Hour, reconcile: -time.Minute, reason: "timeout"},
	{n: 4, state: ledger.Succeeded, fence: 1, age: 3 * time.Hour},
	{n: 5, state: ledger.FailedTerminal, fence: 1, age: 2 * time.Hour, reason: "card declined"},
	{n: 6, state: ledger.Escalated, fence: 3, age: time.Hour, reason: "deadline passed"},
}

func (o oldOp) id() string        { return fmt.Sprintf("00000000-0000-4000-8000-%012d", o.n) }
func (o oldOp) remoteKey() string { return fmt.Sprintf("00000000-0000-4000-9000-%012d", o.n) }
func (o oldOp) payload() []byte   { return fmt.Appendf(nil, `{"amount":%d}`, o.n) }
func (o oldOp) hash() []byte      { return sum(o.payload()) }
func (o oldOp) sentAt(now time.Time) time.Time {
	return now.Add(-o.age + time.Second)
}

func (o oldOp) remoteRef() any {
	if o.state != ledger.Succeeded {
		return nil
	}
	return fmt.Sprintf("ch_%d", o.n)
}

// events returns the event log the operation would have: created, then
// claimed, then its verdict.
func (o oldOp) events() (from, to []any) {
	from, to = []any{nil}, []any{string(ledger.Prepared)}
	if o.state != ledger.Prepared {
		from, to = append(from, string(ledger.Prepared)), append(to, string(ledger.InFlight))
	}
	if o.state != ledger.Prepared && o.state != ledger.InFlight {
		from, to = append(from, string(ledger.InFlight)), append(to, string(o.state))
	}
	return from, to
}

func sum(b []byte) []byte { h := sha256.Sum256(b); return h[:] }

// at is now+d in the schema's microseconds, NULL for 0.
func at(now time.Time, d time.Duration) any {
	if d == 0 {
		return nil
	}
	return now.Add(d).UnixMicro()
}

// oldRows are the rows of the tables each version added, written with the
// columns that version had. ?1, where used, is now in microseconds; args
// follow it.
var oldRows = []struct {
	version int64
	sql     string
	args    []any
}{
	{1, `INSERT INTO payload_conflicts (tenant_id, operation_id, operation_type, intent_ref, stored_hash,
		rejected_hash, at) SELECT tenant_id, operation_id, operation_type, intent_ref, payload_hash,
		zeroblob(32), ?1 - 600000000 FROM operation_ledger WHERE intent_ref = 'order-4'`, nil},
	{2, `INSERT INTO api_tokens (token_id, tenant_id, token_hash, created_at)
		VALUES ('tok_old', 'acme', ?2, ?1 - 30 * 86400000000)`, []any{sum([]byte("stl_old"))}},
	{3, `UPDATE operation_ledger SET last_sent_at = created_at + 1000000 WHERE state <> 'PREPARED'`, nil},
	{4, `INSERT INTO webhook_inbox (target, body_sha256, body, received_at, next_attempt_at, attempts,
		processed_at, outcome) VALUES
		('payments', ?2, '{"id":"evt_1"}', ?1 - 60000000, ?1 - 60000000, 0, NULL, ''),
		('payments', ?3, NULL, ?1 - 86400000000, NULL, 1, ?1 - 86400000000, 'applied')`,
		[]any{sum([]byte(`{"id":"evt_1"}`)), sum([]byte(`{"id":"evt_0"}`))}},
	{4, `INSERT INTO quarantine (target, delivery_id, reason, event_id, quarantined_at)
		VALUES ('payments', 1, 'unknown reference', 'evt_9', ?1 - 7200000000)`, nil},
	// Claims globex, concerns acme's operation; reviewed by a free-text name.
	{4, `INSERT INTO quarantine (target, delivery_id, reason, event_id, claimed_tenant, operation_id,
		operation_tenant, quarantined_at, resolved_at, resolved_by, resolution)
		SELECT 'payments', 1, 'tenant mismatch', 'evt_8', 'globex', operation_id, tenant_id,
			?1 - 3600000000, ?1 - 1800000000, 'ops', 'checked'
		FROM operation_ledger WHERE intent_ref = 'order-1'`, nil},
	{5, `INSERT INTO tenant_callbacks (tenant_id, url, secret, created_at, updated_at)
		VALUES ('acme', 'https://acme.example/settle', randomblob(32), ?1 - 7 * 86400000000, ?1 - 7 * 86400000000)`, nil},
	{5, `INSERT INTO callback_outbox (tenant_id, operation_id, state, fence_token, created_at,
		next_attempt_at, attempts, delivered_at, last_status)
		SELECT tenant_id, operation_id, state, fence_token, updated_at,
			CASE state WHEN 'FAILED_TERMINAL' THEN ?1 - 60000000 ELSE updated_at END, 1,
			CASE state WHEN 'SUCCEEDED' THEN updated_at END, CASE state WHEN 'SUCCEEDED' THEN 200 ELSE 503 END
		FROM operation_ledger WHERE state IN ('SUCCEEDED', 'FAILED_TERMINAL')`, nil},
	{6, `INSERT INTO audit_findings (tenant_id, operation_id, target, kind, remote_ids, evidence, found_at)
		SELECT tenant_id, operation_id, target, 'duplicate', '["ch_4","ch_4b"]', '{"objects":2}', ?1 - 3600000000
		FROM operation_ledger WHERE intent_ref = 'order-4'`, nil},
	{6, `INSERT INTO audit_cursor (target, last_created_at, last_operation_id, updated_at)
		SELECT target, created_at, operation_id, ?1 FROM operation_ledger WHERE intent_ref = 'order-4'`, nil},
	{7, `INSERT INTO resolutions (tenant_id, operation_id, fence_token, to_state, remote_ref, reason,
		proposed_by, proposed_at)
		SELECT tenant_id, operation_id, fence_token, 'SUCCEEDED', 'ch_6', 'found in the dashboard', 'alice', ?1 - 300000000
		FROM operation_ledger WHERE state = 'ESCALATED'`, nil},
}

// TestMigrate_FromOlderSchemaWithData: a file that an older settle created
// and filled is brought up to date by Open (what `settle migrate` and
// `settle serve` run), its rows survive, and the store works on them.
func TestMigrate_FromOlderSchemaWithData(t *testing.T) {
	t.Parallel()
	for _, version := range []int64{1, 4, 7} {
		t.Run(fmt.Sprintf("From%05d", version), func(t *testing.T) {
			ctx := context.Background()
			clk := ledgertest.NewClock()
			now := clk.Now()
			path := filepath.Join(t.TempDir(), "settle.db")
			db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			p := provider(t, db)
			if _, err := p.UpTo(ctx, version); err != nil {
				t.Fatalf("migrate to %d: %v", version, err)
			}
			fillOld(ctx, t, db, version, now)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}

			s, err := sqlite.Open(ctx, path, clk.Now)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			db, err = sql.Open("sqlite", "file:"+path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			p = provider(t, db)
			sources := p.ListSources()
			if got, err := p.GetDBVersion(ctx); err != nil || got != sources[len(sources)-1].Version {
				t.Fatalf("version after Open = %d, %v; want %d", got, err, sources[len(sources)-1].Version)
			}
			checkUpgraded(ctx, t, s, version, now)
		})
	}
}

// provider is goose over the migrations Open embeds.
func provider(t *testing.T, db *sql.DB) *goose.Provider {
	t.Helper()
	fsys, err := fs.Sub(migrations.SQLite, "sqlite")
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, fsys)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fillOld writes oldOps, their events and the rows of oldRows that the
// schema at version can hold.
func fillOld(ctx context.Context, t *testing.T, db *sql.DB, version int64, now time.Time) {
	t.Helper()
	for _, o := range oldOps {
		created := now.Add(-o.age)
		_, err := db.ExecContext(ctx, `INSERT INTO operation_ledger (tenant_id, operation_id, operation_type,
			intent_ref, target, payload, payload_hash, remote_key, state, fence_token, attempt_count,
			lease_expires_at, remote_ref, retry_window_end, next_reconcile_at, reason, created_at, updated_at)
			VALUES ('acme', ?1, 'charge', ?2, 'payments', ?3, ?4, ?5, ?6, ?7, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)`,
			o.id(), fmt.Sprintf("order-%d", o.n), o.payload(), o.hash(), o.remoteKey(), string(o.state), o.fence,
			at(now, o.lease), o.remoteRef(), created.Add(24*time.Hour).UnixMicro(), at(now, o.reconcile), o.reason,
			created.UnixMicro(), created.Add(2*time.Second).UnixMicro())
		if err != nil {
			t.Fatalf("op %d: %v", o.n, err)
		}
		from, to := o.events()
		for i := range to {
			_, err := db.ExecContext(ctx, `INSERT INTO operation_events (tenant_id, operation_id, from_state,
				to_state, fence_token, actor, reason, at) VALUES ('acme', ?1, ?2, ?3, ?4, 'executor', '', ?5)`,
				o.id(), from[i], to[i], min(int64(i), o.fence), created.Add(time.Duration(i)*time.Second).UnixMicro())
			if err != nil {
				t.Fatalf("op %d event %d: %v", o.n, i, err)
			}
		}
	}
	for _, r := range oldRows {
		if r.version > version {
			continue
		}
		a := r.args
		if strings.Contains(r.sql, "?1") {
			a = append([]any{now.UnixMicro()}, a...)
		}
		if _, err := db.ExecContext(ctx, r.sql, a...); err != nil {
			t.Fatalf("%v\n%s", err, r.sql)
		}
	}
}

// checkUpgraded reads the old rows through the store and runs every loop's
// work on them (ledgertest.CheckUpgraded, shared by both stores).
func checkUpgraded(ctx context.Context, t *testing.T, s *sqlite.Store, version int64, now time.Time) {
	t.Helper()
	old := make([]ledgertest.OldOperation, len(oldOps))
	for i, o := range oldOps {
		_, to := o.events()
		old[i] = ledgertest.OldOperation{N: o.n, ID: o.id(), RemoteKey: o.remoteKey(), Reason: o.reason,
			State: o.state, Fence: o.fence, Payload: o.payload(), CreatedAt: now.Add(-o.age),
			SentAt: o.sentAt(now), Events: len(to)}
	}
	ledgertest.CheckUpgraded(ctx, t, s, old, version, now)
}
