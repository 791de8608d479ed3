package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/postgres"
	"settle/ledger/postgres/pgtest"
	"settle/ledger/sqlite"
)

// figureStore is what both adapters implement for the figures.
type figureStore interface {
	ledger.Store
	ledger.FigureSource
}

// `settle figures --csv` prints, byte for byte, what ledger.WriteFiguresCSV
// writes of ledger.Figures for the same store and window, the function
// and the numbers the console's page and /figures.csv show: on both
// stores, over a week of two targets' history in which every figure
// counts something (ledgertest.SeedFigures), for --days (whole UTC days,
// from the rollups) and for --from/--to, which cuts the history.
func TestFigures_CSVIsWriteFiguresCSV(t *testing.T) {
	t.Parallel()
	for name, open := range map[string]func(t *testing.T, now func() time.Time) (figureStore, string){
		"SQLite": func(t *testing.T, now func() time.Time) (figureStore, string) {
			path := filepath.Join(t.TempDir(), "settle.db")
			s, err := sqlite.Open(context.Background(), path, now)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s, "sqlite:" + path
		},
		"Postgres": func(t *testing.T, now func() time.Time) (figureStore, string) {
			url := pgtest.DatabaseURL(t)
			cfg, err := postgres.ParseConfig(url)
			if err != nil {
				t.Fatal(err)
			}
			return postgres.New(pgtest.Pool(t, cfg), now), url
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			clk := ledgertest.NewClockAt(time.Now().Add(-ledgertest.FiguresSpan))
			s, db := open(t, clk.Now)
			ledgertest.SeedFigures(t, s, clk, "acme")

			today := time.Now().UTC()
			day := func(n int) string { return today.AddDate(0, 0, n).Format(time.DateOnly) }
			entries := map[string]int{}
			for _, c := range []struct {
				args   []string
				window func(now time.Time) (ledger.Window, error)
			}{
				{[]string{"--days", "7"}, func(now time.Time) (ledger.Window, error) { return ledger.DaysEnding(now, 7), nil }},
				{[]string{"--days", "30"}, func(now time.Time) (ledger.Window, error) { return ledger.DaysEnding(now, 30), nil }},
				{[]string{"--from", day(-5), "--to", day(-2)}, func(now time.Time) (ledger.Window, error) {
					return ledger.DatesEnding(day(-5), day(-2), now)
				}},
				{[]string{"--from", day(-3)}, func(now time.Time) (ledger.Window, error) {
					return ledger.DatesEnding(day(-3), "", now)
				}},
			} {
				args := append([]string{"figures", "--tenant", "acme", "--csv", "--database-url", db}, c.args...)
				out, err := exec.Command(binary, args...).Output()
				if err != nil {
					t.Fatalf("settle figures %s: %v", strings.Join(c.args, " "), err)
				}
				w, err := c.window(time.Now())
				if err != nil {
					t.Fatal(err)
				}
				f, err := ledger.Figures(ctx, s, "acme", w)
				if err != nil {
					t.Fatal(err)
				}
				var want bytes.Buffer
				if err := ledger.WriteFiguresCSV(&want, f); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(out, want.Bytes()) {
					t.Fatalf("settle figures %s --csv:\n%s\nWriteFiguresCSV:\n%s", strings.Join(c.args, " "), out, want.Bytes())
				}
				entries[strings.Join(c.args, " ")] = unknownEntries(t, out)
			}
			// The windows differ, so the equality above is about each
			// window's own numbers: a month counts all 17 episodes, the
			// week all but the first day's (and the second day's, early in
			// a UTC day), the dates fewer.
			if week, month, dates := entries["--days 7"], entries["--days 30"], entries["--from "+day(-5)+" --to "+day(-2)]; week < 15 || month != 17 || dates == 0 || dates >= week {
				t.Fatalf("episodes started: %v", entries)
			}
			// The table says what each figure counts, with SeedFigures'
			// numbers by hand.
			out, err := exec.Command(binary, "figures", "--tenant", "acme", "--days", "30", "--database-url", db).Output()
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{
				"target payments\n",
				"  resolved automatically (final without ESCALATED)  6\n",
				"    time to final state, median / worst  3 min 30 s / 24 h 30 min\n",
				"  resolved by people (ESCALATED, then final after an approved resolution)  2\n",
				"    time to final state, median / worst  1 h 23 min / 2 h 35 min\n",
				"    time the escalation took (ESCALATED to final), median / worst  20 min / 30 min\n",
				"  escalations in the window (entries into ESCALATED)  3\n",
				"  escalations open now  1 (oldest since ",
				"target refunds\n",
				"    time to final state, median / worst  10 min 23 s / 30 min\n",
				"    time the escalation took (ESCALATED to final), median / worst  17 min / 17 min\n",
				"escalations open now, all targets  2 (oldest since ",
				"payload conflicts refused  3\n",
			} {
				if !strings.Contains(strings.Join(strings.Fields(string(out)), " ")+"\n", strings.Join(strings.Fields(want), " ")) {
					t.Errorf("settle figures lacks %q:\n%s", want, out)
				}
			}
		})
	}
	if err := exec.Command(binary, "figures", "--tenant", "acme", "--from", "2001-01-01", "--to", "2001-01-02",
		"--days", "7", "--database-url", "sqlite:"+filepath.Join(t.TempDir(), "settle.db")).Run(); err == nil {
		t.Fatal("--days with --from was accepted")
	}
}

// unknownEntries sums the daily episodes_started rows of a figures CSV.
func unknownEntries(t *testing.T, out []byte) int {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range recs {
		if r[3] == "episodes_started" && r[2] != "" {
			v, err := strconv.Atoi(r[4])
			if err != nil {
				t.Fatal(err)
			}
			n += v
		}
	}
	return n
}
