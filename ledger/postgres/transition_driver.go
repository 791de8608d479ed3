package postgres

import (
	"context"

	"settle/ledger"
	"settle/ledger/postgres/internal/dbsqlc"
)

// OperationClaim implements ledger.TransitionDriver in one statement.
func (d driver) OperationClaim(ctx context.Context, p ledger.ClaimParams) (ledger.Operation, bool, error) {
	r, err := d.q.OperationClaim(ctx, dbsqlc.OperationClaimParams{LeaseEnd: p.LeaseEnd, Now: p.Now,
		TenantID: p.Tenant, OperationID: p.ID, PayloadHash: p.Hash, Actor: p.Event.Actor, Reason: p.Event.Reason})
	return one(dbsqlc.OperationGetRow(r), err)
}

// OperationClaimBatch implements ledger.TransitionDriver in one statement
// that locks the rows it picks with SKIP LOCKED, so that the next replica
// takes the next rows.
func (d driver) OperationClaimBatch(ctx context.Context, p ledger.ClaimBatchParams) ([]ledger.Operation, error) {
	rows, err := d.q.OperationClaimBatch(ctx, dbsqlc.OperationClaimBatchParams{Max: int32(p.Max), Now: p.Now,
		TargetLeases: []byte(p.LeasesJSON()), DefaultLease: p.Lease.Microseconds(), Actor: p.Event.Actor,
		Reason: p.Event.Reason})
	out := make([]ledger.Operation, len(rows))
	for i, r := range rows {
		out[i] = operationOf(dbsqlc.OperationGetRow(r))
	}
	return out, err
}

// OperationRecord implements ledger.TransitionDriver in one statement over
// the rows as a JSON array: the transitions, their events, the callbacks
// and the escalation notices commit, or fail, together.
func (d driver) OperationRecord(ctx context.Context, p ledger.RecordParams) ([]ledger.Operation, error) {
	js, err := p.RowsJSON()
	if err != nil {
		return nil, err
	}
	rows, err := d.q.OperationRecord(ctx, dbsqlc.OperationRecordParams{Rows: js, N: int32(len(p.Rows)), Now: p.Now,
		CallbackStates: callbackStates()})
	out := make([]ledger.Operation, len(rows))
	for i, r := range rows {
		out[i] = operationOf(dbsqlc.OperationGetRow(r))
	}
	return out, err
}

// OperationSweepExpired implements ledger.TransitionDriver in one
// statement. It returns the transitions, not the payloads: a chunk is up
// to p.Max operations.
func (d driver) OperationSweepExpired(ctx context.Context, p ledger.SweepParams) ([]ledger.Transition, error) {
	rows, err := d.q.OperationSweepExpired(ctx, dbsqlc.OperationSweepExpiredParams{Now: p.Now, Max: int32(p.Max),
		Reason: p.Event.Reason, Actor: p.Event.Actor})
	out := make([]ledger.Transition, len(rows))
	for i, r := range rows {
		out[i] = ledger.Transition{Tenant: r.TenantID, OperationID: r.OperationID, Target: r.Target,
			From: ledger.InFlight, To: ledger.Unknown, At: r.UpdatedAt.UTC()}
	}
	return out, err
}

// OperationLeaseDue implements ledger.TransitionDriver in one statement: a
// recursive loose scan of operation_ledger_unknown_tenant finds the
// tenants with UNKNOWN work, a LATERAL reads at most p.Max of each one's
// oldest due ids, and only the p.Max taken are locked, with SKIP LOCKED.
func (d driver) OperationLeaseDue(ctx context.Context, p ledger.LeaseDueParams) ([]ledger.Operation, error) {
	rows, err := d.q.OperationLeaseDue(ctx, dbsqlc.OperationLeaseDueParams{LeaseEnd: p.LeaseEnd, Now: p.Now,
		SkipTargets: p.SkipTargets, Max: int32(p.Max)})
	out := make([]ledger.Operation, len(rows))
	for i, r := range rows {
		out[i] = operationOf(dbsqlc.OperationGetRow(r))
	}
	return out, err
}
