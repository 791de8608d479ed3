package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"settle/ledger"
)

// figuresCmd prints a tenant's manager figures, as a table or as CSV.
type figuresCmd struct {
	dbOption `embed:""`
	Tenant   string        `help:"the tenant (required)"`
	Since    time.Duration `default:"720h" help:"how far back to look"`
	Days     int           `help:"whole UTC days ending today (instead of --since)"`
	From     string        `help:"first UTC day, YYYY-MM-DD (instead of --since)"`
	To       string        `help:"last UTC day, YYYY-MM-DD, included (with --from; today when absent)"`
	CSV      bool          `name:"csv" help:"print CSV (tenant,target,day,metric,value,counts) for export"`
	window   ledger.Window
}

// Help is the detail of settle figures --help.
func (figuresCmd) Help() string {
	return `The paper's "what to measure", per target: operations whose outcome became
uncertain (an episode: the first entry into UNKNOWN or ESCALATED, ending at
SUCCEEDED or FAILED_TERMINAL); those resolved automatically and those
resolved by people (through ESCALATED), each with the median and worst time
from the episode's start to the final state, and for people the time the
escalation took; escalations in the window, those open now and the oldest;
payload conflicts refused; duplicates found by audit. Times under a second
print in milliseconds; the CSV has a header and says what each row counts.
--days N is whole UTC days ending today, the console's window: the same
numbers as its page and CSV, read from the daily rollups.
--from and --to are UTC days (YYYY-MM-DD), both included, --to today when
absent: the console's /figures?from=…&to=… and its CSV, exactly.`
}

func (c *figuresCmd) check() error {
	switch {
	case c.Tenant == "":
		return usagef("--tenant is required")
	case c.Since <= 0:
		return usagef("--since must be positive")
	case c.Days < 0:
		return usagef("--days must not be negative")
	case c.Days > 0 && (c.From != "" || c.To != ""):
		return usagef("--days and --from/--to exclude each other")
	}
	now := time.Now()
	c.window = ledger.Window{Since: now.Add(-c.Since), Until: now}
	var err error
	switch {
	case c.From != "" || c.To != "":
		c.window, err = ledger.DatesEnding(c.From, c.To, now)
	case c.Days > 0:
		c.window = ledger.DaysEnding(now, c.Days)
	}
	return err
}

func (c *figuresCmd) runLedger(ctx context.Context, e *env, s *services) error {
	w := c.window
	store, stdout, asCSV, tenant := s.store, e.stdout, &c.CSV, &c.Tenant
	f, err := ledger.Figures(ctx, store, *tenant, w)
	if err != nil {
		return err
	}
	if *asCSV {
		return ledger.WriteFiguresCSV(stdout, f)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "tenant %s from %s until %s\n\n", shown(f.Tenant), f.Since.Format(time.RFC3339), f.Until.Format(time.RFC3339))
	times := func(m ledger.Measure) string {
		if m.Count == 0 {
			return "-"
		}
		return ledger.FigureDuration(m.Median) + " / " + ledger.FigureDuration(m.Worst)
	}
	for _, t := range f.Targets {
		total, day, most := 0, "-", 0
		for d, n := range t.StartedPerDay {
			total += n
			if n > most || (n == most && d > day) {
				day, most = d, n
			}
		}
		oldest := "-"
		if t.OldestEscalation != nil {
			oldest = t.OldestEscalation.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "target %s\n", shown(t.Target))
		fmt.Fprintf(tw, "  outcome became uncertain (entered UNKNOWN or ESCALATED)\t%d (busiest day %s)\n", total, day)
		fmt.Fprintf(tw, "  resolved automatically (final without ESCALATED)\t%d\n", t.Automatic.Count)
		fmt.Fprintf(tw, "    time to final state, median / worst\t%s\n", times(t.Automatic))
		fmt.Fprintf(tw, "  resolved by people (ESCALATED, then final after an approved resolution)\t%d\n", t.ByPeople.Count)
		fmt.Fprintf(tw, "    time to final state, median / worst\t%s\n", times(t.ByPeople))
		fmt.Fprintf(tw, "    time the escalation took (ESCALATED to final), median / worst\t%s\n", times(t.Escalation))
		fmt.Fprintf(tw, "  escalations in the window (entries into ESCALATED)\t%d\n", t.Escalated)
		fmt.Fprintf(tw, "  escalations open now\t%d (oldest since %s)\n", t.OpenEscalations, oldest)
	}
	oldest := "-"
	if f.OldestEscalation != nil {
		oldest = f.OldestEscalation.UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(tw, "\nescalations open now, all targets\t%d (oldest since %s)\n", f.OpenEscalations, oldest)
	fmt.Fprintf(tw, "payload conflicts refused\t%d\n", f.PayloadConflicts)
	fmt.Fprintf(tw, "duplicates found by audit\t%d\n", f.Duplicates)
	return tw.Flush()
}
