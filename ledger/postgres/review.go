package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"settle/ledger"
	"settle/ledger/postgres/internal/dbsqlc"
)

var _ ledger.ReviewStore = (*Store)(nil)

// QuarantineItemGet implements ledger.ReviewDriver.
func (d driver) QuarantineItemGet(ctx context.Context, scopeTenant string, id int64) (ledger.QuarantineItem, bool, error) {
	r, err := d.q.QuarantineItemGet(ctx, dbsqlc.QuarantineItemGetParams{QuarantineID: id, ScopeTenant: scopeTenant})
	if errors.Is(err, pgx.ErrNoRows) {
		return ledger.QuarantineItem{}, false, nil
	}
	if err != nil {
		return ledger.QuarantineItem{}, false, err
	}
	return quarantineItemOf(dbsqlc.QuarantineListRow(r)), true, nil
}

// quarantineItemOf is the item a quarantine row holds.
func quarantineItemOf(r dbsqlc.QuarantineListRow) ledger.QuarantineItem {
	q := ledger.QuarantineItem{ID: r.QuarantineID, Target: r.Target, DeliveryID: r.DeliveryID, Reason: r.Reason,
		EventID: r.EventID, Reference: r.ClaimedReference, Tenant: r.ClaimedTenant, RemoteID: r.RemoteID,
		OperationID: r.OperationID, OpTenant: r.OperationTenant, At: r.QuarantinedAt.UTC(), ResolvedAt: r.ResolvedAt,
		ResolvedBy: r.ResolvedBy, ResolvedByName: r.ResolvedByName, ResolvedByRole: r.ResolvedByRole,
		ResolvedAs: r.ResolutionKind, Resolution: r.Resolution}
	utcp(q.ResolvedAt)
	return q
}

// OperationHold implements ledger.ReviewDriver with FOR SHARE.
func (d driver) OperationHold(ctx context.Context, tenant, id string) (bool, error) {
	held, err := d.q.OperationHold(ctx, dbsqlc.OperationHoldParams{TenantID: tenant, OperationID: id})
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return held, err
}

// QuarantineLink implements ledger.ReviewDriver.
func (d driver) QuarantineLink(ctx context.Context, p ledger.QuarantineResolveParams) (bool, error) {
	a := p.Action
	n, err := d.q.QuarantineLink(ctx, dbsqlc.QuarantineLinkParams{ScopeTenant: p.ScopeTenant, QuarantineID: p.ID,
		OperationID: p.OperationID, ResolvedAt: a.At, ResolvedBy: a.Subject, ResolvedByName: a.Name,
		Resolution: a.Reason, ResolvedByRole: a.Role})
	return n > 0, err
}

// OperationDue implements ledger.ReviewDriver.
func (d driver) OperationDue(ctx context.Context, p ledger.OperationDueParams) error {
	return d.q.OperationDue(ctx, dbsqlc.OperationDueParams{TenantID: p.Tenant, OperationID: p.ID, DueAt: p.At})
}

// FindingList implements ledger.ReviewDriver: a search by reference is
// its own query (see FindingSearch).
func (d driver) FindingList(ctx context.Context, p ledger.FindingListParams) ([]ledger.Finding, error) {
	lp := dbsqlc.FindingListParams{AllTenants: p.AllTenants, Tenants: p.Tenants, OperationID: p.OperationID,
		OpenOnly: p.OpenOnly, ResolvedOnly: p.ResolvedOnly, Target: p.Target, Kind: string(p.Kind),
		Before: p.Before, AfterID: p.AfterID, MaxRows: int32(p.Limit)}
	var rows []dbsqlc.FindingListRow
	if p.Ref == "" {
		var err error
		if rows, err = d.q.FindingList(ctx, lp); err != nil {
			return nil, err
		}
	} else {
		found, err := d.q.FindingSearch(ctx, dbsqlc.FindingSearchParams{Ref: p.Ref, OpPrefix: p.OpPrefix,
			AllTenants: lp.AllTenants, Tenants: lp.Tenants, OperationID: lp.OperationID, OpenOnly: lp.OpenOnly,
			ResolvedOnly: lp.ResolvedOnly, Target: lp.Target, Kind: lp.Kind, Before: lp.Before, AfterID: lp.AfterID,
			MaxRows: lp.MaxRows})
		if err != nil {
			return nil, err
		}
		for _, r := range found {
			rows = append(rows, dbsqlc.FindingListRow(r))
		}
	}
	return findingsOf(rows)
}

// FindingGet implements ledger.ReviewDriver.
func (d driver) FindingGet(ctx context.Context, tenant string, id int64) (ledger.Finding, bool, error) {
	r, err := d.q.FindingGet(ctx, dbsqlc.FindingGetParams{FindingID: id, TenantID: tenant})
	if errors.Is(err, pgx.ErrNoRows) {
		return ledger.Finding{}, false, nil
	}
	if err != nil {
		return ledger.Finding{}, false, err
	}
	f, err := findingOf(dbsqlc.FindingListRow(r))
	return f, err == nil, err
}

// FindingAcknowledge implements ledger.ReviewDriver.
func (d driver) FindingAcknowledge(ctx context.Context, p ledger.FindingAcknowledgeParams) (string, bool, error) {
	a := p.Action
	opID, err := d.q.FindingAcknowledge(ctx, dbsqlc.FindingAcknowledgeParams{TenantID: p.Tenant, FindingID: p.ID,
		AcknowledgedAt: a.At, AcknowledgedBy: a.Subject, AcknowledgedByName: a.Name, Acknowledgement: a.Reason})
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	return opID, err == nil, err
}

// findingsOf is the findings rows hold.
func findingsOf(rows []dbsqlc.FindingListRow) ([]ledger.Finding, error) {
	fs := make([]ledger.Finding, 0, len(rows))
	for _, r := range rows {
		f, err := findingOf(r)
		if err != nil {
			return nil, err
		}
		fs = append(fs, f)
	}
	return fs, nil
}

// findingOf is the finding a row holds.
func findingOf(r dbsqlc.FindingListRow) (ledger.Finding, error) {
	f := ledger.Finding{ID: r.FindingID, Tenant: r.TenantID, OperationID: r.OperationID, Target: r.Target,
		Kind: ledger.FindingKind(r.Kind), Evidence: []byte(r.Evidence), FoundAt: r.FoundAt.UTC(),
		Escalated: r.Escalated, ResolvedAt: r.ResolvedAt}
	utcp(f.ResolvedAt)
	if r.AcknowledgedAt != nil {
		f.Acknowledged = &ledger.Acknowledgement{At: r.AcknowledgedAt.UTC(), Subject: r.AcknowledgedBy,
			Name: r.AcknowledgedByName, Note: r.Acknowledgement}
	}
	if err := json.Unmarshal([]byte(r.RemoteIds), &f.RemoteIDs); err != nil {
		return f, fmt.Errorf("finding %d: remote ids: %w", f.ID, err)
	}
	return f, nil
}
