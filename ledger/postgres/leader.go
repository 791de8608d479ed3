package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"settle/ledger"
	"settle/ledger/postgres/internal/dbsqlc"
)

var _ ledger.LeaderStore = (*Store)(nil)

// LeaderUpsert implements ledger.LeaderDriver.
func (d driver) LeaderUpsert(ctx context.Context, p ledger.LeaderUpsertParams) (bool, error) {
	_, err := d.q.LeaderUpsert(ctx, dbsqlc.LeaderUpsertParams(p))
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// LeaderDelete implements ledger.LeaderDriver.
func (d driver) LeaderDelete(ctx context.Context, duty, holder string) error {
	return d.q.LeaderDelete(ctx, dbsqlc.LeaderDeleteParams{Duty: duty, Holder: holder})
}

// LeaderLive implements ledger.LeaderDriver.
func (d driver) LeaderLive(ctx context.Context, duty string, now time.Time) (ledger.Leader, bool, error) {
	row, err := d.q.LeaderLive(ctx, dbsqlc.LeaderLiveParams{Duty: duty, Now: now})
	if errors.Is(err, pgx.ErrNoRows) {
		return ledger.Leader{}, false, nil
	}
	if err != nil {
		return ledger.Leader{}, false, err
	}
	return ledger.Leader{Holder: row.Holder, ElectedAt: row.ElectedAt.UTC(), ExpiresAt: row.ExpiresAt.UTC()}, true, nil
}
