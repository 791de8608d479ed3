package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"settle/ledger"
	"settle/ledger/sqlite/internal/dbsqlc"
)

var (
	_ ledger.RetentionStore = (*Store)(nil)
	_ ledger.TenantEraser   = (*Store)(nil)
)

// cutoff is a RetentionCutoffs instant as a parameter: NULL when the rule
// is off, which matches nothing.
func cutoff(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: micros(t), Valid: true}
}

// RetentionCount implements ledger.RetentionDriver.
func (d driver) RetentionCount(ctx context.Context, c ledger.RetentionCutoffs) (ledger.RetentionCounts, error) {
	r, err := d.r.RetentionCount(ctx, dbsqlc.RetentionCountParams{
		DeleteBefore: cutoff(c.Delete), RedactBefore: cutoff(c.Redact), PurgeBefore: cutoff(c.Purge)})
	return ledger.RetentionCounts{Operations: int(r.Operations), Events: int(r.Events),
		Notifications: int(r.Notifications), Findings: int(r.Findings), Resolutions: int(r.Resolutions),
		Conflicts: int(r.Conflicts), PayloadsRedacted: int(r.PayloadsRedacted), Quarantine: int(r.Quarantine),
		Deliveries: int(r.Deliveries)}, err
}

// RetentionRedact implements ledger.RetentionDriver.
func (d driver) RetentionRedact(ctx context.Context, before time.Time, limit int) (int, error) {
	n, err := d.w.RetentionRedact(ctx, dbsqlc.RetentionRedactParams{Before: micros(before), Max: int64(limit)})
	return int(n), err
}

// ErasureList implements ledger.RetentionDriver.
func (d driver) ErasureList(ctx context.Context, tenant string) ([]ledger.ErasureRow, error) {
	rows, err := d.r.ErasureList(ctx, tenant)
	out := make([]ledger.ErasureRow, len(rows))
	for i, r := range rows {
		out[i] = ledger.ErasureRow{ID: r.ErasureID, Tenant: r.TenantID, At: fromMicros(r.At), Subject: r.Subject,
			Name: r.ActorName, Role: r.Role, Forced: r.Forced, Unfinished: int(r.Unfinished), Counts: []byte(r.Counts)}
	}
	return out, err
}

func (d driver) RetentionDeletable(ctx context.Context, before time.Time, limit int) ([]ledger.OperationKey, error) {
	rows, err := d.w.RetentionDeletable(ctx, dbsqlc.RetentionDeletableParams{Before: micros(before), Max: int64(limit)})
	keys := make([]ledger.OperationKey, len(rows))
	for i, r := range rows {
		keys[i] = ledger.OperationKey{Tenant: r.TenantID, ID: r.OperationID}
	}
	return keys, err
}

func (d driver) ErasureOperations(ctx context.Context, tenant string, limit int) ([]ledger.OperationKey, error) {
	rows, err := d.w.ErasureOperations(ctx, dbsqlc.ErasureOperationsParams{Tenant: tenant, Max: int64(limit)})
	keys := make([]ledger.OperationKey, len(rows))
	for i, r := range rows {
		keys[i] = ledger.OperationKey{Tenant: r.TenantID, ID: r.OperationID}
	}
	return keys, err
}

// OperationsDelete deletes table by table, the keys passed as one JSON
// array of [tenant, id] pairs, with the append-only tables unlocked for
// the statements and locked again before the transaction commits.
func (d driver) OperationsDelete(ctx context.Context, keys []ledger.OperationKey) (ledger.RetentionCounts, error) {
	var n ledger.RetentionCounts
	pairs := make([][2]string, len(keys))
	for i, k := range keys {
		pairs[i] = [2]string{k.Tenant, k.ID}
	}
	b, err := json.Marshal(pairs)
	if err != nil {
		return n, err
	}
	if err := d.w.RetentionUnlock(ctx); err != nil {
		return n, err
	}
	for _, d := range []struct {
		table string
		n     *int
		del   func(context.Context, interface{}) (int64, error)
	}{
		{"operation_events", &n.Events, d.w.OperationEventsDelete},
		{"callback_outbox", &n.Notifications, d.w.OperationCallbacksDelete},
		{"escalation_outbox", &n.EscalationNotices, d.w.OperationEscalationsDelete},
		{"audit_findings", &n.Findings, d.w.OperationFindingsDelete},
		{"resolutions", &n.Resolutions, d.w.OperationResolutionsDelete},
		{"payload_conflicts", &n.Conflicts, d.w.OperationConflictsDelete},
		{"operation_ledger", &n.Operations, d.w.OperationDelete},
	} {
		c, err := d.del(ctx, string(b))
		if err != nil {
			return n, fmt.Errorf("%s: %w", d.table, err)
		}
		*d.n = int(c)
	}
	return n, d.w.RetentionRelock(ctx)
}

func (d driver) PurgeQuarantine(ctx context.Context, before time.Time, limit int) (int, error) {
	n, err := d.w.PurgeQuarantine(ctx, dbsqlc.PurgeQuarantineParams{Before: micros(before), Max: int64(limit)})
	return int(n), err
}

func (d driver) PurgeDeliveries(ctx context.Context, before time.Time, limit int) (int, error) {
	n, err := d.w.PurgeDeliveries(ctx, dbsqlc.PurgeDeliveriesParams{Before: micros(before), Max: int64(limit)})
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
		{"api_tokens", &n.Tokens, d.w.ErasureTokensDelete},
		{"tenant_callbacks", &n.Callbacks, d.w.ErasureCallbackDelete},
		{"tenant_params", &n.Params, d.w.ErasureParamsDelete},
	}); err != nil {
		return n, err
	}
	// An erased tenant is no longer known: a token for it needs it
	// created again, on purpose.
	if err := d.w.ErasureTenantDelete(ctx, tenant); err != nil {
		return n, fmt.Errorf("tenants: %w", err)
	}
	return n, nil
}

func (d driver) ErasureRestDelete(ctx context.Context, tenant string) (ledger.RetentionCounts, error) {
	var n ledger.RetentionCounts
	if err := d.w.RetentionUnlock(ctx); err != nil {
		return n, err
	}
	var rollups [3]int
	if err := runTenantDeletes(ctx, tenant, []tenantDelete{
		{"webhook_inbox", &n.Deliveries, d.w.ErasureDeliveriesDelete},
		{"quarantine", &n.Quarantine, d.w.ErasureQuarantineDelete},
		// Rows of operations a forced erasure met half-written, and
		// conflicts whose operation went earlier.
		{"callback_outbox", &n.Notifications, d.w.ErasureCallbacksDelete},
		{"escalation_outbox", &n.EscalationNotices, d.w.ErasureEscalationsDelete},
		{"audit_findings", &n.Findings, d.w.ErasureFindingsDelete},
		{"resolutions", &n.Resolutions, d.w.ErasureResolutionsDelete},
		{"payload_conflicts", &n.Conflicts, d.w.ErasureConflictsDelete},
		{"actions", &n.Actions, d.w.ErasureActionsDelete},
		{"figure_days", &rollups[0], d.w.ErasureFigureDaysDelete},
		{"figure_episodes", &rollups[1], d.w.ErasureFigureEpisodesDelete},
		{"figure_escalations", &rollups[2], d.w.ErasureFigureEscalationsDelete},
	}); err != nil {
		return n, err
	}
	n.Rollups = rollups[0] + rollups[1] + rollups[2]
	// Transitions waiting to be counted by a server (migration 00029):
	// counts in transit, not a record, so not counted.
	if err := d.w.ErasureObservationsDelete(ctx, tenant); err != nil {
		return n, fmt.Errorf("observations: %w", err)
	}
	return n, d.w.RetentionRelock(ctx)
}

func (d driver) ErasureInsert(ctx context.Context, r ledger.ErasureRow) (int64, error) {
	return d.w.ErasureInsert(ctx, dbsqlc.ErasureInsertParams{TenantID: r.Tenant, At: micros(r.At), Subject: r.Subject,
		ActorName: r.Name, Role: r.Role, Forced: r.Forced, Unfinished: int64(r.Unfinished), Counts: string(r.Counts)})
}
