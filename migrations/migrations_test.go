package migrations

import (
	"slices"
	"testing"
)

// Both dialects have the same migrations, numbered from 1.
func TestVersions(t *testing.T) {
	t.Parallel()
	pg, lite := PostgresVersions(), SQLiteVersions()
	if len(pg) == 0 || pg[0] != 1 || !slices.IsSorted(pg) {
		t.Fatalf("postgres versions %v", pg)
	}
	if !slices.Equal(pg, lite) {
		t.Fatalf("postgres %v and sqlite %v differ", pg, lite)
	}
}
