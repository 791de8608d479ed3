// Package sqlite is the ledger.Store on an embedded SQLite file through the
// pure-Go modernc.org/sqlite driver. It is settle's default store for trying
// it on one machine: writes go through a single connection in WAL mode (one
// writer, many readers), and a busy timeout lets a second process on the
// same file wait its turn rather than fail.
package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"strings"
	"time"

	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"settle/ledger"
	"settle/ledger/sqlite/internal/dbsqlc"
	"settle/migrations"
)

// Store implements ledger.Store on SQLite.
type Store struct {
	// Ledger holds the rules of the methods that have moved onto the
	// driver (ledger.Driver); they are promoted from it.
	*ledger.Ledger
	w      *sql.DB // the single writer
	r      *sql.DB // readers
	wc, rc *stmtCache
	now    func() time.Time
}

var (
	_ ledger.Store      = (*Store)(nil)
	_ ledger.Observable = (*Store)(nil)
)

// Open opens (creating if needed) the SQLite file at path, applies the
// embedded migrations and returns a Store whose clock is now (nil means
// time.Now).
func Open(ctx context.Context, path string, now func() time.Time) (*Store, error) {
	return open(ctx, path, now, true)
}

// Connect opens the SQLite file at path as Open does but leaves its schema
// alone: check it with Schema. Commands other than settle migrate and
// settle serve use it, so that only those change the schema.
func Connect(ctx context.Context, path string, now func() time.Time) (*Store, error) {
	return open(ctx, path, now, false)
}

func open(ctx context.Context, path string, now func() time.Time, migrating bool) (*Store, error) {
	if now == nil {
		now = time.Now
	}
	dsn := func(txlock string) string {
		q := url.Values{}
		q.Add("_pragma", "busy_timeout(10000)")
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(FULL)") // a 201 means the row survives power loss
		q.Add("_pragma", "foreign_keys(1)")
		q.Set("_txlock", txlock)
		return "file:" + path + "?" + q.Encode()
	}
	w, err := sql.Open("sqlite", dsn("immediate"))
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	if err := connect(ctx, w); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: cannot open %s: %w", path, err)
	}
	if migrating {
		if err := migrate(ctx, w); err != nil {
			w.Close()
			return nil, err
		}
	}
	r, err := sql.Open("sqlite", dsn("deferred"))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	r.SetMaxOpenConns(4)
	r.SetMaxIdleConns(4) // a reader's connection keeps its prepared statements
	wc, rc := newStmtCache(w), newStmtCache(r)
	return &Store{Ledger: ledger.New(newDriver(w, r, wc, rc), now), w: w, r: r, wc: wc, rc: rc, now: now}, nil
}

// connect opens the first connection. Switching a new file to WAL needs an
// exclusive lock that SQLite does not wait for (the busy timeout does not
// apply), so a second process opening the same new file at that instant
// gets SQLITE_BUSY: wait briefly and try again.
func connect(ctx context.Context, db *sql.DB) error {
	var err error
	for attempt := 0; attempt < 50; attempt++ {
		if err = db.PingContext(ctx); err == nil || !strings.Contains(err.Error(), "SQLITE_BUSY") {
			return err
		}
		time.Sleep(time.Duration(20+rand.IntN(80)) * time.Millisecond)
	}
	return err
}

// migrate applies the embedded migrations. Two processes opening a new
// file together (settle serve and settle token create, say) can both see a
// migration as pending; the loser's transaction fails, is rolled back, and
// a retry finds the migration applied.
func migrate(ctx context.Context, db *sql.DB) error {
	fsys, err := fs.Sub(migrations.SQLite, "sqlite")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, fsys)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for attempt := 0; ; attempt++ {
		_, err = p.Up(ctx)
		if err == nil || attempt == 20 || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Duration(50+rand.IntN(100)) * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// Schema reads which migrations the file has applied, from goose's table,
// without changing anything. A file without the table has none applied.
func (s *Store) Schema(ctx context.Context) (ledger.Schema, error) {
	out := ledger.Schema{Known: migrations.SQLiteVersions()}
	applied, err := dbsqlc.New(s.r).SchemaVersionsApplied(ctx)
	if err != nil {
		if strings.Contains(err.Error(), "no such table") {
			return out, nil
		}
		return out, fmt.Errorf("read schema version: %w", err)
	}
	out.Applied = applied
	return out, nil
}

// Ping implements ledger.Store.
func (s *Store) Ping(ctx context.Context) error { return s.w.PingContext(ctx) }

// Close closes both connection pools.
func (s *Store) Close() error {
	s.rc.close()
	s.wc.close()
	errR := s.r.Close()
	if err := s.w.Close(); err != nil {
		return err
	}
	return errR
}

// Times are INTEGER microseconds since the epoch.
func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

func fromNull(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMicros(v.Int64)
	return &t
}
