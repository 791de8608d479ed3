package sqlite

import (
	"context"
	"time"

	"settle/ledger"
	"settle/ledger/sqlite/internal/dbsqlc"
)

var _ ledger.EscalationStore = (*Store)(nil)

// notices converts rows of escalation_outbox: every notice is of an
// escalation.
func notices(rows []dbsqlc.EscalationOutbox, err error) ([]ledger.Notification, error) {
	if err != nil {
		return nil, err
	}
	out := make([]ledger.Notification, len(rows))
	for i, r := range rows {
		out[i] = notification(r.NoticeID, r.TenantID, r.OperationID, ledger.Escalated, r.FenceToken,
			r.Attempts, r.CreatedAt, r.NextAttemptAt, r.DeliveredAt, r.LastStatus, r.LastError, r.GaveUpAt)
	}
	return out, nil
}

// DigestExists implements ledger.NoticeDriver; days are stored as
// YYYY-MM-DD text.
func (d driver) DigestExists(ctx context.Context, team string, day time.Time) (bool, error) {
	return d.r.DigestExists(ctx, dbsqlc.DigestExistsParams{Team: team, Day: day.Format(time.DateOnly)})
}

// DigestInsert implements ledger.NoticeDriver.
func (d driver) DigestInsert(ctx context.Context, p ledger.DigestInsertParams) error {
	return d.w.DigestInsert(ctx, dbsqlc.DigestInsertParams{Team: p.Team, Day: p.Day.Format(time.DateOnly),
		At: micros(p.At)})
}
