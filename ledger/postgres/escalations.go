package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"settle/ledger"
	"settle/ledger/postgres/internal/dbsqlc"
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

// DigestExists implements ledger.NoticeDriver.
func (d driver) DigestExists(ctx context.Context, team string, day time.Time) (bool, error) {
	return d.q.DigestExists(ctx, dbsqlc.DigestExistsParams{Team: team, Day: pgtype.Date{Time: day, Valid: true}})
}

// DigestInsert implements ledger.NoticeDriver.
func (d driver) DigestInsert(ctx context.Context, p ledger.DigestInsertParams) error {
	return d.q.DigestInsert(ctx, dbsqlc.DigestInsertParams{Team: p.Team, Day: pgtype.Date{Time: p.Day, Valid: true},
		At: p.At})
}
