package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"

	"settle/ledger"
	"settle/ledger/sqlite/internal/dbsqlc"
)

var _ ledger.ResolutionStore = (*Store)(nil)

// resolutionOf is a row of a resolutions query as a ledger.Resolution.
func resolutionOf(r dbsqlc.ResolutionListRow) ledger.Resolution {
	return ledger.Resolution{ID: r.ResolutionID, Tenant: r.TenantID, OperationID: r.OperationID, Fence: r.FenceToken,
		To: ledger.State(r.ToState), RemoteRef: r.RemoteRef, Reason: r.Reason, ProposedBy: r.ProposedBy,
		ProposedByName: r.ProposedByName, ProposedAt: fromMicros(r.ProposedAt), DecidedBy: r.DecidedBy,
		DecidedByName: r.DecidedByName, DecidedAt: fromNull(r.DecidedAt), Decision: r.Decision,
		DecisionWhy: r.DecisionWhy, Kind: ledger.ResolutionKind(r.Kind)}
}

// ResolutionInsert implements ledger.ResolutionDriver.
func (d driver) ResolutionInsert(ctx context.Context, r ledger.Resolution) (ledger.Resolution, error) {
	got, err := d.w.ResolutionInsert(ctx, dbsqlc.ResolutionInsertParams{TenantID: r.Tenant, OperationID: r.OperationID,
		FenceToken: r.Fence, ToState: string(r.To), RemoteRef: r.RemoteRef, Reason: r.Reason, ProposedBy: r.ProposedBy,
		ProposedByName: r.ProposedByName, ProposedAt: micros(r.ProposedAt), Kind: string(r.Kind)})
	if err != nil {
		return r, duplicate(err)
	}
	return resolutionOf(dbsqlc.ResolutionListRow(got)), nil
}

// ResolutionLockOpen implements ledger.ResolutionDriver: the writer's
// transaction already excludes other deciders.
func (d driver) ResolutionLockOpen(ctx context.Context, tenant string, id int64) (ledger.Resolution, bool, error) {
	r, err := d.w.ResolutionLockOpen(ctx, dbsqlc.ResolutionLockOpenParams{TenantID: tenant, ResolutionID: id})
	if errors.Is(err, sql.ErrNoRows) {
		return ledger.Resolution{}, false, nil
	}
	return resolutionOf(dbsqlc.ResolutionListRow(r)), err == nil, err
}

// ResolutionDecide implements ledger.ResolutionDriver.
func (d driver) ResolutionDecide(ctx context.Context, r ledger.Resolution) error {
	var at sql.NullInt64
	if r.DecidedAt != nil {
		at = sql.NullInt64{Int64: micros(*r.DecidedAt), Valid: true}
	}
	return d.w.ResolutionDecide(ctx, dbsqlc.ResolutionDecideParams{ResolutionID: r.ID, DecidedBy: r.DecidedBy,
		DecidedByName: r.DecidedByName, DecidedAt: at, Decision: r.Decision, DecisionWhy: r.DecisionWhy})
}

// ResolutionList implements ledger.ResolutionDriver.
func (d driver) ResolutionList(ctx context.Context, tenant string, openOnly bool) ([]ledger.Resolution, error) {
	rows, err := d.r.ResolutionList(ctx, dbsqlc.ResolutionListParams{TenantID: tenant, OpenOnly: openOnly})
	out := make([]ledger.Resolution, len(rows))
	for i, r := range rows {
		out[i] = resolutionOf(r)
	}
	return out, err
}

// ResolutionListOpen implements ledger.ResolutionDriver.
func (d driver) ResolutionListOpen(ctx context.Context, tenants []string, all bool) ([]ledger.Resolution, error) {
	list, err := json.Marshal(tenants)
	if err != nil {
		return nil, err
	}
	rows, err := d.r.ResolutionListOpen(ctx, dbsqlc.ResolutionListOpenParams{AllTenants: all, Tenants: string(list)})
	out := make([]ledger.Resolution, len(rows))
	for i, r := range rows {
		out[i] = resolutionOf(dbsqlc.ResolutionListRow(r))
	}
	return out, err
}

// duplicate is err, or ledger.ErrDuplicateKey for a unique violation.
func duplicate(err error) error {
	if err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed") {
		return ledger.ErrDuplicateKey
	}
	return err
}
