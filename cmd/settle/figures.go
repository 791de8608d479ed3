package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"settle/ledger"
)

const figuresUsage = `usage: settle figures --tenant NAME [--days N | --since DURATION | --from DATE [--to DATE]] [--csv]

  The paper's "what to measure", per target: operations entering UNKNOWN per
  day, time from UNKNOWN to resolution (median, worst), escalations and the
  oldest open one, payload conflicts, duplicates found by audit.
  --days N is whole UTC days ending today, the console's window: the same
  numbers as its page and CSV, read from the daily rollups.
  --from and --to are UTC days (YYYY-MM-DD), both included, --to today when
  absent: the console's /figures?from=…&to=… and its CSV, exactly.
`

// figures prints a tenant's manager figures, as a table or as CSV.
func figures(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := withUsage(flag.NewFlagSet("settle figures", flag.ContinueOnError), figuresUsage)
	dbURL := dbFlag(fs)
	tenant := fs.String("tenant", "", "the tenant (required)")
	window := fs.Duration("since", 30*24*time.Hour, "how far back to look")
	days := fs.Int("days", 0, "whole UTC days ending today (instead of --since)")
	from := fs.String("from", "", "first UTC day, YYYY-MM-DD (instead of --since)")
	to := fs.String("to", "", "last UTC day, YYYY-MM-DD, included (with --from; today when absent)")
	asCSV := fs.Bool("csv", false, "print CSV (tenant,target,metric,value) for export")
	pos, err := parseInterspersed(fs, args, stdout, stderr)
	if err != nil {
		return err
	}
	if *tenant == "" || len(pos) != 0 || *window <= 0 || *days < 0 || (*days > 0 && (*from != "" || *to != "")) {
		fmt.Fprint(stderr, figuresUsage)
		return errUsage
	}
	now := time.Now()
	w := ledger.Window{Since: now.Add(-*window), Until: now}
	switch {
	case *from != "" || *to != "":
		if w, err = ledger.DatesEnding(*from, *to, now); err != nil {
			return err
		}
	case *days > 0:
		w = ledger.DaysEnding(now, *days)
	}
	store, _, err := openStore(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	f, err := ledger.Figures(ctx, store, *tenant, w)
	if err != nil {
		return err
	}
	if *asCSV {
		return ledger.WriteFiguresCSV(stdout, f)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "tenant %s from %s until %s\n\n", shown(f.Tenant), f.Since.Format(time.RFC3339), f.Until.Format(time.RFC3339))
	fmt.Fprintln(tw, "TARGET\tUNKNOWN ENTRIES\tBUSIEST DAY\tRESOLVED\tMEDIAN\tWORST\tESCALATED")
	for _, t := range f.Targets {
		total, day, most := 0, "-", 0
		for d, n := range t.UnknownPerDay {
			total += n
			if n > most || (n == most && d > day) {
				day, most = d, n
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t%s\t%d\n", shown(t.Target), total, day, t.Resolved,
			t.Median.Round(time.Second), t.Worst.Round(time.Second), t.Escalated)
	}
	oldest := "-"
	if f.OldestEscalation != nil {
		oldest = f.OldestEscalation.Format(time.RFC3339)
	}
	fmt.Fprintf(tw, "\nopen escalations\t%d (oldest since %s)\n", f.OpenEscalations, oldest)
	fmt.Fprintf(tw, "payload conflicts\t%d\n", f.PayloadConflicts)
	fmt.Fprintf(tw, "duplicates found by audit\t%d\n", f.Duplicates)
	return tw.Flush()
}
