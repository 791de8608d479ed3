package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"settle/ledger"
	"settle/ledger/sqlite/internal/dbsqlc"
)

var _ ledger.LeaderStore = (*Store)(nil)

// LeaderUpsert implements ledger.LeaderDriver. Several processes may share
// one SQLite file; the single writer serialises their attempts.
func (d driver) LeaderUpsert(ctx context.Context, p ledger.LeaderUpsertParams) (bool, error) {
	_, err := d.w.LeaderUpsert(ctx, dbsqlc.LeaderUpsertParams{Duty: p.Duty, Holder: p.Holder,
		Now: micros(p.Now), ExpiresAt: micros(p.ExpiresAt)})
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// LeaderDelete implements ledger.LeaderDriver.
func (d driver) LeaderDelete(ctx context.Context, duty, holder string) error {
	return d.w.LeaderDelete(ctx, dbsqlc.LeaderDeleteParams{Duty: duty, Holder: holder})
}

// LeaderLive implements ledger.LeaderDriver.
func (d driver) LeaderLive(ctx context.Context, duty string, now time.Time) (ledger.Leader, bool, error) {
	row, err := d.r.LeaderLive(ctx, dbsqlc.LeaderLiveParams{Duty: duty, Now: micros(now)})
	if errors.Is(err, sql.ErrNoRows) {
		return ledger.Leader{}, false, nil
	}
	if err != nil {
		return ledger.Leader{}, false, err
	}
	return ledger.Leader{Holder: row.Holder, ElectedAt: fromMicros(row.ElectedAt), ExpiresAt: fromMicros(row.ExpiresAt)}, true, nil
}
