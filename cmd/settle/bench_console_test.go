package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The short form of settle bench seed and settle bench console: 3,000
// operations over 20 tenants on each store, then every measure of the
// console bench, each response checked by the command itself (the status,
// where a look-up leads, rows on the page). What is asserted is that
// every measure ran and printed a row; the figures come from the long
// form (docs/performance.md), never from a timed test.
func TestBenchSeedConsole(t *testing.T) {
	t.Parallel()
	for name, url := range map[string]func(t *testing.T) string{
		"SQLite":   func(*testing.T) string { return "" },
		"Postgres": schemaURL,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db := []string{"--database-url", url(t)}
			if db[1] == "" {
				db = []string{"--sqlite", filepath.Join(t.TempDir(), "seed.db")}
			}
			out := runBench(t, append([]string{"bench", "seed", "--ops", "3000", "--tenants", "20"}, db...)...)
			if !regexp.MustCompile(`(?m)^seeded 3000 operations in \S+$`).MatchString(out) {
				t.Fatalf("no seeding time:\n%s", out)
			}
			// A second seed into the same ledger is refused.
			var o, errOut bytes.Buffer
			if code := run(context.Background(), append([]string{"bench", "seed", "--ops", "100", "--tenants", "2"}, db...), &o, &errOut); code != 1 ||
				!strings.Contains(errOut.String(), "already holds operations") {
				t.Errorf("second seed: exit %d, stderr %q", code, errOut.String())
			}

			out = runBench(t, append([]string{"bench", "console", "--runs", "3"}, db...)...)
			measures := consoleMeasures(seededSample{tenants: []string{"tenant-000", "tenant-019"}})
			for _, m := range measures {
				row := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(m.name) + ` +≤ \d+ ms +` + benchDuration + ` +` + benchDuration + ` +(PASS|OVER)$`)
				if strings.HasPrefix(m.name, "figures, 30 days of all") {
					row = regexp.MustCompile(`(?m)^figures, 30 days of all 20 tenants +≤ 500 ms +` + benchDuration + ` +` + benchDuration + ` +(PASS|OVER)$`)
				}
				if !row.MatchString(out) {
					t.Errorf("no row for %q", m.name)
				}
			}
			if !strings.Contains(out, "28 measures, ") || len(measures) != 28 {
				t.Errorf("want 28 measures (have %d):\n%s", len(measures), out)
			}
			if t.Failed() {
				t.Log(out)
			}
		})
	}
}

func runBench(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := run(context.Background(), args, &out, &errOut); code != 0 {
		t.Fatalf("settle %s: exit %d: %s\n%s", strings.Join(args[:2], " "), code, errOut.String(), out.String())
	}
	return out.String()
}

// Naming no database, or two, is a usage error before anything opens.
func TestBenchSeedConsole_Usage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"bench", "seed"}, {"bench", "console"},
		{"bench", "seed", "--sqlite", "x.db", "--database-url", "postgres://h/db"},
		{"bench", "seed", "--sqlite", "x.db", "--ops", "3", "--tenants", "5"},
		{"bench", "console", "--database-url", "sqlite:x.db"},
	} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), args, &out, &errOut); code != 2 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut.String())
		}
	}
}
