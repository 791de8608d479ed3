// Package migrations embeds settle's SQL migrations, one directory per
// dialect, applied with goose by `settle migrate` and at `settle serve` start.
package migrations

import (
	"embed"
	"slices"
	"strconv"
	"strings"
)

// Postgres holds the PostgreSQL migrations under postgres/.
//
//go:embed postgres/*.sql
var Postgres embed.FS

// SQLite holds the SQLite migrations under sqlite/.
//
//go:embed sqlite/*.sql
var SQLite embed.FS

// PostgresVersions lists the versions of the PostgreSQL migrations,
// ascending: what a database must have applied for this settle.
func PostgresVersions() []int64 { return versions(Postgres, "postgres") }

// SQLiteVersions lists the versions of the SQLite migrations, ascending.
func SQLiteVersions() []int64 { return versions(SQLite, "sqlite") }

// versions reads the numbers the files in dir start with ("00022_…").
// The files are embedded and checked by the tests, so a name without a
// number is a build mistake and panics.
func versions(fsys embed.FS, dir string) []int64 {
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		panic(err)
	}
	var out []int64
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.ParseInt(num, 10, 64)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			panic("migrations: " + dir + "/" + e.Name() + " is not NNNNN_name.sql")
		}
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}
