// Package migrations embeds settle's SQL migrations, one directory per
// dialect, applied with goose by `settle migrate` and at `settle serve` start.
package migrations

import "embed"

// Postgres holds the PostgreSQL migrations under postgres/.
//
//go:embed postgres/*.sql
var Postgres embed.FS

// SQLite holds the SQLite migrations under sqlite/.
//
//go:embed sqlite/*.sql
var SQLite embed.FS
