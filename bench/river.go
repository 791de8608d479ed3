package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// noopArgs is the job River runs: it carries nothing and does nothing.
type noopArgs struct{}

// Kind implements river.JobArgs.
func (noopArgs) Kind() string { return "noop" }

// noopWorker completes every job at once.
type noopWorker struct {
	river.WorkerDefaults[noopArgs]
}

// Work implements river.Worker.
func (noopWorker) Work(context.Context, *river.Job[noopArgs]) error { return nil }

// riverInsertBatch is how many jobs one InsertMany call carries: River's
// way of inserting many jobs is one call (one statement) per batch.
const riverInsertBatch = 1_000

// runRiver migrates River into s, starts a client with a no-op worker and
// times inserting c.jobs jobs with InsertMany until every one is completed.
func runRiver(ctx context.Context, s *schema, c config) (t timed, err error) {
	ctx, cancel := context.WithTimeout(ctx, runTimeout)
	defer cancel()
	driver := riverpgxv5.New(s.pool)
	migrator, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: quiet})
	if err != nil {
		return t, err
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return t, fmt.Errorf("migrate: %w", err)
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, noopWorker{})
	client, err := river.NewClient(driver, &river.Config{
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: c.workers}},
		Workers:           workers,
		FetchCooldown:     pollEvery,
		FetchPollInterval: 10 * pollEvery,
		Logger:            quiet,
	})
	if err != nil {
		return t, err
	}
	if err := client.Start(ctx); err != nil {
		return t, fmt.Errorf("start: %w", err)
	}
	defer func() {
		sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer scancel()
		_ = client.Stop(sctx)
	}()

	start := time.Now()
	batch := make([]river.InsertManyParams, 0, riverInsertBatch)
	for i := 0; i < c.jobs; i += riverInsertBatch {
		batch = batch[:0]
		for range min(riverInsertBatch, c.jobs-i) {
			batch = append(batch, river.InsertManyParams{Args: noopArgs{}})
		}
		if _, err := client.InsertMany(ctx, batch); err != nil {
			return t, fmt.Errorf("insert: %w", err)
		}
	}
	t.inserted = time.Since(start)
	if err := waitCount(ctx, s.pool, "SELECT count(*) FROM river_job WHERE state = 'completed'", c.jobs); err != nil {
		return t, err
	}
	t.done = time.Since(start)
	return t, nil
}

// quiet drops River's log lines, which would interleave with the figures.
var quiet = slog.New(slog.DiscardHandler)
