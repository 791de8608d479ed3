// Package migrations embeds settle's SQL migrations, one directory per
// dialect, applied with goose by `settle migrate` and at `settle serve` start.
package migrations

import (
	"embed"
	"io/fs"
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

// Latest returns the newest migration version in fsys (Postgres or
// SQLite): the number each file name starts with. The go/no-go gate
// compares it with the live database's version.
func Latest(fsys embed.FS) int64 {
	var latest int64
	_ = fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := d.Name()
		end := strings.IndexByte(name, '_')
		if end <= 0 {
			return nil
		}
		if v, err := strconv.ParseInt(name[:end], 10, 64); err == nil && v > latest {
			latest = v
		}
		return nil
	})
	return latest
}
