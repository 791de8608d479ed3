package storetest_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"settle/ledger"
	"settle/ledger/postgres/pgtest"
	"settle/ledger/storetest"
)

// The schema-parity check: both dialects' migrations must describe the
// same tables, with the same columns, of the same type family and
// nullability, and the same indexes — read from the migrated databases
// themselves (information_schema and pg_index; pragma_table_info and
// pragma_index_list), not from the migration files.

// column is a column as both dialects can describe it: the family of its
// type (what it holds, not how the dialect spells it) and whether it may be
// NULL.
type column struct {
	family  string
	notNull bool
}

// schema is one migrated database: table → column, and table → its
// indexes as indexText.
type schema struct {
	tables  map[string]map[string]column
	indexes map[string][]string
	// stateCheck is operation_ledger's state CHECK as the database shows it.
	stateCheck string
}

// ignored are tables a migration tool or a dialect keeps for itself, and
// the few one dialect needs for a mechanism the other has built in.
func ignored(table string) bool {
	return table == "goose_db_version" || strings.HasPrefix(table, "sqlite_") || sqliteOnly[table] != ""
}

// sqliteOnly are SQLite's own tables, each with the reason.
var sqliteOnly = map[string]string{
	// PostgreSQL's retention and erasure set a transaction-local setting
	// that the delete-guard triggers read; SQLite has no such settings, so
	// they insert this table's one row inside their transaction instead.
	"retention_unlock": "stands in for PostgreSQL's transaction-local setting",
}

// pgFamilies maps information_schema.columns.data_type to a family.
var pgFamilies = map[string]string{
	"text": "text", "character varying": "text", "uuid": "text",
	"bigint": "integer", "integer": "integer", "smallint": "integer",
	"boolean":                  "boolean",
	"timestamp with time zone": "time",
	"date":                     "date",
	"jsonb":                    "json", "json": "json",
	"ARRAY": "array",
	"bytea": "blob",
}

// sqliteSpelling is how settle's SQLite schema stores each family: times
// as integer Unix microseconds (or seconds), booleans as 0/1, JSON, dates
// and arrays (JSON arrays) as text.
var sqliteSpelling = map[string]string{
	"text": "TEXT", "integer": "INTEGER", "boolean": "INTEGER", "time": "INTEGER",
	"date": "TEXT", "json": "TEXT", "array": "TEXT", "blob": "BLOB",
}

// indexText is how an index is compared: its name, uniqueness, whether it
// is partial, and its key columns in order ("expr" for an expression).
func indexText(name string, unique, partial bool, cols []string) string {
	var b strings.Builder
	if unique {
		b.WriteString("unique ")
	}
	if partial {
		b.WriteString("partial ")
	}
	b.WriteString(name + "(" + strings.Join(cols, ", ") + ")")
	return b.String()
}

func (s schema) add(table, col string, c column) {
	if s.tables[table] == nil {
		s.tables[table] = map[string]column{}
	}
	s.tables[table][col] = c
}

func readPostgres(t *testing.T, pool *pgxpool.Pool) schema {
	t.Helper()
	ctx := context.Background()
	s := schema{tables: map[string]map[string]column{}, indexes: map[string][]string{}}
	rows, err := pool.Query(ctx, `
SELECT table_name, column_name, data_type, is_nullable = 'NO'
  FROM information_schema.columns
 WHERE table_schema = current_schema()`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var table, col, typ string
		var notNull bool
		if err := rows.Scan(&table, &col, &typ, &notNull); err != nil {
			t.Fatal(err)
		}
		if ignored(table) {
			continue
		}
		family, ok := pgFamilies[typ]
		if !ok {
			t.Errorf("PostgreSQL %s.%s: type %q has no family here: add it to pgFamilies and sqliteSpelling", table, col, typ)
		}
		s.add(table, col, column{family: family, notNull: notNull})
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// Indexes made by CREATE INDEX, not those behind a PRIMARY KEY or
	// UNIQUE constraint, which each dialect names its own way.
	rows, err = pool.Query(ctx, `
SELECT t.relname, i.relname, x.indisunique, x.indpred IS NOT NULL,
       array_agg(coalesce(a.attname, 'expr') ORDER BY k.n)
  FROM pg_index AS x
  JOIN pg_class AS i ON i.oid = x.indexrelid
  JOIN pg_class AS t ON t.oid = x.indrelid
  JOIN pg_namespace AS ns ON ns.oid = t.relnamespace AND ns.nspname = current_schema()
 CROSS JOIN LATERAL unnest(x.indkey[0:x.indnkeyatts - 1]) WITH ORDINALITY AS k(attnum, n)
  LEFT JOIN pg_attribute AS a ON a.attrelid = t.oid AND a.attnum = k.attnum AND k.attnum > 0
 WHERE NOT EXISTS (SELECT 1 FROM pg_constraint AS c WHERE c.conindid = x.indexrelid)
 GROUP BY t.relname, i.relname, x.indisunique, x.indpred IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var table, index string
		var unique, partial bool
		var cols []string
		if err := rows.Scan(&table, &index, &unique, &partial, &cols); err != nil {
			t.Fatal(err)
		}
		if !ignored(table) {
			s.indexes[table] = append(s.indexes[table], indexText(index, unique, partial, cols))
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `
SELECT pg_get_constraintdef(c.oid) FROM pg_constraint AS c
 WHERE c.conrelid = 'operation_ledger'::regclass AND c.contype = 'c'
   AND pg_get_constraintdef(c.oid) LIKE '%state = ANY%'`).Scan(&s.stateCheck); err != nil {
		t.Fatalf("operation_ledger's state CHECK: %v", err)
	}
	return s
}

func readSQLite(t *testing.T, db *sql.DB) schema {
	t.Helper()
	s := schema{tables: map[string]map[string]column{}, indexes: map[string][]string{}}
	rows, err := db.Query(`
SELECT m.name, c.name, c.type, c."notnull" OR c.pk > 0
  FROM sqlite_schema AS m, pragma_table_info(m.name) AS c
 WHERE m.type = 'table'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var table, col, typ string
		var notNull bool
		if err := rows.Scan(&table, &col, &typ, &notNull); err != nil {
			t.Fatal(err)
		}
		if !ignored(table) {
			s.add(table, col, column{family: strings.ToUpper(typ), notNull: notNull})
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows, err = db.Query(`
SELECT m.name, l.name, l."unique", l.partial, group_concat(coalesce(i.name, 'expr'), ', ')
  FROM sqlite_schema AS m, pragma_index_list(m.name) AS l, pragma_index_xinfo(l.name) AS i
 WHERE m.type = 'table' AND l.origin = 'c' AND i.key = 1
 GROUP BY m.name, l.name, l."unique", l.partial`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var table, index, cols string
		var unique, partial bool
		if err := rows.Scan(&table, &index, &unique, &partial, &cols); err != nil {
			t.Fatal(err)
		}
		if !ignored(table) {
			s.indexes[table] = append(s.indexes[table], indexText(index, unique, partial, strings.Split(cols, ", ")))
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'operation_ledger'`).Scan(&s.stateCheck); err != nil {
		t.Fatal(err)
	}
	return s
}

// differences lists every way the two schemas disagree, one line each.
func differences(pg, lite schema) []string {
	var out []string
	tables := map[string]bool{}
	for n := range pg.tables {
		tables[n] = true
	}
	for n := range lite.tables {
		tables[n] = true
	}
	for table := range tables {
		p, l := pg.tables[table], lite.tables[table]
		switch {
		case p == nil:
			out = append(out, fmt.Sprintf("table %s: only in SQLite", table))
			continue
		case l == nil:
			out = append(out, fmt.Sprintf("table %s: only in PostgreSQL", table))
			continue
		}
		for col, pc := range p {
			lc, ok := l[col]
			switch {
			case !ok:
				out = append(out, fmt.Sprintf("%s.%s: only in PostgreSQL", table, col))
			case sqliteSpelling[pc.family] != lc.family:
				out = append(out, fmt.Sprintf("%s.%s: PostgreSQL holds %s (SQLite spells it %s) but SQLite declares %s",
					table, col, pc.family, sqliteSpelling[pc.family], lc.family))
			case pc.notNull != lc.notNull:
				out = append(out, fmt.Sprintf("%s.%s: NOT NULL is %v in PostgreSQL, %v in SQLite", table, col, pc.notNull, lc.notNull))
			}
		}
		for col := range l {
			if _, ok := p[col]; !ok {
				out = append(out, fmt.Sprintf("%s.%s: only in SQLite", table, col))
			}
		}
		pi, li := slices.Sorted(slices.Values(pg.indexes[table])), slices.Sorted(slices.Values(lite.indexes[table]))
		if !slices.Equal(pi, li) {
			out = append(out, fmt.Sprintf("%s's indexes: PostgreSQL %v, SQLite %v", table, pi, li))
		}
	}
	sort.Strings(out)
	return out
}

// migrated returns both dialects' schemas, freshly migrated, and handles
// on them for a test that changes one.
func migrated(t *testing.T) (*pgxpool.Pool, *sql.DB) {
	t.Helper()
	pool, err := pgxpool.NewWithConfig(context.Background(), pgtest.Schema(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	db, err := sql.Open("sqlite", "file:"+storetest.SQLiteFile(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return pool, db
}

func TestSchemaParity(t *testing.T) {
	t.Parallel()
	pool, db := migrated(t)
	pg, lite := readPostgres(t, pool), readSQLite(t, db)
	if len(pg.tables) < 20 {
		t.Fatalf("read %d PostgreSQL tables: the query reads the wrong schema", len(pg.tables))
	}
	for _, d := range differences(pg, lite) {
		t.Error(d)
	}
	// The state CHECK of both dialects names exactly ledger.States.
	quoted := regexp.MustCompile(`'([A-Z_]+)'`)
	for name, check := range map[string]string{"PostgreSQL": pg.stateCheck, "SQLite": lite.stateCheck} {
		if name == "SQLite" {
			// The table's SQL: the CHECK is the IN list after "state".
			i := strings.Index(check, "CHECK (state IN")
			if i < 0 {
				t.Fatalf("SQLite operation_ledger has no state CHECK: %s", check)
			}
			check = check[i : i+strings.Index(check[i:], ")")]
		}
		var got []ledger.State
		for _, m := range quoted.FindAllStringSubmatch(check, -1) {
			got = append(got, ledger.State(m[1]))
		}
		if !sameStates(got) {
			t.Errorf("%s's state CHECK names %v, ledger.States is %v", name, got, ledger.States)
		}
	}
}

// sameStates reports whether got is ledger.States in any order.
func sameStates(got []ledger.State) bool {
	a := slices.Clone(got)
	b := slices.Clone(ledger.States)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestSchemaParity_FindsDrift: the check is not vacuous — a column added
// on one side, a NOT NULL dropped on the other and an index missing are
// each reported.
func TestSchemaParity_FindsDrift(t *testing.T) {
	t.Parallel()
	pool, db := migrated(t)
	if _, err := db.Exec(`ALTER TABLE operation_ledger ADD COLUMN drifted TEXT`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DROP INDEX quarantine_open`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(context.Background(), `ALTER TABLE actions ALTER COLUMN reason DROP NOT NULL`); err != nil {
		t.Fatal(err)
	}
	got := differences(readPostgres(t, pool), readSQLite(t, db))
	want := []string{"operation_ledger.drifted: only in SQLite", "actions.reason: NOT NULL is false in PostgreSQL, true in SQLite",
		"quarantine's indexes"}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(d string) bool { return strings.HasPrefix(d, w) }) {
			t.Errorf("drift %q not reported; got %q", w, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d differences, want %d: %q", len(got), len(want), got)
	}
}

// TestStatesEverywhere: the API's State enum and the console's status
// classes name exactly ledger.States.
func TestStatesEverywhere(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../web/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas struct {
				State struct {
					Enum []ledger.State `json:"enum"`
				} `json:"State"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if got := doc.Components.Schemas.State.Enum; !sameStates(got) {
		t.Errorf("openapi.json's State enum is %v, ledger.States is %v", got, ledger.States)
	}
	css, err := os.ReadFile("../../static/files/style.css")
	if err != nil {
		t.Fatal(err)
	}
	var classes []ledger.State
	for _, m := range regexp.MustCompile(`\.status-([A-Z_]+)\b`).FindAllStringSubmatch(string(css), -1) {
		if !slices.Contains(classes, ledger.State(m[1])) {
			classes = append(classes, ledger.State(m[1]))
		}
	}
	if !sameStates(classes) {
		t.Errorf("style.css styles .status-%v, ledger.States is %v", classes, ledger.States)
	}
}
