package sqlite

import (
	"context"
	"database/sql"
	"sync"

	"settle/ledger/sqlite/internal/dbsqlc"
)

// maxCachedStatements bounds a cache: the statements sqlc compiles are a
// few hundred, and the spliced listings (reads.go) one text per
// combination of filters; past the bound a statement is prepared for its
// one call, as without the cache.
const maxCachedStatements = 1024

// stmtCache keeps one prepared statement per statement text for one pool.
// Without it database/sql prepares every statement again on each call:
// SQLite parses and plans it, and for settle's larger statements (the
// batch insert and record, each a few CTEs over JSON) that was a
// measurable share of a call (docs/performance.md, "Prepared statements
// on SQLite"). A *sql.Stmt of a pool is prepared lazily on each of the
// pool's connections and again on a new one; a transaction reuses the one
// prepared on its connection (sql.Tx.StmtContext).
// SQLite re-prepares a statement by itself when the schema changes.
type stmtCache struct {
	db *sql.DB

	mu     sync.Mutex
	stmts  map[string]*sql.Stmt
	wanted map[string]bool // run unprepared in a transaction: see want
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, stmts: map[string]*sql.Stmt{}}
}

// lookup returns query's prepared statement, or nil when it has none.
func (c *stmtCache) lookup(query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stmts[query]
}

// stmt returns query's prepared statement, preparing it on the pool on
// first use; nil (with no error) when the cache is full.
func (c *stmtCache) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	c.mu.Lock()
	s, ok := c.stmts[query]
	full := len(c.stmts) >= maxCachedStatements
	c.mu.Unlock()
	if ok || full {
		return s, nil
	}
	s, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if had, ok := c.stmts[query]; ok { // prepared meanwhile by another call
		s.Close()
		return had, nil
	}
	c.stmts[query] = s
	return s, nil
}

// want notes a statement a transaction ran unprepared. Preparing on the
// pool needs a connection of its own, and a transaction of the single
// writer holds the only one; so the writer's transaction runs a new
// statement as it is, and prepareWanted prepares it once the transaction
// has given the connection back.
func (c *stmtCache) want(query string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.stmts[query]; !ok && len(c.wanted) < maxCachedStatements {
		if c.wanted == nil {
			c.wanted = map[string]bool{}
		}
		c.wanted[query] = true
	}
}

// prepareWanted prepares what want noted. A failure is left for the
// statement's next call to meet and report.
func (c *stmtCache) prepareWanted(ctx context.Context) {
	c.mu.Lock()
	var queries []string
	for q := range c.wanted {
		queries = append(queries, q)
	}
	c.wanted = nil
	c.mu.Unlock()
	for _, q := range queries {
		_, _ = c.stmt(ctx, q)
	}
}

// close closes every cached statement; the pool's Close follows.
func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, s := range c.stmts {
		s.Close()
		delete(c.stmts, q)
	}
}

// cachedDB is a pool whose statements come from its cache.
type cachedDB struct{ c *stmtCache }

var _ dbsqlc.DBTX = cachedDB{}

func (d cachedDB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	s, err := d.c.stmt(ctx, query)
	if err != nil || s == nil {
		return d.c.db.ExecContext(ctx, query, args...)
	}
	return s.ExecContext(ctx, args...)
}

func (d cachedDB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	s, err := d.c.stmt(ctx, query)
	if err != nil || s == nil {
		return d.c.db.QueryContext(ctx, query, args...)
	}
	return s.QueryContext(ctx, args...)
}

// QueryRowContext falls back to the pool's own on a preparation error,
// which then reports that error from Scan (a *sql.Row cannot be made
// with one).
func (d cachedDB) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	s, err := d.c.stmt(ctx, query)
	if err != nil || s == nil {
		return d.c.db.QueryRowContext(ctx, query, args...)
	}
	return s.QueryRowContext(ctx, args...)
}

func (d cachedDB) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return d.c.db.PrepareContext(ctx, query)
}

// cachedTx is a transaction of the cache's pool whose statements are the
// cache's, bound to the transaction's connection; one the cache does not
// hold yet runs unprepared (see want).
type cachedTx struct {
	tx *sql.Tx
	c  *stmtCache
}

var _ dbsqlc.DBTX = cachedTx{}

func (t cachedTx) stmt(ctx context.Context, query string) *sql.Stmt {
	s := t.c.lookup(query)
	if s == nil {
		t.c.want(query)
		return nil
	}
	return t.tx.StmtContext(ctx, s)
}

func (t cachedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s := t.stmt(ctx, query); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return t.tx.ExecContext(ctx, query, args...)
}

func (t cachedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := t.stmt(ctx, query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return t.tx.QueryContext(ctx, query, args...)
}

func (t cachedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s := t.stmt(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return t.tx.QueryRowContext(ctx, query, args...)
}

func (t cachedTx) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return t.tx.PrepareContext(ctx, query)
}
