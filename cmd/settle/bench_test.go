package main

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// The short form of settle bench lease: two small backlogs on each store,
// a table of one row per backlog whose every run moved full batches, the
// anchor's ratios 1.0×, the verdict line, and (on PostgreSQL) no schema
// left behind. The figures themselves come from the long form
// (docs/performance.md).
func TestBenchLease(t *testing.T) {
	t.Parallel()
	for name, url := range map[string]func(t *testing.T) string{
		"SQLite":   func(*testing.T) string { return "" },
		"Postgres": schemaURL,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db := url(t)
			args := []string{"bench", "lease", "--backlogs", "200,2000", "--due-share", "0.25", "--runs", "3"}
			if db != "" {
				args = append(args, "--database-url", db)
			}
			var out, errOut bytes.Buffer
			if code := run(context.Background(), args, &out, &errOut); code != 0 {
				t.Fatalf("exit %d: %s\n%s", code, errOut.String(), out.String())
			}
			checkBenchTable(t, out.String(), []int{200, 2000}, []int{50, 500})
			if db == "" {
				return
			}
			c, err := pgx.Connect(context.Background(), db)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(context.Background())
			var left int
			if err := c.QueryRow(context.Background(),
				`SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'settle_bench_%'`).Scan(&left); err != nil || left != 0 {
				t.Errorf("bench schemas left behind: %d (%v)", left, err)
			}
		})
	}
}

var (
	benchDuration = `(\d+ µs|\d+\.\d\d ms)`
	benchMeasure  = benchDuration + ` +` + benchDuration + ` +(\d+\.\d)×`
	benchRowRE    = regexp.MustCompile(`^ *(\d+) +(\d+) +` + benchMeasure + ` +` + benchMeasure + ` +` + benchMeasure + ` *$`)
)

func checkBenchTable(t *testing.T, out string, backlogs, due []int) {
	t.Helper()
	for _, n := range backlogs {
		want := fmt.Sprintf("backlog %d: seeded in ", n)
		moved := fmt.Sprintf("; every run leased %d, claimed %d, swept %d\n", benchLeaseBatch, benchClaimBatch, benchClaimBatch)
		i := strings.Index(out, want)
		if i < 0 || !strings.Contains(out[i:], moved) || strings.Index(out[i:], moved) > strings.Index(out[i:], "\n")+1 {
			t.Errorf("no %q…%q line:\n%s", want, moved, out)
		}
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	header := -1
	for i, l := range lines {
		if strings.Contains(l, "backlog  ") && strings.Contains(l, "lease 50: median") &&
			strings.Contains(l, "claim 100: median") && strings.Contains(l, "sweep 100: median") {
			header = i
		}
	}
	if header < 0 || len(lines) != header+len(backlogs)+2 {
		t.Fatalf("want a header, %d rows and a verdict:\n%s", len(backlogs), out)
	}
	for k, l := range lines[header+1 : header+1+len(backlogs)] {
		m := benchRowRE.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("row %q does not read backlog, due, then median, p95 and ratio three times", l)
			continue
		}
		if m[1] != fmt.Sprint(backlogs[k]) || m[2] != fmt.Sprint(due[k]) {
			t.Errorf("row %d: backlog %s due %s, want %d and %d", k, m[1], m[2], backlogs[k], due[k])
		}
		if k == 0 && (m[5] != "1.0" || m[8] != "1.0" || m[11] != "1.0") {
			t.Errorf("the anchor's ratios are %s, %s, %s, want 1.0", m[5], m[8], m[11])
		}
	}
	verdict := regexp.MustCompile(fmt.Sprintf(`^lease of 50 at backlog %d: \d+\.\d× its cost at %d, (not )?within 2× `,
		backlogs[len(backlogs)-1], backlogs[0]))
	if !verdict.MatchString(lines[len(lines)-1]) {
		t.Errorf("verdict line %q", lines[len(lines)-1])
	}
}

// A backlog too small for a full lease is a usage error, before anything
// is seeded.
func TestBenchLease_TooSmall(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"bench", "lease", "--backlogs", "1000,100"}, &out, &errOut); code != 2 ||
		!strings.Contains(errOut.String(), "100 operations with --due-share 0.1 leave 10 due") {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
}
