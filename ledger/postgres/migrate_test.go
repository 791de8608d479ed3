package postgres_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/postgres"
	"settle/ledger/postgres/pgtest"
	"settle/migrations"
)

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
func (o oldOp) hash() []byte      { h := sha256.Sum256(o.payload()); return h[:] }
func (o oldOp) sentAt(now time.Time) time.Time {
	return now.Add(-o.age + time.Second)
}

func (o oldOp) remoteRef() *string {
	if o.state != ledger.Succeeded {
		return nil
	}
	r := fmt.Sprintf("ch_%d", o.n)
	return &r
}

// events returns the event log the operation would have: created, then
// claimed, then its verdict.
func (o oldOp) events() (from, to []string) {
	from, to = []string{""}, []string{string(ledger.Prepared)}
	if o.state != ledger.Prepared {
		from, to = append(from, string(ledger.Prepared)), append(to, string(ledger.InFlight))
	}
	if o.state != ledger.Prepared && o.state != ledger.InFlight {
		from, to = append(from, string(ledger.InFlight)), append(to, string(o.state))
	}
	return from, to
}

func at(now time.Time, d time.Duration) *time.Time {
	if d == 0 {
		return nil
	}
	t := now.Add(d)
	return &t
}

// oldRows are the rows of the tables each version added, written with the
// columns that version had ($1 is now).
var oldRows = []struct {
	version int64
	sql     string
}{
	{1, `INSERT INTO payload_conflicts (tenant_id, operation_id, operation_type, intent_ref, stored_hash,
		rejected_hash, at) SELECT tenant_id, operation_id, operation_type, intent_ref, payload_hash,
		sha256(payload_hash), $1::timestamptz - interval '10 minutes' FROM operation_ledger WHERE intent_ref = 'order-4'`},
	{2, `INSERT INTO api_tokens (token_id, tenant_id, token_hash, created_at)
		VALUES ('tok_old', 'acme', sha256('stl_old'), $1::timestamptz - interval '30 days')`},
	{3, `UPDATE operation_ledger SET last_sent_at = created_at + interval '1 second' WHERE state <> 'PREPARED'`},
	{4, `INSERT INTO webhook_inbox (target, body_sha256, body, received_at, next_attempt_at, attempts,
		processed_at, outcome) VALUES
		('payments', sha256('{"id":"evt_1"}'), '{"id":"evt_1"}', $1::timestamptz - interval '1 minute', $1::timestamptz - interval '1 minute', 0, NULL, ''),
		('payments', sha256('{"id":"evt_0"}'), NULL, $1::timestamptz - interval '1 day', NULL, 1, $1::timestamptz - interval '1 day', 'applied')`},
	{4, `INSERT INTO quarantine (target, delivery_id, reason, event_id, quarantined_at)
		VALUES ('payments', 1, 'unknown reference', 'evt_9', $1::timestamptz - interval '2 hours')`},
	// Claims globex, concerns acme's operation; reviewed by a free-text name.
	{4, `INSERT INTO quarantine (target, delivery_id, reason, event_id, claimed_tenant, operation_id,
		operation_tenant, quarantined_at, resolved_at, resolved_by, resolution)
		SELECT 'payments', 1, 'tenant mismatch', 'evt_8', 'globex', operation_id::text, tenant_id,
			$1::timestamptz - interval '1 hour', $1::timestamptz - interval '30 minutes', 'ops', 'checked'
		FROM operation_ledger WHERE intent_ref = 'order-1'`},
	{5, `INSERT INTO tenant_callbacks (tenant_id, url, secret, created_at, updated_at)
		VALUES ('acme', 'https://acme.example/settle', sha256('secret'), $1::timestamptz - interval '7 days', $1::timestamptz - interval '7 days')`},
	{5, `INSERT INTO callback_outbox (tenant_id, operation_id, state, fence_token, created_at,
		next_attempt_at, attempts, delivered_at, last_status)
		SELECT tenant_id, operation_id, state, fence_token, updated_at,
			CASE state WHEN 'FAILED_TERMINAL' THEN $1::timestamptz - interval '1 minute' ELSE updated_at END, 1,
			CASE state WHEN 'SUCCEEDED' THEN updated_at END, CASE state WHEN 'SUCCEEDED' THEN 200 ELSE 503 END
		FROM operation_ledger WHERE state IN ('SUCCEEDED', 'FAILED_TERMINAL')`},
	{6, `INSERT INTO audit_findings (tenant_id, operation_id, target, kind, remote_ids, evidence, found_at)
		SELECT tenant_id, operation_id, target, 'duplicate', '["ch_4","ch_4b"]', '{"objects":2}', $1::timestamptz - interval '1 hour'
		FROM operation_ledger WHERE intent_ref = 'order-4'`},
	{6, `INSERT INTO audit_cursor (target, last_created_at, last_operation_id, updated_at)
		SELECT target, created_at, operation_id, $1 FROM operation_ledger WHERE intent_ref = 'order-4'`},
	{7, `INSERT INTO resolutions (tenant_id, operation_id, fence_token, to_state, remote_ref, reason,
		proposed_by, proposed_at)
		SELECT tenant_id, operation_id, fence_token, 'SUCCEEDED', 'ch_6', 'found in the dashboard', 'alice', $1::timestamptz - interval '5 minutes'
		FROM operation_ledger WHERE state = 'ESCALATED'`},
}

// TestMigrate_FromOlderSchemaWithData: a database that an older settle
// created and filled is brought up to date by Migrate (what `settle
// migrate` and `settle serve` run), its rows survive, and the store works
// on them.
func TestMigrate_FromOlderSchemaWithData(t *testing.T) {
	t.Parallel()
	for _, version := range []int64{1, 4, 7} {
		t.Run(fmt.Sprintf("From%05d", version), func(t *testing.T) {
			ctx := context.Background()
			clk := ledgertest.NewClock()
			now := clk.Now()
			pool := emptySchema(t)
			p := provider(t, pool)
			if _, err := p.UpTo(ctx, version); err != nil {
				t.Fatalf("migrate to %d: %v", version, err)
			}
			fillOld(ctx, t, pool, version, now)

			if err := postgres.Migrate(ctx, pool); err != nil {
				t.Fatal(err)
			}
			sources := p.ListSources()
			if got, err := p.GetDBVersion(ctx); err != nil || got != sources[len(sources)-1].Version {
				t.Fatalf("version after Migrate = %d, %v; want %d", got, err, sources[len(sources)-1].Version)
			}
			checkUpgraded(ctx, t, postgres.New(pool, clk.Now), version, now)
		})
	}
}

// emptySchema returns a pool on a new, empty schema, dropped at the end.
// (pgtest.Schema would migrate it to the newest version.)
func emptySchema(t *testing.T) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, pgtest.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "settle_migrate_test_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), pgtest.URL())
		if err != nil {
			t.Errorf("drop schema: %v", err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	cfg, err := postgres.ParseConfig(pgtest.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	return pgtest.Pool(t, cfg)
}

// provider is goose over the migrations Migrate embeds.
func provider(t *testing.T, pool *pgxpool.Pool) *goose.Provider {
	t.Helper()
	fsys, err := fs.Sub(migrations.Postgres, "postgres")
	if err != nil {
		t.Fatal(err)
	}
	db := stdlib.OpenDBFromPool(pool)
	t.Cleanup(func() { db.Close() })
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fillOld writes oldOps, their events and the rows of oldRows that the
// schema at version can hold.
func fillOld(ctx context.Context, t *testing.T, pool *pgxpool.Pool, version int64, now time.Time) {
	t.Helper()
	for _, o := range oldOps {
		created := now.Add(-o.age)
		_, err := pool.Exec(ctx, `INSERT INTO operation_ledger (tenant_id, operation_id, operation_type,
			intent_ref, target, payload, payload_hash, remote_key, state, fence_token, attempt_count,
			lease_expires_at, remote_ref, retry_window_end, next_reconcile_at, reason, created_at, updated_at)
			VALUES ('acme', $1, 'charge', $2, 'payments', $3, $4, $5, $6, $7::bigint, $7::bigint, $8, $9, $10, $11, $12, $13, $14)`,
			o.id(), fmt.Sprintf("order-%d", o.n), o.payload(), o.hash(), o.remoteKey(), string(o.state), o.fence,
			at(now, o.lease), o.remoteRef(), created.Add(24*time.Hour), at(now, o.reconcile), o.reason,
			created, created.Add(2*time.Second))
		if err != nil {
			t.Fatalf("op %d: %v", o.n, err)
		}
		from, to := o.events()
		for i := range to {
			_, err := pool.Exec(ctx, `INSERT INTO operation_events (tenant_id, operation_id, from_state,
				to_state, fence_token, actor, reason, at) VALUES ('acme', $1, nullif($2, ''), $3, $4, 'executor', '', $5)`,
				o.id(), from[i], to[i], min(int64(i), o.fence), created.Add(time.Duration(i)*time.Second))
			if err != nil {
				t.Fatalf("op %d event %d: %v", o.n, i, err)
			}
		}
	}
	for _, r := range oldRows {
		if r.version > version {
			continue
		}
		if _, err := pool.Exec(ctx, r.sql, []any{now}[:params(r.sql)]...); err != nil {
			t.Fatalf("%v\n%s", err, r.sql)
		}
	}
}

// checkUpgraded reads the old rows through the store and runs every loop's
// work on them (ledgertest.CheckUpgraded, shared by both stores).
func checkUpgraded(ctx context.Context, t *testing.T, s *postgres.Store, version int64, now time.Time) {
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
