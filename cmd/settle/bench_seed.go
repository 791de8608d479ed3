package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"settle/ledger"
	"settle/ledger/postgres"
	"settle/ledger/sqlite"
)

// The backlog settle bench lease measures: n operations written directly
// (through the ledger a million would take many minutes), spread evenly
// over four tenants and two targets and over n seconds ending an hour ago;
// due of them UNKNOWN and due for reconciliation (next_reconcile_at a
// minute after they were created), prepared PREPARED, the rest SUCCEEDED.
// The states are interleaved so that every part of the table holds each.

var (
	benchTenants  = []string{"bench-a", "bench-b", "bench-c", "bench-d"}
	benchTargets  = []string{"payments", "transfers"}
	benchPayload  = []byte("{}")
	benchHash     = sha256.Sum256(benchPayload)
	benchColumns  = []string{"tenant_id", "operation_id", "operation_type", "intent_ref", "target", "payload", "payload_hash", "remote_key", "state", "fence_token", "attempt_count", "remote_ref", "retry_window_end", "retry_window_micros", "first_claimed_at", "next_reconcile_at", "reason", "created_at", "updated_at"}
	benchWindow   = 24 * time.Hour
	benchDueAfter = time.Minute // next_reconcile_at less created_at of the due rows
)

// backlog is the shape of one seeded backlog.
type backlog struct {
	n, due, prepared int
	end              time.Time // the newest row's created_at
}

// row is operation i (0 the oldest) in neutral types: ids as 16 bytes,
// times as time.Time, absent values nil.
func (b backlog) row(i int) []any {
	created := b.end.Add(-time.Duration(b.n-1-i) * time.Second)
	var id, key [16]byte
	_, _ = rand.Read(id[:])
	_, _ = rand.Read(key[:])
	state, fence, attempts := ledger.Succeeded, int64(1), 1
	var remoteRef, firstClaimed, next any = fmt.Sprintf("ch_bench_%d", i), created, nil
	reason := ""
	// due rows before i: i*due/n, so row i is due when the count steps.
	if (i+1)*b.due/b.n > i*b.due/b.n {
		state, remoteRef, next, reason = ledger.Unknown, nil, created.Add(benchDueAfter), ledger.ReasonLeaseExpired
	} else if j, m := i-i*b.due/b.n, b.n-b.due; (j+1)*b.prepared/m > j*b.prepared/m {
		state, fence, attempts, remoteRef, firstClaimed = ledger.Prepared, 0, 0, nil, nil
	}
	return []any{benchTenants[i%len(benchTenants)], id, "charge", fmt.Sprintf("bench-%d", i),
		benchTargets[(i/len(benchTenants))%len(benchTargets)], benchPayload, benchHash[:], key, string(state),
		fence, attempts, remoteRef, created.Add(benchWindow), benchWindow.Microseconds(), firstClaimed, next,
		reason, created, created}
}

// benchBackend is one store holding a seeded backlog, with the direct
// writes that put back what a measure consumed.
type benchBackend struct {
	st interface {
		LeaseUnknown(ctx context.Context, n int, lease time.Duration, skipTargets ...string) ([]ledger.Operation, error)
		ClaimBatch(ctx context.Context, n int, lease time.Duration, byTarget ...ledger.TargetLease) ([]ledger.Operation, error)
		SweepExpired(ctx context.Context) (int, error)
	}
	// unlease makes leased UNKNOWN operations due again, as seeded.
	unlease func(ctx context.Context, ops []ledger.Operation) error
	// expire ends the leases of claimed operations, for the sweeper.
	expire func(ctx context.Context, ops []ledger.Operation) error
	// unclaim puts claimed (then swept) operations back to PREPARED.
	unclaim func(ctx context.Context, ops []ledger.Operation) error
	close   func() error
}

// The restoring writes, with the dialect's placeholders for the keys
// (PostgreSQL: two arrays; SQLite: a list of pairs) and its time
// arithmetic.
const (
	unleaseSet = `next_reconcile_at = created_at + %s, lease_expires_at = NULL`
	unclaimSet = `state = 'PREPARED', lease_expires_at = NULL, next_reconcile_at = NULL, reason = '',
		fence_token = 0, attempt_count = 0, first_claimed_at = NULL, last_sent_at = NULL`
)

// openPostgresBench makes a fresh schema in url's database, migrates it and
// seeds b with COPY; close drops the schema.
func openPostgresBench(ctx context.Context, url string, b backlog) (*benchBackend, error) {
	admin, err := postgres.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	schema := "settle_bench_" + hex.EncodeToString(suffix[:])
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		return nil, fmt.Errorf("create schema: %w", err)
	}
	var pool *pgxpool.Pool
	drop := func() error {
		if pool != nil {
			pool.Close()
		}
		defer admin.Close()
		_, err := admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		return err
	}
	fail := func(err error) (*benchBackend, error) { _ = drop(); return nil, err }
	cfg, err := postgres.ParseConfig(url)
	if err != nil {
		return fail(err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	if pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return fail(err)
	}
	if err := postgres.Migrate(ctx, pool); err != nil {
		return fail(err)
	}
	i := 0
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"operation_ledger"}, benchColumns, pgx.CopyFromFunc(func() ([]any, error) {
		if i == b.n {
			return nil, nil
		}
		i++
		return b.row(i - 1), nil
	})); err != nil {
		return fail(fmt.Errorf("seed: %w", err))
	}
	// The state a running ledger's table is in once autovacuum has been by.
	if _, err := pool.Exec(ctx, "VACUUM (ANALYZE) operation_ledger"); err != nil {
		return fail(err)
	}
	keyed := func(set string, extra ...any) func(context.Context, []ledger.Operation) error {
		return func(ctx context.Context, ops []ledger.Operation) error {
			tenants, ids := make([]string, len(ops)), make([]string, len(ops))
			for k, op := range ops {
				tenants[k], ids[k] = op.Tenant, op.ID
			}
			_, err := pool.Exec(ctx, `UPDATE operation_ledger o SET `+set+`
				FROM unnest($1::text[], $2::text[]) AS k(t, i)
				WHERE o.tenant_id = k.t AND o.operation_id = k.i::uuid`, append([]any{tenants, ids}, extra...)...)
			return err
		}
	}
	return &benchBackend{
		st:      postgres.New(pool, time.Now),
		unlease: keyed(fmt.Sprintf(unleaseSet, "interval '1 microsecond' * "+fmt.Sprint(benchDueAfter.Microseconds()))),
		expire: func(ctx context.Context, ops []ledger.Operation) error {
			return keyed(`lease_expires_at = $3`, time.Now().Add(-time.Second))(ctx, ops)
		},
		unclaim: keyed(unclaimSet),
		close:   drop,
	}, nil
}

// openSQLiteBench creates a SQLite file in a temporary directory and
// seeds b with multi-row INSERTs, many rows a transaction; close removes
// the directory.
func openSQLiteBench(ctx context.Context, b backlog) (*benchBackend, error) {
	dir, err := os.MkdirTemp("", "settle-bench-")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "bench.db")
	st, err := sqlite.Open(ctx, path, time.Now)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		st.Close()
		os.RemoveAll(dir)
		return nil, err
	}
	closeAll := func() error {
		err := db.Close()
		if e := st.Close(); err == nil {
			err = e
		}
		if e := os.RemoveAll(dir); err == nil {
			err = e
		}
		return err
	}
	if err := seedSQLite(ctx, db, b); err != nil {
		_ = closeAll()
		return nil, fmt.Errorf("seed: %w", err)
	}
	keyed := func(set string, extra ...any) func(context.Context, []ledger.Operation) error {
		return func(ctx context.Context, ops []ledger.Operation) error {
			if len(ops) == 0 {
				return nil
			}
			args := append([]any{}, extra...)
			pairs := make([]string, len(ops))
			for k, op := range ops {
				pairs[k] = "(?, ?)"
				args = append(args, op.Tenant, op.ID)
			}
			_, err := db.ExecContext(ctx, `UPDATE operation_ledger SET `+set+`
				WHERE (tenant_id, operation_id) IN (VALUES `+strings.Join(pairs, ", ")+`)`, args...)
			return err
		}
	}
	return &benchBackend{
		st:      st,
		unlease: keyed(fmt.Sprintf(unleaseSet, fmt.Sprint(benchDueAfter.Microseconds()))),
		expire: func(ctx context.Context, ops []ledger.Operation) error {
			return keyed(`lease_expires_at = ?`, time.Now().Add(-time.Second).UnixMicro())(ctx, ops)
		},
		unclaim: keyed(unclaimSet),
		close:   closeAll,
	}, nil
}

// seedSQLite writes b in statements of sqliteRows rows, sqliteTx rows a
// transaction, with ids and times in SQLite's forms (text, microseconds).
func seedSQLite(ctx context.Context, db *sql.DB, b backlog) error {
	const sqliteRows, sqliteTx = 500, 100000
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(benchColumns)), ", ") + ")"
	insert := func(tx *sql.Tx, from, to int) error {
		args := make([]any, 0, (to-from)*len(benchColumns))
		for i := from; i < to; i++ {
			for _, v := range b.row(i) {
				switch v := v.(type) {
				case [16]byte:
					h := hex.EncodeToString(v[:])
					args = append(args, h[:8]+"-"+h[8:12]+"-"+h[12:16]+"-"+h[16:20]+"-"+h[20:])
				case time.Time:
					args = append(args, v.UnixMicro())
				default:
					args = append(args, v)
				}
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO operation_ledger (`+strings.Join(benchColumns, ", ")+`) VALUES `+
			strings.TrimSuffix(strings.Repeat(one+", ", to-from), ", "), args...)
		return err
	}
	for start := 0; start < b.n; start += sqliteTx {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		for from := start; from < min(start+sqliteTx, b.n); from += sqliteRows {
			if err := insert(tx, from, min(from+sqliteRows, start+sqliteTx, b.n)); err != nil {
				_ = tx.Rollback()
				return err
			}
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	_, err := db.ExecContext(ctx, "ANALYZE")
	return err
}
