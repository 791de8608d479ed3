package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"settle/ledger"
	"settle/ledger/sqlite/internal/dbsqlc"
)

var _ ledger.ReviewStore = (*Store)(nil)

// QuarantineItemGet implements ledger.ReviewDriver.
func (d driver) QuarantineItemGet(ctx context.Context, scopeTenant string, id int64) (ledger.QuarantineItem, bool, error) {
	r, err := d.r.QuarantineItemGet(ctx, dbsqlc.QuarantineItemGetParams{QuarantineID: id, ScopeTenant: scopeTenant})
	if errors.Is(err, sql.ErrNoRows) {
		return ledger.QuarantineItem{}, false, nil
	}
	if err != nil {
		return ledger.QuarantineItem{}, false, err
	}
	return quarantineItemOf(dbsqlc.QuarantineListRow(r)), true, nil
}

// quarantineItemOf is the item a quarantine row holds.
func quarantineItemOf(r dbsqlc.QuarantineListRow) ledger.QuarantineItem {
	return ledger.QuarantineItem{ID: r.QuarantineID, Target: r.Target, DeliveryID: r.DeliveryID,
		Reason: r.Reason, EventID: r.EventID, Reference: r.ClaimedReference, Tenant: r.ClaimedTenant,
		RemoteID: r.RemoteID, OperationID: r.OperationID, OpTenant: r.OperationTenant, At: fromMicros(r.QuarantinedAt),
		ResolvedAt: fromNull(r.ResolvedAt), ResolvedBy: r.ResolvedBy, ResolvedByName: r.ResolvedByName,
		ResolvedByRole: r.ResolvedByRole, ResolvedAs: r.ResolutionKind, Resolution: r.Resolution}
}

// OperationHold implements ledger.ReviewDriver: inside WithTx the read is
// the single writer's, so the operation cannot change until it commits.
func (d driver) OperationHold(ctx context.Context, tenant, id string) (bool, error) {
	held, err := d.w.OperationHold(ctx, dbsqlc.OperationHoldParams{TenantID: tenant, OperationID: id})
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return held, err
}

// QuarantineLink implements ledger.ReviewDriver.
func (d driver) QuarantineLink(ctx context.Context, p ledger.QuarantineResolveParams) (bool, error) {
	a := p.Action
	n, err := d.w.QuarantineLink(ctx, dbsqlc.QuarantineLinkParams{ScopeTenant: p.ScopeTenant, QuarantineID: p.ID,
		OperationID: p.OperationID, ResolvedAt: micros(a.At), ResolvedBy: a.Subject, ResolvedByName: a.Name,
		Resolution: a.Reason, ResolvedByRole: a.Role})
	return n > 0, err
}

// OperationDue implements ledger.ReviewDriver.
func (d driver) OperationDue(ctx context.Context, p ledger.OperationDueParams) error {
	return d.w.OperationDue(ctx, dbsqlc.OperationDueParams{TenantID: p.Tenant, OperationID: p.ID, DueAt: micros(p.At)})
}

// FindingList implements ledger.ReviewDriver: a search by reference is
// its own query (see FindingSearch).
func (d driver) FindingList(ctx context.Context, p ledger.FindingListParams) ([]ledger.Finding, error) {
	tenants, err := json.Marshal(p.Tenants)
	if err != nil {
		return nil, err
	}
	var before any
	if p.Before != nil {
		before = micros(*p.Before)
	}
	var rows []dbsqlc.AuditFinding
	if p.Ref == "" {
		rows, err = d.r.FindingList(ctx, dbsqlc.FindingListParams{AllTenants: p.AllTenants, Tenants: string(tenants),
			OperationID: p.OperationID, OpenOnly: p.OpenOnly, ResolvedOnly: p.ResolvedOnly, Target: p.Target,
			Kind: string(p.Kind), Before: before, AfterID: p.AfterID, MaxRows: int64(p.Limit)})
	} else {
		rows, err = d.r.FindingSearch(ctx, dbsqlc.FindingSearchParams{Ref: p.Ref, OpPrefix: p.OpPrefix,
			AllTenants: p.AllTenants, Tenants: string(tenants), OperationID: p.OperationID, OpenOnly: p.OpenOnly,
			ResolvedOnly: p.ResolvedOnly, Target: p.Target, Kind: string(p.Kind), Before: before, AfterID: p.AfterID,
			MaxRows: int64(p.Limit)})
	}
	if err != nil {
		return nil, err
	}
	return findingsOf(rows)
}

// FindingGet implements ledger.ReviewDriver.
func (d driver) FindingGet(ctx context.Context, tenant string, id int64) (ledger.Finding, bool, error) {
	r, err := d.r.FindingGet(ctx, dbsqlc.FindingGetParams{FindingID: id, TenantID: tenant})
	if errors.Is(err, sql.ErrNoRows) {
		return ledger.Finding{}, false, nil
	}
	if err != nil {
		return ledger.Finding{}, false, err
	}
	f, err := findingOf(r)
	return f, err == nil, err
}

// FindingAcknowledge implements ledger.ReviewDriver.
func (d driver) FindingAcknowledge(ctx context.Context, p ledger.FindingAcknowledgeParams) (string, bool, error) {
	a := p.Action
	opID, err := d.w.FindingAcknowledge(ctx, dbsqlc.FindingAcknowledgeParams{TenantID: p.Tenant, FindingID: p.ID,
		AcknowledgedAt: micros(a.At), AcknowledgedBy: a.Subject, AcknowledgedByName: a.Name, Acknowledgement: a.Reason})
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return opID, err == nil, err
}

// findingsOf is the findings rows hold (nil for none).
func findingsOf(rows []dbsqlc.AuditFinding) ([]ledger.Finding, error) {
	var fs []ledger.Finding
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
func findingOf(r dbsqlc.AuditFinding) (ledger.Finding, error) {
	f := ledger.Finding{ID: r.FindingID, Tenant: r.TenantID, OperationID: r.OperationID, Target: r.Target,
		Kind: ledger.FindingKind(r.Kind), Evidence: []byte(r.Evidence), FoundAt: fromMicros(r.FoundAt),
		Escalated: r.Escalated != 0, ResolvedAt: fromNull(r.ResolvedAt)}
	if r.AcknowledgedAt.Valid {
		f.Acknowledged = &ledger.Acknowledgement{At: fromMicros(r.AcknowledgedAt.Int64), Subject: r.AcknowledgedBy,
			Name: r.AcknowledgedByName, Note: r.Acknowledgement}
	}
	if err := json.Unmarshal([]byte(r.RemoteIds), &f.RemoteIDs); err != nil {
		return f, fmt.Errorf("finding %d: remote ids: %w", f.ID, err)
	}
	return f, nil
}
