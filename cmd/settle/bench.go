package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"settle/internal/timing"
	"settle/ledger"
)

// benchCmd is `settle bench`: measurements, not tests.
type benchCmd struct {
	Lease   benchLeaseCmd   `cmd:"" help:"time the reconciler's lease, the executor's claim and the sweeper against growing backlogs"`
	Seed    benchSeedCmd    `cmd:"" help:"load a realistic ledger of many operations (COPY on PostgreSQL) for settle bench console"`
	Console benchConsoleCmd `cmd:"" help:"time the console's pages over real HTTP against a seeded ledger"`
}

// The batches the loops ask for: the reconciler leases 50, the executor
// claims up to its default batch (reconciler.Executor.Batch), and the
// sweeper finds what those claims left expired.
const (
	benchLeaseBatch = 50
	benchClaimBatch = 100
	benchLease      = time.Minute
)

// benchLeaseCmd is `settle bench lease`.
type benchLeaseCmd struct {
	DatabaseURL string  `name:"database-url" help:"postgres://… to measure PostgreSQL (in a fresh schema, dropped afterwards); empty means a temporary SQLite file"`
	Backlogs    string  `default:"1000,10000,100000,1000000" help:"backlog sizes, in operations, comma-separated; the first is the anchor"`
	DueShare    float64 `name:"due-share" default:"0.1" help:"share of the backlog in UNKNOWN and due for reconciliation"`
	Runs        int     `default:"11" help:"runs of each measure at each backlog"`
	sizes       []int
}

// Help is the detail of settle bench lease --help.
func (benchLeaseCmd) Help() string {
	return `For each backlog size, seeds that many operations into a fresh schema of
--database-url's database (migrated, rows loaded with COPY) or into a fresh
temporary SQLite file: --due-share of them UNKNOWN and due for
reconciliation, a twentieth (at least 100) PREPARED, the rest SUCCEEDED,
over four tenants and two targets. Then it times, --runs times each,
through the store the loops call: one LeaseUnknown of 50 (the reconciler),
one ClaimBatch of 100 (the executor) and one SweepExpired of those 100
after their leases end (the sweeper), putting back with direct writes what
each run consumed so that every run sees the same backlog. It prints one
row per backlog: median and p95 of each, and the median as a multiple of
the same measure at the first backlog; and whether the lease at the
largest backlog costs within 2× of the first (issue 27's target). It
measures; it does not fail on the target.`
}

func (c *benchLeaseCmd) check() error {
	switch {
	case c.DatabaseURL != "" && !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://"):
		return usagef("--database-url must be a postgres:// URL (without one, a temporary SQLite file is used)")
	case c.DueShare <= 0 || c.DueShare >= 1:
		return usagef("--due-share must be between 0 and 1, not %g", c.DueShare)
	case c.Runs <= 0:
		return usagef("--runs must be positive")
	}
	c.sizes = nil
	for _, f := range strings.Split(c.Backlogs, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return usagef("--backlogs: %q is not a positive number of operations", f)
		}
		b := c.backlog(n)
		if b.due < benchLeaseBatch || b.due+b.prepared > n {
			return usagef("--backlogs: %d operations with --due-share %g leave %d due and %d PREPARED: a lease needs %d due and a claim %d PREPARED",
				n, c.DueShare, b.due, b.prepared, benchLeaseBatch, benchClaimBatch)
		}
		c.sizes = append(c.sizes, n)
	}
	return nil
}

func (c *benchLeaseCmd) backlog(n int) backlog {
	return backlog{n: n, due: int(math.Round(float64(n) * c.DueShare)), prepared: max(n/20, benchClaimBatch),
		end: time.Now().Add(-time.Hour).Truncate(time.Second)}
}

// benchRow is one backlog's measures.
type benchRow struct {
	backlog                backlog
	seeded                 time.Duration
	lease, claim, sweep    timing.Times
	leased, claimed, swept int // the fewest operations one run moved
}

func (c *benchLeaseCmd) run(ctx context.Context, e *env) error {
	store := "SQLite (a temporary file)"
	if c.DatabaseURL != "" {
		store = "PostgreSQL (a fresh schema)"
	}
	fmt.Fprintf(e.stdout, "settle bench lease on %s: %d runs each, due share %g\n", store, c.Runs, c.DueShare)
	var rows []benchRow
	for _, n := range c.sizes {
		r, err := c.measure(ctx, c.backlog(n))
		if err != nil {
			return fmt.Errorf("backlog %d: %w", n, err)
		}
		fmt.Fprintf(e.stdout, "backlog %d: seeded in %s; every run leased %d, claimed %d, swept %d\n",
			n, r.seeded.Round(time.Millisecond), r.leased, r.claimed, r.swept)
		rows = append(rows, r)
	}
	printBench(e.stdout, rows)
	return nil
}

// measure seeds b in a fresh store, times the three measures and drops it.
func (c *benchLeaseCmd) measure(ctx context.Context, b backlog) (r benchRow, err error) {
	r.backlog = b
	t0 := time.Now()
	var be *benchBackend
	if c.DatabaseURL != "" {
		be, err = openPostgresBench(ctx, c.DatabaseURL, b)
	} else {
		be, err = openSQLiteBench(ctx, b)
	}
	if err != nil {
		return r, err
	}
	defer func() {
		if cerr := be.close(); err == nil && cerr != nil {
			err = fmt.Errorf("clean up: %w", cerr)
		}
	}()
	r.seeded = time.Since(t0)
	fewest := func(have *int, got int) {
		if *have == 0 || got < *have {
			*have = got
		}
	}
	var ops []ledger.Operation
	if r.lease, err = timing.Repeat(c.Runs, func() (err error) {
		ops, err = be.st.LeaseUnknown(ctx, benchLeaseBatch, benchLease)
		return err
	}, func() error {
		fewest(&r.leased, len(ops))
		return be.unlease(ctx, ops)
	}); err != nil {
		return r, fmt.Errorf("lease: %w", err)
	}
	// The claim and the sweep share their runs: what one claims, the
	// other sweeps once the leases have ended, and both are put back.
	var claimTimes, sweepTimes []time.Duration
	for range c.Runs {
		t := time.Now()
		ops, err := be.st.ClaimBatch(ctx, benchClaimBatch, benchLease)
		if err != nil {
			return r, fmt.Errorf("claim: %w", err)
		}
		claimTimes = append(claimTimes, time.Since(t))
		fewest(&r.claimed, len(ops))
		if err := be.expire(ctx, ops); err != nil {
			return r, fmt.Errorf("end the leases: %w", err)
		}
		t = time.Now()
		n, err := be.st.SweepExpired(ctx)
		if err != nil {
			return r, fmt.Errorf("sweep: %w", err)
		}
		sweepTimes = append(sweepTimes, time.Since(t))
		fewest(&r.swept, n)
		if err := be.unclaim(ctx, ops); err != nil {
			return r, fmt.Errorf("put back the claimed: %w", err)
		}
	}
	r.claim, r.sweep = timing.Sorted(claimTimes), timing.Sorted(sweepTimes)
	if r.leased < benchLeaseBatch || r.claimed < benchClaimBatch || r.swept < r.claimed {
		return r, fmt.Errorf("a run moved too few operations: leased %d of %d, claimed %d of %d, swept %d of %d",
			r.leased, benchLeaseBatch, r.claimed, benchClaimBatch, r.swept, r.claimed)
	}
	return r, nil
}

// printBench writes the table, the first row the anchor of the ratios,
// and the verdict on the lease's target.
func printBench(w io.Writer, rows []benchRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "backlog\tdue\tlease %d: median\tp95\t×\tclaim %d: median\tp95\t×\tsweep %d: median\tp95\t×\t\n",
		benchLeaseBatch, benchClaimBatch, benchClaimBatch)
	a := rows[0]
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%d\t", r.backlog.n, r.backlog.due)
		for _, m := range []struct{ t, anchor timing.Times }{{r.lease, a.lease}, {r.claim, a.claim}, {r.sweep, a.sweep}} {
			fmt.Fprintf(tw, "%s\t%s\t%.1f×\t", timing.Short(m.t.Median()), timing.Short(m.t.P95()),
				timing.Ratio(m.t.Median(), m.anchor.Median()))
		}
		fmt.Fprintln(tw)
	}
	_ = tw.Flush()
	last := rows[len(rows)-1]
	ratio := timing.Ratio(last.lease.Median(), a.lease.Median())
	verdict := "not within 2×"
	if ratio <= 2 {
		verdict = "within 2×"
	}
	fmt.Fprintf(w, "lease of %d at backlog %d: %.1f× its cost at %d, %s (issue 27's target: within 2×)\n",
		benchLeaseBatch, last.backlog.n, ratio, a.backlog.n, verdict)
}
