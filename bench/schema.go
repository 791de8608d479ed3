package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// schema is one run's fresh PostgreSQL schema and a pool whose connections
// see only it (search_path), so that River and settle each start from empty
// tables, as neither leaves a trace for the other's run.
type schema struct {
	name  string
	pool  *pgxpool.Pool
	admin *pgxpool.Pool // outside the schema, to drop it
}

func freshSchema(ctx context.Context, url string) (*schema, error) {
	admin, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, err
	}
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	s := &schema{name: "bench_" + hex.EncodeToString(suffix[:]), admin: admin}
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+s.name); err != nil {
		admin.Close()
		return nil, fmt.Errorf("create schema: %w", err)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, errors.Join(err, s.drop())
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = s.name
	if s.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, errors.Join(err, s.drop())
	}
	return s, nil
}

// drop closes the pool and drops the schema with everything in it.
func (s *schema) drop() error {
	if s.pool != nil {
		s.pool.Close()
	}
	defer s.admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := s.admin.Exec(ctx, "DROP SCHEMA "+s.name+" CASCADE")
	return err
}

// waitCount polls query, a count, until it reaches n. Both sides are timed
// to the same poll so that neither gains from how completion is seen.
func waitCount(ctx context.Context, pool *pgxpool.Pool, query string, n int) error {
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		var got int
		if err := pool.QueryRow(ctx, query).Scan(&got); err != nil {
			return fmt.Errorf("count: %w", err)
		}
		if got >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d done: %w", got, n, ctx.Err())
		case <-t.C:
		}
	}
}

// pollEvery is how often a run checks whether all its jobs are done, and
// also how long each side's fetch loop may wait between looks for new work
// (River's FetchCooldown, settle's Executor.Idle): short beside a run of
// seconds, so that neither side is measured by its pauses.
const pollEvery = 5 * time.Millisecond

// runTimeout bounds one run, so a side that stalls fails the benchmark
// instead of hanging it.
const runTimeout = 3 * time.Minute
