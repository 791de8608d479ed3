package postgres

import (
	"context"
	"fmt"
	"time"

	"settle/ledger"
	"settle/ledger/postgres/internal/dbsqlc"
)

var (
	_ ledger.RetentionStore = (*Store)(nil)
	_ ledger.TenantEraser   = (*Store)(nil)
)

// cutoff is a RetentionCutoffs instant as a parameter: NULL when the rule
// is off, which matches nothing.
func cutoff(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// RetentionCount implements ledger.RetentionDriver.
func (d driver) RetentionCount(ctx context.Context, c ledger.RetentionCutoffs) (ledger.RetentionCounts, error) {
	r, err := d.q.RetentionCount(ctx, dbsqlc.RetentionCountParams{
		DeleteBefore: cutoff(c.Delete), RedactBefore: cutoff(c.Redact), PurgeBefore: cutoff(c.Purge)})
	return ledger.RetentionCounts{Operations: int(r.Operations), Events: int(r.Events),
		Notifications: int(r.Notifications), Findings: int(r.Findings), Resolutions: int(r.Resolutions),
		Conflicts: int(r.Conflicts), PayloadsRedacted: int(r.PayloadsRedacted), Quarantine: int(r.Quarantine),
		Deliveries: int(r.Deliveries)}, err
}

// RetentionRedact implements ledger.RetentionDriver.
func (d driver) RetentionRedact(ctx context.Context, before time.Time, limit int) (int, error) {
	n, err := d.q.RetentionRedact(ctx, dbsqlc.RetentionRedactParams{Before: before, Max: int32(limit)})
	return int(n), err
}

// ErasureList implements ledger.RetentionDriver.
func (d driver) ErasureList(ctx context.Context, tenant string) ([]ledger.ErasureRow, error) {
	rows, err := d.q.ErasureList(ctx, tenant)
	out := make([]ledger.ErasureRow, len(rows))
	for i, r := range rows {
		out[i] = ledger.ErasureRow{ID: r.ErasureID, Tenant: r.TenantID, At: r.At.UTC(), Subject: r.Subject,
			Name: r.ActorName, Role: r.Role, Forced: r.Forced, Unfinished: int(r.Unfinished), Counts: r.Counts}
	}
	return out, err
}

func (d driver) RetentionDeletable(ctx context.Context, before time.Time, limit int) ([]ledger.OperationKey, error) {
	rows, err := d.q.RetentionDeletable(ctx, dbsqlc.RetentionDeletableParams{Before: before, Max: int32(limit)})
	keys := make([]ledger.OperationKey, len(rows))
	for i, r := range rows {
		keys[i] = ledger.OperationKey{Tenant: r.TenantID, ID: r.OperationID}
	}
	return keys, err
}

func (d driver) ErasureOperations(ctx context.Context, tenant string, limit int) ([]ledger.OperationKey, error) {
	rows, err := d.q.ErasureOperations(ctx, dbsqlc.ErasureOperationsParams{Tenant: tenant, Max: int32(limit)})
	keys := make([]ledger.OperationKey, len(rows))
	for i, r := range rows {
		keys[i] = ledger.OperationKey{Tenant: r.TenantID, ID: r.OperationID}
	}
	return keys, err
}

// batchRows is what every sqlc :batchone result of OperationsDelete is.
type batchRows interface {
	QueryRow(f func(int, int32, error))
}

// OperationsDelete sends one statement per table and operation, a batch
// per table, each finding its rows by its index (see retention.sql).
func (d driver) OperationsDelete(ctx context.Context, keys []ledger.OperationKey) (ledger.RetentionCounts, error) {
	var n ledger.RetentionCounts
	if err := d.q.RetentionUnlock(ctx); err != nil {
		return n, err
	}
	type params = struct{ Tenant, OperationID string }
	p := make([]params, len(keys))
	for i, k := range keys {
		p[i] = params{k.Tenant, k.ID}
	}
	for _, d := range []struct {
		table string
		n     *int
		send  func() batchRows
	}{
		{"operation_events", &n.Events, func() batchRows {
			return d.q.OperationEventsDelete(ctx, convert[dbsqlc.OperationEventsDeleteParams](p))
		}},
		{"callback_outbox", &n.Notifications, func() batchRows {
			return d.q.OperationCallbacksDelete(ctx, convert[dbsqlc.OperationCallbacksDeleteParams](p))
		}},
		{"escalation_outbox", &n.EscalationNotices, func() batchRows {
			return d.q.OperationEscalationsDelete(ctx, convert[dbsqlc.OperationEscalationsDeleteParams](p))
		}},
		{"audit_findings", &n.Findings, func() batchRows {
			return d.q.OperationFindingsDelete(ctx, convert[dbsqlc.OperationFindingsDeleteParams](p))
		}},
		{"resolutions", &n.Resolutions, func() batchRows {
			return d.q.OperationResolutionsDelete(ctx, convert[dbsqlc.OperationResolutionsDeleteParams](p))
		}},
		{"payload_conflicts", &n.Conflicts, func() batchRows {
			return d.q.OperationConflictsDelete(ctx, convert[dbsqlc.OperationConflictsDeleteParams](p))
		}},
		{"operation_ledger", &n.Operations, func() batchRows {
			return d.q.OperationDelete(ctx, convert[dbsqlc.OperationDeleteParams](p))
		}},
	} {
		var first error
		d.send().QueryRow(func(_ int, c int32, err error) {
			if err != nil && first == nil {
				first = err
			}
			*d.n += int(c)
		})
		if first != nil {
			return n, fmt.Errorf("%s: %w", d.table, first)
		}
	}
	return n, nil
}

// convert turns the batch's keys into the parameters of one table's
// statement: sqlc gives each its own struct of the same two fields.
func convert[T ~struct{ Tenant, OperationID string }](p []struct{ Tenant, OperationID string }) []T {
	out := make([]T, len(p))
	for i, k := range p {
		out[i] = T(k)
	}
	return out
}

func (d driver) PurgeQuarantine(ctx context.Context, before time.Time, limit int) (int, error) {
	n, err := d.q.PurgeQuarantine(ctx, dbsqlc.PurgeQuarantineParams{Before: before, Max: int32(limit)})
	return int(n), err
}

func (d driver) PurgeDeliveries(ctx context.Context, before time.Time, limit int) (int, error) {
	n, err := d.q.PurgeDeliveries(ctx, dbsqlc.PurgeDeliveriesParams{Before: before, Max: int32(limit)})
	return int(n), err
}

// tenantDelete is one statement deleting a tenant's rows of one table.
type tenantDelete struct {
	table string
	n     *int
	del   func(context.Context, string) (int64, error)
}

// runTenantDeletes runs the deletes in order, counting each.
func runTenantDeletes(ctx context.Context, tenant string, ds []tenantDelete) error {
	for _, d := range ds {
		c, err := d.del(ctx, tenant)
		if err != nil {
			return fmt.Errorf("%s: %w", d.table, err)
		}
		*d.n = int(c)
	}
	return nil
}

func (d driver) ErasureAccessDelete(ctx context.Context, tenant string) (ledger.RetentionCounts, error) {
	var n ledger.RetentionCounts
	if err := runTenantDeletes(ctx, tenant, []tenantDelete{
		{"api_tokens", &n.Tokens, d.q.ErasureTokensDelete},
		{"tenant_callbacks", &n.Callbacks, d.q.ErasureCallbackDelete},
		{"tenant_params", &n.Params, d.q.ErasureParamsDelete},
	}); err != nil {
		return n, err
	}
	// An erased tenant is no longer known: a token for it needs it
	// created again, on purpose.
	if err := d.q.ErasureTenantDelete(ctx, tenant); err != nil {
		return n, fmt.Errorf("tenants: %w", err)
	}
	return n, nil
}

func (d driver) ErasureRestDelete(ctx context.Context, tenant string) (ledger.RetentionCounts, error) {
	var n ledger.RetentionCounts
	if err := d.q.RetentionUnlock(ctx); err != nil {
		return n, err
	}
	if err := runTenantDeletes(ctx, tenant, []tenantDelete{
		{"webhook_inbox", &n.Deliveries, d.q.ErasureDeliveriesDelete},
		{"quarantine", &n.Quarantine, d.q.ErasureQuarantineDelete},
		// Rows of operations a forced erasure met half-written, and
		// conflicts whose operation went earlier.
		{"callback_outbox", &n.Notifications, d.q.ErasureCallbacksDelete},
		{"escalation_outbox", &n.EscalationNotices, d.q.ErasureEscalationsDelete},
		{"audit_findings", &n.Findings, d.q.ErasureFindingsDelete},
		{"resolutions", &n.Resolutions, d.q.ErasureResolutionsDelete},
		{"payload_conflicts", &n.Conflicts, d.q.ErasureConflictsDelete},
		{"actions", &n.Actions, d.q.ErasureActionsDelete},
	}); err != nil {
		return n, err
	}
	// Transitions waiting to be counted by a server (migration 00029):
	// counts in transit, not a record, so not counted.
	if err := d.q.ErasureObservationsDelete(ctx, tenant); err != nil {
		return n, fmt.Errorf("observations: %w", err)
	}
	r, err := d.q.ErasureRollupsDelete(ctx, tenant)
	if err != nil {
		return n, fmt.Errorf("rollups: %w", err)
	}
	n.Rollups = int(r)
	return n, nil
}

func (d driver) ErasureInsert(ctx context.Context, r ledger.ErasureRow) (int64, error) {
	return d.q.ErasureInsert(ctx, dbsqlc.ErasureInsertParams{TenantID: r.Tenant, At: r.At, Subject: r.Subject,
		ActorName: r.Name, Role: r.Role, Forced: r.Forced, Unfinished: int32(r.Unfinished), Counts: r.Counts})
}
