package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"settle/ledger"
	"settle/ledger/postgres/internal/dbsqlc"
)

var _ ledger.ResolutionStore = (*Store)(nil)

// resolutionOf is a row of a resolutions query as a ledger.Resolution.
func resolutionOf(r dbsqlc.ResolutionListRow) ledger.Resolution {
	return ledger.Resolution{ID: r.ResolutionID, Tenant: r.TenantID, OperationID: r.OperationID, Fence: r.FenceToken,
		To: ledger.State(r.ToState), RemoteRef: r.RemoteRef, Reason: r.Reason, ProposedBy: r.ProposedBy,
		ProposedByName: r.ProposedByName, ProposedAt: r.ProposedAt.UTC(), DecidedBy: r.DecidedBy,
		DecidedByName: r.DecidedByName, DecidedAt: utcOrNil(r.DecidedAt), Decision: r.Decision,
		DecisionWhy: r.DecisionWhy, Kind: ledger.ResolutionKind(r.Kind)}
}

// ResolutionInsert implements ledger.ResolutionDriver.
func (d driver) ResolutionInsert(ctx context.Context, r ledger.Resolution) (ledger.Resolution, error) {
	got, err := d.q.ResolutionInsert(ctx, dbsqlc.ResolutionInsertParams{TenantID: r.Tenant, OperationID: r.OperationID,
		FenceToken: r.Fence, ToState: string(r.To), RemoteRef: r.RemoteRef, Reason: r.Reason, ProposedBy: r.ProposedBy,
		ProposedByName: r.ProposedByName, ProposedAt: r.ProposedAt, Kind: string(r.Kind)})
	if err != nil {
		return r, duplicate(err)
	}
	return resolutionOf(dbsqlc.ResolutionListRow(got)), nil
}

// ResolutionLockOpen implements ledger.ResolutionDriver with FOR UPDATE.
func (d driver) ResolutionLockOpen(ctx context.Context, tenant string, id int64) (ledger.Resolution, bool, error) {
	r, err := d.q.ResolutionLockOpen(ctx, dbsqlc.ResolutionLockOpenParams{TenantID: tenant, ResolutionID: id})
	if errors.Is(err, pgx.ErrNoRows) {
		return ledger.Resolution{}, false, nil
	}
	return resolutionOf(dbsqlc.ResolutionListRow(r)), err == nil, err
}

// ResolutionDecide implements ledger.ResolutionDriver.
func (d driver) ResolutionDecide(ctx context.Context, r ledger.Resolution) error {
	return d.q.ResolutionDecide(ctx, dbsqlc.ResolutionDecideParams{ResolutionID: r.ID, DecidedBy: r.DecidedBy,
		DecidedByName: r.DecidedByName, DecidedAt: r.DecidedAt, Decision: r.Decision, DecisionWhy: r.DecisionWhy})
}

// ResolutionList implements ledger.ResolutionDriver.
func (d driver) ResolutionList(ctx context.Context, tenant string, openOnly bool) ([]ledger.Resolution, error) {
	rows, err := d.q.ResolutionList(ctx, dbsqlc.ResolutionListParams{TenantID: tenant, OpenOnly: openOnly})
	out := make([]ledger.Resolution, len(rows))
	for i, r := range rows {
		out[i] = resolutionOf(r)
	}
	return out, err
}

// ResolutionListOpen implements ledger.ResolutionDriver.
func (d driver) ResolutionListOpen(ctx context.Context, tenants []string, all bool) ([]ledger.Resolution, error) {
	rows, err := d.q.ResolutionListOpen(ctx, dbsqlc.ResolutionListOpenParams{AllTenants: all, Tenants: tenants})
	out := make([]ledger.Resolution, len(rows))
	for i, r := range rows {
		out[i] = resolutionOf(dbsqlc.ResolutionListRow(r))
	}
	return out, err
}

// duplicate is err, or ledger.ErrDuplicateKey for a unique violation.
func duplicate(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		return ledger.ErrDuplicateKey
	}
	return err
}
