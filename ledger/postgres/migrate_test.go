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
// work on them.
func checkUpgraded(ctx context.Context, t *testing.T, s *postgres.Store, version int64, now time.Time) {
	t.Helper()
	for _, o := range oldOps {
		op, err := s.Get(ctx, "acme", o.id())
		if err != nil {
			t.Fatalf("op %d: %v", o.n, err)
		}
		if op.State != o.state || op.Fence != o.fence || op.IntentRef != fmt.Sprintf("order-%d", o.n) ||
			string(op.Payload) != string(o.payload()) || op.RemoteKey != o.remoteKey() || op.Reason != o.reason ||
			!op.CreatedAt.Equal(now.Add(-o.age)) {
			t.Errorf("op %d after the upgrade: %+v", o.n, op)
		}
		// last_sent_at (00003) is NULL for rows written before it existed.
		switch {
		case version < 3 || o.state == ledger.Prepared:
			if op.LastSentAt != nil {
				t.Errorf("op %d: last sent %v, want none", o.n, op.LastSentAt)
			}
		case op.LastSentAt == nil || !op.LastSentAt.Equal(o.sentAt(now)):
			t.Errorf("op %d: last sent %v, want %v", o.n, op.LastSentAt, o.sentAt(now))
		}
		evs, err := s.Events(ctx, "acme", o.id())
		if _, to := o.events(); err != nil || len(evs) != len(to) {
			t.Errorf("op %d: %d events, %v; want %d", o.n, len(evs), err, len(to))
		}
	}
	page, err := s.List(ctx, ledger.ListFilter{Tenant: "acme"})
	if err != nil || len(page.Operations) != len(oldOps) || page.Operations[0].ID != oldOps[len(oldOps)-1].id() {
		t.Fatalf("list: %d operations, %v", len(page.Operations), err)
	}
	if ops, err := s.Find(ctx, "acme", "ch_4"); err != nil || len(ops) != 1 || ops[0].ID != oldOps[3].id() {
		t.Errorf("find by remote reference: %v, %v", ops, err)
	}
	if n, err := s.PayloadConflicts(ctx, "acme", now.Add(-time.Hour)); err != nil || n != 1 {
		t.Errorf("payload conflicts = %d, %v", n, err)
	}

	// The API: the same intent is the old operation; a new one is created.
	if op, created, err := s.Create(ctx, ledger.NewOperation{Tenant: "acme", Type: "charge", IntentRef: "order-1",
		Target: "payments", Payload: oldOps[0].payload()}); err != nil || created || op.ID != oldOps[0].id() {
		t.Fatalf("create the old intent again: %s created=%v, %v", op.ID, created, err)
	}
	if _, _, err := s.Create(ctx, ledger.NewOperation{Tenant: "acme", Type: "charge", IntentRef: "order-7",
		Target: "payments", Payload: []byte(`{"amount":7}`)}); err != nil {
		t.Fatal(err)
	}

	// The executor claims the old PREPARED operation (its stored payload
	// still matches its hash) and the new one, and records them.
	claimed, err := s.ClaimBatch(ctx, 10, time.Minute)
	if err != nil || len(claimed) != 2 || claimed[0].ID != oldOps[0].id() {
		t.Fatalf("claimed %d, %v", len(claimed), err)
	}
	for _, op := range claimed {
		if _, err := s.Record(ctx, ledger.Outcome{Tenant: op.Tenant, OperationID: op.ID, Fence: op.Fence,
			From: ledger.InFlight, To: ledger.Succeeded, RemoteRef: "ch_new_" + op.IntentRef,
			Actor: ledger.ActorExecutor}); err != nil {
			t.Fatal(err)
		}
	}
	// The sweeper and the reconciler take over the old IN_FLIGHT and UNKNOWN.
	if n, err := s.SweepExpired(ctx); err != nil || n != 1 {
		t.Fatalf("swept %d, %v", n, err)
	}
	leased, err := s.LeaseUnknown(ctx, 10, time.Minute)
	if err != nil || len(leased) != 2 {
		t.Fatalf("leased %d, %v", len(leased), err)
	}
	for _, op := range leased {
		if _, err := s.Record(ctx, ledger.Outcome{Tenant: op.Tenant, OperationID: op.ID, Fence: op.Fence,
			From: ledger.Unknown, To: ledger.FailedTerminal, Reason: "not found at the target",
			Actor: ledger.ActorReconciler}); err != nil {
			t.Fatal(err)
		}
	}
	// The manual resolution of the old ESCALATED operation: the old open
	// proposal, or one made now when the old version had none.
	var proposal ledger.Resolution
	if version >= 7 {
		open, err := s.Resolutions(ctx, "acme", true)
		if err != nil || len(open) != 1 {
			t.Fatalf("open proposals: %d, %v", len(open), err)
		}
		proposal = open[0]
	} else if proposal, err = s.Propose(ctx, ledger.Resolution{Tenant: "acme", OperationID: oldOps[5].id(),
		To: ledger.Succeeded, RemoteRef: "ch_6", Reason: "found in the dashboard", ProposedBy: "alice"}); err != nil {
		t.Fatal(err)
	}
	if op, err := s.Approve(ctx, "acme", proposal.ID, "bob"); err != nil || op.State != ledger.Succeeded {
		t.Fatalf("approve: %v", err)
	}
	ts, err := s.Transitions(ctx, "acme", now.Add(-24*time.Hour))
	if err != nil || len(ts) < len(oldOps) {
		t.Errorf("transitions: %d, %v", len(ts), err)
	}

	// Tables an older version did not have start empty and work.
	tokens, err := s.ListTokens(ctx)
	if want := map[bool]int{true: 1, false: 0}[version >= 2]; err != nil || len(tokens) != want {
		t.Errorf("tokens: %d, %v; want %d", len(tokens), err, want)
	}
	h := sha256.Sum256([]byte("stl_old"))
	if _, err := s.TokenByHash(ctx, h[:]); version >= 2 && err != nil {
		t.Errorf("old token: %v", err)
	}
	deliveries, err := s.ClaimDeliveries(ctx, 10, time.Minute)
	if want := map[bool]int{true: 1, false: 0}[version >= 4]; err != nil || len(deliveries) != want {
		t.Errorf("deliveries: %d, %v; want %d", len(deliveries), err, want)
	}
	if _, dup, err := s.Receive(ctx, "payments", []byte(`{"id":"evt_0"}`)); err != nil || dup != (version >= 4) {
		t.Errorf("redelivery of an old delivery: duplicate=%v, %v", dup, err)
	}
	if q, err := s.ListQuarantine(ctx, true); err != nil || len(q) != map[bool]int{true: 1, false: 0}[version >= 4] {
		t.Errorf("quarantine: %d, %v", len(q), err)
	}
	if version >= 5 {
		if _, err := s.GetCallback(ctx, "acme"); err != nil {
			t.Errorf("old callback: %v", err)
		}
		// The old pending notification, and those of today's transitions
		// into final states (two claims, two reconciler verdicts, one
		// approval).
		ns, err := s.ClaimNotifications(ctx, 100, time.Minute)
		if err != nil || len(ns) != 6 {
			t.Errorf("notifications: %d, %v", len(ns), err)
		}
	}
	findings, err := s.Findings(ctx, "acme", now.Add(-24*time.Hour))
	if want := map[bool]int{true: 1, false: 0}[version >= 6]; err != nil || len(findings) != want {
		t.Errorf("findings: %d, %v; want %d", len(findings), err, want)
	}
	if _, err := s.AuditPosition(ctx, "payments"); (err == nil) != (version >= 6) {
		t.Errorf("audit position: %v", err)
	}
}
