// Command bench runs River and settle, each with a no-op worker, over the
// same number of jobs on the same PostgreSQL, alternating River, settle,
// River, settle…, and prints each run's rate and, last, the median of the
// rounds' settle/River ratios (issue 28).
//
// It is a module of its own so that River never becomes a dependency of
// settle: settle is required through a replace of the parent directory.
//
//	cd bench && go run . --database-url postgres://…
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"time"
)

// config is what one invocation measures.
type config struct {
	url     string
	jobs    int
	rounds  int
	workers int
	// creators is how many goroutines create settle's operations at once,
	// as that many API requests would; the ledger group-commits their
	// creates. (settle has no create-many call: River's InsertMany has no
	// counterpart but concurrency.)
	creators int
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var c config
	fs.StringVar(&c.url, "database-url", os.Getenv("TEST_DATABASE_URL"), "postgres:// URL; each run gets a fresh schema, dropped afterwards (default $TEST_DATABASE_URL)")
	fs.IntVar(&c.jobs, "jobs", 10_000, "jobs (River) and operations (settle) per run")
	fs.IntVar(&c.rounds, "rounds", 3, "rounds, each one River run then one settle run")
	fs.IntVar(&c.workers, "workers", 64, "concurrent jobs: River's MaxWorkers and settle's Executor.Workers")
	fs.IntVar(&c.creators, "creators", 32, "goroutines creating settle's operations at once (group-committed)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case c.url == "":
		return errors.New("--database-url (or TEST_DATABASE_URL) is required")
	case c.jobs <= 0 || c.rounds <= 0 || c.workers <= 0 || c.creators <= 0:
		return errors.New("--jobs, --rounds, --workers and --creators must be positive")
	}
	fmt.Fprintf(w, "%d jobs per run, %d rounds, %d workers; River inserts %d per InsertMany, settle creates from %d goroutines\n",
		c.jobs, c.rounds, c.workers, riverInsertBatch, c.creators)
	var ratios []float64
	for round := 1; round <= c.rounds; round++ {
		river, err := measure(ctx, w, round, "River", c, runRiver)
		if err != nil {
			return err
		}
		settle, err := measure(ctx, w, round, "settle", c, runSettle)
		if err != nil {
			return err
		}
		ratios = append(ratios, settle/river)
	}
	fmt.Fprintf(w, "settle/river ratio: %.2f\n", median(ratios))
	return nil
}

// measure runs one side in a fresh schema and prints its rate.
func measure(ctx context.Context, w io.Writer, round int, name string, c config,
	side func(context.Context, *schema, config) (timed, error)) (perSecond float64, err error) {
	s, err := freshSchema(ctx, c.url)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	defer func() {
		if derr := s.drop(); err == nil && derr != nil {
			err = fmt.Errorf("%s: drop schema: %w", name, derr)
		}
	}()
	t, err := side(ctx, s, c)
	if err != nil {
		return 0, fmt.Errorf("round %d, %s: %w", round, name, err)
	}
	perSecond = float64(c.jobs) / t.done.Seconds()
	fmt.Fprintf(w, "round %d  %-6s  %6d in %7s  %8.0f jobs/s  (all inserted after %s)\n", round, name, c.jobs,
		t.done.Round(time.Millisecond), perSecond, t.inserted.Round(time.Millisecond))
	return perSecond, nil
}

// timed is one run, both durations from its first insert: until the last
// insert returned, and until the last job was seen done.
type timed struct {
	inserted, done time.Duration
}

// median is the middle of xs, or the mean of the two middle values.
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
