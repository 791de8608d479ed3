// Package postgres is the ledger.Store on PostgreSQL through pgx/v5. It is
// the production store: any number of settle replicas may share one
// database. Every hot statement is one round trip: state change and event
// log row are written by one statement with a data-modifying CTE.
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"settle/ledger"
	"settle/migrations"
)

// Store implements ledger.Store on a pgx pool.
type Store struct {
	// Ledger holds the rules of the methods that have moved onto the
	// driver (ledger.Driver); they are promoted from it.
	*ledger.Ledger
	pool *pgxpool.Pool
}

var (
	_ ledger.Store      = (*Store)(nil)
	_ ledger.Observable = (*Store)(nil)
)

// ParseConfig parses a postgres:// URL into a pool configuration with
// settle's session defaults. Its errors never quote the URL.
func ParseConfig(url string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("invalid PostgreSQL URL: %s", redact(err))
	}
	// pgx prepares and caches statements, and the server may keep a
	// statement's generic plan after five executions (plan_cache_mode
	// auto, the default): TestPlans checks every statement's generic plan,
	// and the few whose plans depend on their arguments are planned for
	// them on every execution (customPlans, plancache.go). A statistics
	// update re-plans a cached statement, so a plan made while a table was
	// small does not outlive the next ANALYZE. A URL may still set
	// plan_cache_mode.
	return cfg, nil
}

// Open connects to the database at url and checks that it answers. It does
// not migrate; call Migrate.
func Open(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cfg, err := ParseConfig(url)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		cc := cfg.ConnConfig
		return nil, fmt.Errorf("cannot connect to PostgreSQL at %s:%d (database %s, user %s): %s",
			cc.Host, cc.Port, cc.Database, cc.User, connectCause(err))
	}
	return pool, nil
}

// connectCause is why a connection failed, in a few words: the server's own
// message, "timed out", or the distinct innermost errors of pgx's chain. It
// never holds the password: pgx's errors name only user and database.
func connectCause(err error) string {
	var (
		pgErr   *pgconn.PgError
		timeout interface{ Timeout() bool }
	)
	switch {
	case errors.As(err, &pgErr):
		return pgErr.Message
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &timeout) && timeout.Timeout():
		return "timed out"
	}
	var causes []string
	var walk func(error)
	walk = func(err error) {
		if many, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range many.Unwrap() {
				walk(e)
			}
			return
		}
		if inner := errors.Unwrap(err); inner != nil {
			walk(inner)
			return
		}
		if msg := err.Error(); !slices.Contains(causes, msg) {
			causes = append(causes, msg)
		}
	}
	walk(err)
	return strings.Join(causes, "; ")
}

// redact describes a URL parse error without quoting the URL, which may hold
// a password.
func redact(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return "expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE"
}

// Migrate applies the embedded PostgreSQL migrations. Concurrent callers
// (replicas starting together) serialise on an advisory lock.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	return migrate(ctx, db)
}

func migrate(ctx context.Context, db *sql.DB) error {
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	fsys, err := subFS(migrations.Postgres, "postgres")
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys, goose.WithSessionLocker(locker))
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// New returns a Store over pool. now is the clock used for every lease,
// deadline and timestamp; nil means time.Now. Passing the time from Go rather
// than using the database's now() lets tests move time without sleeping.
func New(pool *pgxpool.Pool, now func() time.Time) *Store {
	return &Store{Ledger: ledger.New(newDriver(pool), now), pool: pool}
}

// Pool returns the store's pool, for callers that want to open their own
// transactions (see CreateTx).
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Ping implements ledger.Store.
func (s *Store) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }

// Close closes the pool.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}
