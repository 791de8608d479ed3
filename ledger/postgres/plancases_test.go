package postgres_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"time"

	"settle/ledger"
	"settle/ledger/postgres"
)

// planCase runs one store method (name: "Method" or "Method/Variant") on
// the loaded schema; every statement it sends is explained.
type planCase struct {
	name string
	// want lists indexes the method's statements must use between them;
	// "a|b" accepts either.
	want []string
	// seq names big tables this method may read whole, and why. Tables of
	// fewer than bigTableRows rows may always be.
	seq []string
	run func(ctx context.Context, f *planFixture) error
}

// noStatements are the Store methods that send no SQL of their own.
var noStatements = []string{"Pool", "Ping", "Close", "SetObserver", "Within"}

// planFixture is what the cases share: the traced store under test, an
// untraced store for setting up, and rows picked from the load.
type planFixture struct {
	s, setup  *postgres.Store
	now       time.Time
	settled   ledger.Operation // SUCCEEDED, tenant-1, which has a callback
	unknown   ledger.Operation // UNKNOWN, not due, not leased
	escalated []ledger.Operation

	claimed  ledger.Operation
	batch    []ledger.Operation
	cursor   string
	audit    ledger.Cursor
	notes    []ledger.Notification
	inbox    []ledger.Delivery
	proposal ledger.Resolution
	qid      int64
}

func planOp(intent string, amount int) ledger.NewOperation {
	return ledger.NewOperation{Tenant: "tenant-1", Type: "charge", IntentRef: intent, Target: "payments",
		Payload: fmt.Appendf(nil, `{"amount":%d,"currency":"EUR"}`, amount)}
}

// planCases cover every statement of the PostgreSQL store, hot and support.
var planCases = []planCase{
	{name: "Create/New", run: func(ctx context.Context, f *planFixture) error {
		_, _, err := f.s.Create(ctx, planOp("plan-new", 100))
		return err
	}},
	{name: "Create/Existing", want: []string{"operation_ledger_tenant_id_operation_type_intent_ref_key|operation_ledger_intent"},
		run: func(ctx context.Context, f *planFixture) error {
			_, _, err := f.s.Create(ctx, planOp("plan-new", 100))
			return err
		}},
	{name: "Create/PayloadConflict", want: []string{"operation_ledger_tenant_id_operation_type_intent_ref_key|operation_ledger_intent"},
		run: func(ctx context.Context, f *planFixture) error {
			_, _, err := f.s.Create(ctx, planOp("plan-new", 999))
			return wantCode(err, ledger.EPayloadConflict)
		}},
	{name: "CreateTx", run: func(ctx context.Context, f *planFixture) error {
		tx, err := f.s.Pool().Begin(ctx)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback(ctx) }()
		_, _, err = f.s.CreateTx(ctx, tx, planOp("plan-tx", 100))
		return err
	}},
	{name: "Get", want: []string{"operation_ledger_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.Get(ctx, f.settled.Tenant, f.settled.ID)
		return err
	}},
	{name: "Summary", want: []string{"operation_ledger_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.Summary(ctx, f.settled.Tenant, f.settled.ID)
		return err
	}},
	{name: "GetByIntent", want: []string{"operation_ledger_tenant_id_operation_type_intent_ref_key|operation_ledger_intent"},
		run: func(ctx context.Context, f *planFixture) error {
			_, err := f.s.GetByIntent(ctx, f.settled.Tenant, f.settled.Type, f.settled.IntentRef)
			return err
		}},
	{name: "Find/ByReference", want: []string{"operation_ledger_intent", "operation_ledger_remote_ref"},
		run: func(ctx context.Context, f *planFixture) error {
			return found(f.s.Find(ctx, f.settled.Tenant, f.settled.RemoteRef))
		}},
	{name: "Find/ByID", want: []string{"operation_ledger_intent", "operation_ledger_remote_ref",
		"operation_ledger_pkey", "operation_ledger_remote_key"},
		run: func(ctx context.Context, f *planFixture) error {
			return found(f.s.Find(ctx, f.settled.Tenant, f.settled.ID))
		}},
	{name: "Events", want: []string{"operation_events_operation"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.Events(ctx, f.settled.Tenant, f.settled.ID)
		return err
	}},
	{name: "PayloadConflicts", want: []string{"payload_conflicts_tenant"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.PayloadConflicts(ctx, "tenant-1", ledger.Since(f.now.Add(-30*24*time.Hour)))
		return err
	}},
	{name: "PayloadConflicts/Past", want: []string{"payload_conflicts_tenant"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.PayloadConflicts(ctx, "tenant-1", ledger.Window{Since: f.now.AddDate(0, 0, -60), Until: f.now.AddDate(0, 0, -30)})
		return err
	}},
	{name: "List/FirstPage", want: []string{"operation_ledger_tenant_created"}, run: func(ctx context.Context, f *planFixture) error {
		p, err := f.s.List(ctx, ledger.ListFilter{Tenant: "tenant-1"})
		f.cursor = p.Next
		return err
	}},
	{name: "List/NextPage", want: []string{"operation_ledger_tenant_created"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.List(ctx, ledger.ListFilter{Tenant: "tenant-1", Cursor: f.cursor})
		return err
	}},
	// The API's ?state=, the escalation list and the figures.
	{name: "List/ByState", want: []string{"operation_ledger_tenant_state"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.List(ctx, ledger.ListFilter{Tenant: "tenant-1", State: ledger.Escalated, Limit: ledger.MaxListLimit})
		return err
	}},
	{name: "List/ByIntent", want: []string{"operation_ledger_tenant_id_operation_type_intent_ref_key|operation_ledger_intent"},
		run: func(ctx context.Context, f *planFixture) error {
			_, err := f.s.List(ctx, ledger.ListFilter{Tenant: "tenant-1", IntentRef: f.settled.IntentRef})
			return err
		}},
	// The console's listings (00015): a set of tenants is one walk of each
	// tenant's index, every tenant one walk of an index without the tenant.
	{name: "List/Tenants", want: []string{"operation_ledger_tenant_created"}, run: func(ctx context.Context, f *planFixture) error {
		p, err := f.s.List(ctx, ledger.ListFilter{Tenants: planTenants})
		f.cursor = p.Next
		return wantPage(p, err)
	}},
	{name: "List/TenantsNextPage", want: []string{"operation_ledger_tenant_created"}, run: func(ctx context.Context, f *planFixture) error {
		p, err := f.s.List(ctx, ledger.ListFilter{Tenants: planTenants, Cursor: f.cursor})
		return wantPage(p, err)
	}},
	{name: "List/TenantsByState", want: []string{"operation_ledger_tenant_state|operation_ledger_unknown_tenant"}, run: func(ctx context.Context, f *planFixture) error {
		p, err := f.s.List(ctx, ledger.ListFilter{Tenants: planTenants, State: ledger.Unknown})
		return wantPage(p, err)
	}},
	{name: "List/AllTenants", want: []string{"operation_ledger_created"}, run: func(ctx context.Context, f *planFixture) error {
		p, err := f.s.List(ctx, ledger.ListFilter{AllTenants: true})
		f.cursor = p.Next
		return wantPage(p, err)
	}},
	{name: "List/AllTenantsNextPage", want: []string{"operation_ledger_created"}, run: func(ctx context.Context, f *planFixture) error {
		p, err := f.s.List(ctx, ledger.ListFilter{AllTenants: true, Cursor: f.cursor})
		return wantPage(p, err)
	}},
	{name: "List/AllTenantsByState", want: []string{"operation_ledger_state_created"}, run: func(ctx context.Context, f *planFixture) error {
		p, err := f.s.List(ctx, ledger.ListFilter{AllTenants: true, State: ledger.Escalated})
		return wantPage(p, err)
	}},
	{name: "List/AllTenantsSucceeded", want: []string{"operation_ledger_created"}, run: func(ctx context.Context, f *planFixture) error {
		p, err := f.s.List(ctx, ledger.ListFilter{AllTenants: true, State: ledger.Succeeded})
		return wantPage(p, err)
	}},
	{name: "List/ByTarget", want: []string{"operation_ledger_tenant_target"}, run: func(ctx context.Context, f *planFixture) error {
		p, err := f.s.List(ctx, ledger.ListFilter{Tenant: "tenant-1", Target: "payouts"})
		return wantPage(p, err)
	}},
	{name: "List/AllTenantsByTarget", want: []string{"operation_ledger_target_created"}, run: func(ctx context.Context, f *planFixture) error {
		p, err := f.s.List(ctx, ledger.ListFilter{AllTenants: true, Target: "payouts"})
		return wantPage(p, err)
	}},
	// The escalation queue (resolve.Queue): one walk per state of the
	// state's index, the tenant's or every tenant's, at any depth.
	{name: "ListQueue/Tenant", want: []string{"operation_ledger_tenant_state"}, run: func(ctx context.Context, f *planFixture) error {
		p, err := f.s.ListQueue(ctx, ledger.QueueFilter{Tenant: "tenant-3", Now: f.now})
		f.cursor = p.Next
		return err
	}},
	{name: "ListQueue/TenantNextPage", want: []string{"operation_ledger_tenant_state"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.ListQueue(ctx, ledger.QueueFilter{Tenant: "tenant-3", Now: f.now, Cursor: f.cursor})
		return err
	}},
	{name: "ListQueue/Tenants", want: []string{"operation_ledger_tenant_state"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.ListQueue(ctx, ledger.QueueFilter{Tenants: planTenants, Now: f.now, Newest: true})
		return err
	}},
	{name: "ListQueue/AllTenants", want: []string{"operation_ledger_state_created"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.ListQueue(ctx, ledger.QueueFilter{AllTenants: true, Now: f.now})
		return err
	}},
	{name: "ListQueue/AllTenantsByTarget", want: []string{"operation_ledger_target_state|operation_ledger_state_created|operation_ledger_target_created"},
		run: func(ctx context.Context, f *planFixture) error {
			_, err := f.s.ListQueue(ctx, ledger.QueueFilter{AllTenants: true, Now: f.now, Target: "payouts"})
			return err
		}},
	{name: "ListQueue/ByRef", want: []string{"operation_ledger_tenant_state|operation_ledger_intent"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.ListQueue(ctx, ledger.QueueFilter{Tenant: "tenant-3", Now: f.now, Ref: f.escalated[0].IntentRef})
		return err
	}},
	// Either the tenant's ESCALATED rows, or the few open proposals and
	// their operations by key: both are bounded, and the planner picks
	// between them by statistics that vary from run to run.
	{name: "ListQueue/AwaitingMe", want: []string{"operation_ledger_tenant_state|resolutions_open_all"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.ListQueue(ctx, ledger.QueueFilter{Tenant: "tenant-3", Now: f.now, AwaitingOthersOf: "oidc:bob"})
		return err
	}},
	{name: "List/ByAge", want: []string{"operation_ledger_tenant_created"}, run: func(ctx context.Context, f *planFixture) error {
		after, before := f.now.Add(-35*24*time.Hour), f.now.Add(-30*24*time.Hour)
		p, err := f.s.List(ctx, ledger.ListFilter{Tenant: "tenant-1", CreatedAfter: &after, CreatedBefore: &before})
		return wantPage(p, err)
	}},
	{name: "List/AllTenantsByAge", want: []string{"operation_ledger_created"}, run: func(ctx context.Context, f *planFixture) error {
		before := f.now.Add(-60 * 24 * time.Hour)
		p, err := f.s.List(ctx, ledger.ListFilter{AllTenants: true, CreatedBefore: &before})
		return wantPage(p, err)
	}},
	// The console's tabs: each state's count stops at CountCap+1 rows.
	// SUCCEEDED walks the tenant's created_at index newest first; a tenant
	// of fewer rows than the cap (2,000 of 100,000) is read whole through
	// any index that leads with it.
	{name: "CountByState/Tenant", want: []string{"operation_ledger_tenant_state",
		"operation_ledger_tenant_created|operation_ledger_intent|operation_ledger_pkey|operation_ledger_tenant_target"},
		run: func(ctx context.Context, f *planFixture) error {
			_, err := f.s.CountByState(ctx, ledger.ListFilter{Tenant: "tenant-1"})
			return err
		}},
	// Unordered over several tenants: SUCCEEDED from any index that leads
	// with the tenant.
	{name: "CountByState/Tenants", want: []string{"operation_ledger_tenant_state",
		"operation_ledger_tenant_created|operation_ledger_intent|operation_ledger_pkey|operation_ledger_tenant_target"},
		run: func(ctx context.Context, f *planFixture) error {
			_, err := f.s.CountByState(ctx, ledger.ListFilter{Tenants: planTenants})
			return err
		}},
	{name: "CountByState/AllTenants", want: []string{"operation_ledger_state_created", "operation_ledger_created"},
		run: func(ctx context.Context, f *planFixture) error {
			c, err := f.s.CountByState(ctx, ledger.ListFilter{AllTenants: true})
			if err == nil && !c.Capped[ledger.Succeeded] {
				err = fmt.Errorf("SUCCEEDED counted %d, not capped", c.Counts[ledger.Succeeded])
			}
			return err
		}},
	{name: "CountByState/ByTarget", want: []string{"operation_ledger_tenant_target|operation_ledger_tenant_state"},
		run: func(ctx context.Context, f *planFixture) error {
			_, err := f.s.CountByState(ctx, ledger.ListFilter{Tenant: "tenant-1", Target: "payouts"})
			return err
		}},
	// A target's tabs across tenants (migration 00044): the rare states
	// from operation_ledger_target_state, SUCCEEDED from the target's
	// index, its state read from the index entry.
	{name: "CountByState/AllTenantsByTarget", want: []string{"operation_ledger_target_state", "operation_ledger_target_created|operation_ledger_audit"},
		run: func(ctx context.Context, f *planFixture) error {
			c, err := f.s.CountByState(ctx, ledger.ListFilter{AllTenants: true, Target: "payments"})
			if err == nil && !c.Capped[ledger.Succeeded] {
				err = fmt.Errorf("SUCCEEDED counted %d, not capped", c.Counts[ledger.Succeeded])
			}
			return err
		}},
	{name: "CountByState/AllTenantsByAge", want: []string{"operation_ledger_state_created", "operation_ledger_created"},
		run: func(ctx context.Context, f *planFixture) error {
			after := f.now.Add(-24 * time.Hour)
			_, err := f.s.CountByState(ctx, ledger.ListFilter{AllTenants: true, CreatedAfter: &after})
			return err
		}},
	// The console's search box: Find's look-ups over a set of tenants; over
	// every tenant, a skip over the primary key for the tenants first. An
	// object id is one look-up, by the primary key or, since 00038, by the
	// object's own index.
	{name: "Search/Tenants", want: []string{"operation_ledger_intent", "operation_ledger_remote_ref", "operation_objects_pkey|operation_objects_object"},
		run: func(ctx context.Context, f *planFixture) error {
			return found(f.s.Search(ctx, ledger.SearchFilter{Tenants: planTenants, Ref: f.settled.IntentRef}))
		}},
	{name: "Search/TenantsByID", want: []string{"operation_ledger_intent", "operation_ledger_remote_ref",
		"operation_ledger_pkey", "operation_ledger_remote_key", "operation_objects_pkey|operation_objects_object"},
		run: func(ctx context.Context, f *planFixture) error {
			return found(f.s.Search(ctx, ledger.SearchFilter{Tenants: planTenants, Ref: f.settled.ID}))
		}},
	{name: "Search/AllTenants", want: []string{"operation_ledger_intent", "operation_ledger_remote_ref", "operation_objects_pkey|operation_objects_object"},
		run: func(ctx context.Context, f *planFixture) error {
			return found(f.s.Search(ctx, ledger.SearchFilter{AllTenants: true, Ref: f.settled.RemoteRef}))
		}},
	{name: "Search/AllTenantsByID", want: []string{"operation_ledger_intent", "operation_ledger_remote_ref",
		"operation_ledger_pkey", "operation_ledger_remote_key", "operation_objects_pkey|operation_objects_object"},
		run: func(ctx context.Context, f *planFixture) error {
			return found(f.s.Search(ctx, ledger.SearchFilter{AllTenants: true, Ref: f.settled.RemoteKey}))
		}},
	{name: "Claim", want: []string{"operation_ledger_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		op, _, err := f.setup.Create(ctx, planOp("plan-claim", 100))
		if err != nil {
			return err
		}
		f.claimed, err = f.s.Claim(ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute)
		return err
	}},
	{name: "Claim/NotClaimable", want: []string{"operation_ledger_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.Claim(ctx, f.settled.Tenant, f.settled.ID, f.settled.PayloadHash, time.Minute)
		return wantCode(err, ledger.EInvalidTransition, ledger.EStaleFence)
	}},
	// ClaimBatch, SweepExpired and LeaseUnknown pick rows through their
	// partial index, then update them. The planner joins the picked rows
	// back either by primary key or by a hash join over a second scan of the
	// partial index, by its estimates (which for the sweep and the lease are
	// 100 to 250 times too low): so only the partial index is required. See
	// docs/performance.md for what each costs.
	{name: "ClaimBatch", want: []string{"operation_ledger_prepared_tenant"},
		run: func(ctx context.Context, f *planFixture) error {
			var err error
			f.batch, err = f.s.ClaimBatch(ctx, 100, time.Minute)
			if err == nil && len(f.batch) == 0 {
				err = fmt.Errorf("claimed nothing")
			}
			return err
		}},
	{name: "Record", want: []string{"operation_ledger_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.Record(ctx, succeeded(f.claimed))
		return err
	}},
	{name: "Record/StaleFence", want: []string{"operation_ledger_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.Record(ctx, succeeded(f.claimed))
		return wantCode(err, ledger.EStaleFence)
	}},
	{name: "RecordBatch", want: []string{"operation_ledger_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		var outcomes []ledger.Outcome
		for _, op := range f.batch {
			outcomes = append(outcomes, succeeded(op))
		}
		errs, err := f.s.RecordBatch(ctx, outcomes)
		if err == nil {
			for _, e := range errs {
				if e != nil {
					return e
				}
			}
		}
		return err
	}},
	{name: "SweepExpired", want: []string{"operation_ledger_leased"},
		run: func(ctx context.Context, f *planFixture) error {
			n, err := f.s.SweepExpired(ctx)
			if err == nil && n == 0 {
				err = fmt.Errorf("swept nothing")
			}
			return err
		}},
	{name: "LeaseUnknown", want: []string{"operation_ledger_unknown_tenant"},
		run: func(ctx context.Context, f *planFixture) error {
			ops, err := f.s.LeaseUnknown(ctx, 100, time.Minute)
			if err == nil && len(ops) == 0 {
				err = fmt.Errorf("leased nothing")
			}
			return err
		}},
	// A saturated target is filtered on the heap row after the same probe.
	{name: "LeaseUnknown/SkipTargets", want: []string{"operation_ledger_unknown_tenant"},
		run: func(ctx context.Context, f *planFixture) error {
			ops, err := f.s.LeaseUnknown(ctx, 100, time.Minute, "payouts")
			if err == nil && len(ops) == 0 {
				err = fmt.Errorf("leased nothing")
			}
			for _, op := range ops {
				if op.Target == "payouts" {
					return fmt.Errorf("leased %s of the skipped target", op.ID)
				}
			}
			return err
		}},
	{name: "LeaseOperation", want: []string{"operation_ledger_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.LeaseOperation(ctx, f.unknown.Tenant, f.unknown.ID, time.Minute)
		return err
	}},
	// The join to the operations is by primary key from about a million
	// operations; on smaller tables a hash join over the tenant's rows.
	{name: "Transitions", want: []string{"operation_events_tenant_at"},
		run: func(ctx context.Context, f *planFixture) error {
			_, err := f.s.Transitions(ctx, "tenant-1", ledger.Since(f.now.Add(-30*24*time.Hour)))
			return err
		}},
	{name: "Transitions/Past", want: []string{"operation_events_tenant_at"},
		run: func(ctx context.Context, f *planFixture) error {
			_, err := f.s.Transitions(ctx, "tenant-1", ledger.Window{Since: f.now.AddDate(0, 0, -60), Until: f.now.AddDate(0, 0, -30)})
			return err
		}},
	// The auditor's target is nearly every row of the load: the planner may
	// as well walk a created_at index of 00015 and skip the few others.
	{name: "AuditBatch/First", want: []string{"operation_ledger_audit|operation_ledger_created|operation_ledger_target_created"}, run: func(ctx context.Context, f *planFixture) error {
		var err error
		_, f.audit, err = f.s.AuditBatch(ctx, "payments", ledger.Cursor{}, 100)
		return err
	}},
	{name: "AuditBatch/Next", want: []string{"operation_ledger_audit|operation_ledger_created|operation_ledger_target_created"}, run: func(ctx context.Context, f *planFixture) error {
		_, _, err := f.s.AuditBatch(ctx, "payments", f.audit, 100)
		return err
	}},
	{name: "RecordFinding", want: []string{"operation_ledger_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.RecordFinding(ctx, ledger.Finding{Tenant: f.settled.Tenant, OperationID: f.settled.ID,
			Kind: ledger.FindingLoss, Evidence: []byte(`{"lookups":1}`), Escalated: true})
		return err
	}},
	{name: "Findings", want: []string{"audit_findings_tenant_found"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.Findings(ctx, "tenant-1", f.now.Add(-30*24*time.Hour))
		return err
	}},
	// The figures read the rollups of 00018, never the event log.
	{name: "FigureRollup", want: []string{"figure_days_pkey", "figure_episodes_tenant_entered", "figure_escalations_tenant_at"},
		run: func(ctx context.Context, f *planFixture) error {
			_, err := f.s.FigureRollup(ctx, "tenant-1", ledger.DaysEnding(f.now, 30))
			return err
		}},
	{name: "FigureRollup/Past", want: []string{"figure_days_pkey", "figure_episodes_tenant_entered", "figure_escalations_tenant_at"},
		run: func(ctx context.Context, f *planFixture) error {
			w := ledger.DaysEnding(f.now, 30)
			_, err := f.s.FigureRollup(ctx, "tenant-1", ledger.Window{Since: w.Since.AddDate(0, 0, -30), Until: w.Since})
			return err
		}},
	// The all-tenants overview: six statements over every tenant at once,
	// each a walk of the tenant index of its table.
	{name: "FiguresOf", want: []string{"figure_days_pkey", "figure_episodes_tenant_entered", "figure_escalations_tenant_at",
		"payload_conflicts_tenant", "audit_findings_tenant_found", "operation_ledger_tenant_state"},
		run: func(ctx context.Context, f *planFixture) error {
			_, err := f.s.FiguresOf(ctx, planTenants, ledger.DaysEnding(f.now, 30))
			return err
		}},
	{name: "Tenants", want: []string{"operation_ledger_tenant_created|operation_ledger_intent|operation_ledger_tenant_state|operation_ledger_remote_ref"},
		run: func(ctx context.Context, f *planFixture) error {
			_, err := f.s.Tenants(ctx)
			return err
		}},
	// The metrics collector's one statement, every few seconds: the live
	// states through a partial index that leaves out SUCCEEDED, the open
	// quarantine through its own.
	{name: "Gauges", want: []string{"operation_ledger_state_created|operation_ledger_tenant_state", "quarantine_open"},
		run: func(ctx context.Context, f *planFixture) error {
			_, err := f.s.Gauges(ctx, f.now)
			return err
		}},
	{name: "CountFindings", want: []string{"audit_findings_tenant_found"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.CountFindings(ctx, "tenant-1", ledger.FindingDuplicate, ledger.Since(f.now.Add(-30*24*time.Hour)))
		return err
	}},
	{name: "CountFindings/Past", want: []string{"audit_findings_tenant_found"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.CountFindings(ctx, "tenant-1", ledger.FindingDuplicate, ledger.Window{Since: f.now.AddDate(0, 0, -60), Until: f.now.AddDate(0, 0, -30)})
		return err
	}},
	// audit_findings holds about one row per thousand operations: at the
	// default load the planner may read it whole, so these cases name no
	// index; at 10 million rows it takes audit_findings_waiting,
	// audit_findings_operation and the primary key.
	{name: "ListFindings/Tenants", run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.ListFindings(ctx, ledger.FindingFilter{Tenants: []string{"tenant-1", "tenant-2"}})
		return err
	}},
	{name: "ListFindings/Open", run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.ListFindings(ctx, ledger.FindingFilter{AllTenants: true, Open: true})
		return err
	}},
	{name: "ListFindings/Operation", run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.ListFindings(ctx, ledger.FindingFilter{Tenants: []string{f.settled.Tenant}, OperationID: f.settled.ID})
		return err
	}},
	// A search is its own statement, driven by the findings naming the
	// reference (00038): operation_objects, one row for each object id,
	// is big, and its object index finds the id for every tenant.
	{name: "ListFindings/SearchObject", want: []string{"operation_objects_object"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.ListFindings(ctx, ledger.FindingFilter{AllTenants: true, Open: true, Ref: f.settled.RemoteRef})
		return err
	}},
	{name: "ListFindings/SearchOperationPrefix", run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.ListFindings(ctx, ledger.FindingFilter{Tenants: []string{f.settled.Tenant}, Ref: f.settled.ID[:8]})
		return err
	}},
	{name: "Finding", run: func(ctx context.Context, f *planFixture) error {
		fs, err := f.setup.ListFindings(ctx, ledger.FindingFilter{Tenants: []string{f.settled.Tenant}, OperationID: f.settled.ID})
		if err != nil || len(fs) == 0 {
			return errors.Join(err, errNoFixture)
		}
		_, err = f.s.Finding(ctx, f.settled.Tenant, fs[0].ID)
		return err
	}},
	{name: "AcknowledgeFinding", run: func(ctx context.Context, f *planFixture) error {
		fs, err := f.setup.ListFindings(ctx, ledger.FindingFilter{Tenants: []string{f.settled.Tenant},
			OperationID: f.settled.ID, Open: true})
		if err != nil || len(fs) == 0 {
			return errors.Join(err, errNoFixture)
		}
		return f.s.AcknowledgeFinding(ctx, f.settled.Tenant, fs[0].ID, "seen; refund under way")
	}},
	{name: "AuditPosition", run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.AuditPosition(ctx, "payments")
		return err
	}},
	{name: "SaveAuditPosition", run: func(ctx context.Context, f *planFixture) error {
		return f.s.SaveAuditPosition(ctx, "payments", f.audit)
	}},
	{name: "SetCallback", run: func(ctx context.Context, f *planFixture) error {
		return f.s.SetCallback(ctx, "tenant-20", "https://tenant-20.example/settle", make([]byte, 32), f.now)
	}},
	{name: "GetCallback", run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.GetCallback(ctx, "tenant-1")
		return err
	}},
	{name: "RemoveCallback", want: []string{"callback_outbox_due"}, run: func(ctx context.Context, f *planFixture) error {
		return f.s.RemoveCallback(ctx, "tenant-9")
	}},
	{name: "ClaimNotifications", want: []string{"callback_outbox_due", "callback_outbox_pkey"},
		run: func(ctx context.Context, f *planFixture) error {
			var err error
			f.notes, err = f.s.ClaimNotifications(ctx, 100, time.Minute)
			if err == nil && len(f.notes) < 2 {
				err = fmt.Errorf("claimed %d notifications, want 2 or more", len(f.notes))
			}
			return err
		}},
	{name: "MarkDelivered", want: []string{"callback_outbox_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		if len(f.notes) < 2 {
			return errNoFixture
		}
		return f.s.MarkDelivered(ctx, f.notes[0].ID, 200, f.now)
	}},
	{name: "MarkFailed", want: []string{"callback_outbox_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		if len(f.notes) < 2 {
			return errNoFixture
		}
		return f.s.MarkFailed(ctx, f.notes[1].ID, 503, "unavailable", f.now.Add(time.Minute))
	}},
	{name: "GiveUpNotification", want: []string{"callback_outbox_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		if len(f.notes) < 2 {
			return errNoFixture
		}
		return f.s.GiveUpNotification(ctx, f.notes[1].ID, 503, "unavailable", f.now)
	}},
	// The tenant's delivery status: its row, and its pending notifications
	// counted over the outbox's pending index.
	{name: "CallbackDelivery", want: []string{"callback_outbox_due"}, run: func(ctx context.Context, f *planFixture) error {
		if len(f.notes) < 2 {
			return errNoFixture
		}
		_, err := f.s.CallbackDelivery(ctx, f.notes[1].Tenant)
		return err
	}},
	{name: "NoteCallbackAttempt", want: []string{"callback_outbox_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		if len(f.notes) < 2 {
			return errNoFixture
		}
		return f.s.NoteCallbackAttempt(ctx, ledger.CallbackAttempt{ID: f.notes[1].ID, At: f.now, Status: 503, Error: "unavailable"})
	}},
	// The given-up rows of a tenant: the one given up above, so both the
	// count and the list run.
	{name: "GivenUpNotifications", want: []string{"callback_outbox_gave_up"}, run: func(ctx context.Context, f *planFixture) error {
		if len(f.notes) < 2 {
			return errNoFixture
		}
		g, err := f.s.GivenUpNotifications(ctx, f.notes[1].Tenant, 5)
		if err == nil && len(g.Latest) != 1 {
			err = fmt.Errorf("given up %+v, want the one", g)
		}
		return err
	}},
	{name: "RetryGivenUp", want: []string{"callback_outbox_gave_up"}, run: func(ctx context.Context, f *planFixture) error {
		if len(f.notes) < 2 {
			return errNoFixture
		}
		_, err := f.s.RetryGivenUp(ctx, f.notes[1].Tenant, f.now)
		return err
	}},
	{name: "Notifications", want: []string{"callback_outbox_tenant_id_operation_id_state_key"},
		run: func(ctx context.Context, f *planFixture) error {
			_, err := f.s.Notifications(ctx, f.settled.Tenant, f.settled.ID)
			return err
		}},
	// Escalation notices: a queue that holds the escalations not yet
	// delivered, a handful; the load leaves it empty, so the marks meet
	// an unknown id (ENotFound), which still runs their statements.
	{name: "ClaimEscalationNotices", run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.ClaimEscalationNotices(ctx, 100, time.Minute)
		return err
	}},
	{name: "MarkEscalationNoticeDelivered", run: func(ctx context.Context, f *planFixture) error {
		return notFound(f.s.MarkEscalationNoticeDelivered(ctx, -1, 200, f.now))
	}},
	{name: "MarkEscalationNoticeFailed", run: func(ctx context.Context, f *planFixture) error {
		return notFound(f.s.MarkEscalationNoticeFailed(ctx, -1, 503, "unavailable", f.now.Add(time.Minute)))
	}},
	{name: "GiveUpEscalationNotice", run: func(ctx context.Context, f *planFixture) error {
		return notFound(f.s.GiveUpEscalationNotice(ctx, -1, 503, "unavailable", f.now))
	}},
	{name: "GivenUpEscalationNotices", run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.GivenUpEscalationNotices(ctx, f.settled.Tenant, 5)
		return err
	}},
	{name: "RetryGivenUpEscalationNotices", run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.RetryGivenUpEscalationNotices(ctx, f.settled.Tenant, f.now)
		return err
	}},
	{name: "EscalationNotices", run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.EscalationNotices(ctx, f.settled.Tenant, f.settled.ID)
		return err
	}},
	// One row per team and day.
	{name: "RecordDigest", run: func(ctx context.Context, f *planFixture) error {
		return f.s.RecordDigest(ctx, "Payments team", "2026-12-01", f.now)
	}},
	{name: "DigestSent", want: []string{"escalation_digests_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		sent, err := f.s.DigestSent(ctx, "Payments team", "2026-12-01")
		if err == nil && !sent {
			err = fmt.Errorf("the recorded digest is not seen")
		}
		return err
	}},
	{name: "Receive/New", run: func(ctx context.Context, f *planFixture) error {
		_, dup, err := f.s.Receive(ctx, "payments", []byte(`{"id":"evt-plan"}`))
		if err == nil && dup {
			err = fmt.Errorf("new delivery taken for a duplicate")
		}
		return err
	}},
	{name: "Receive/Duplicate", want: []string{"webhook_inbox_target_body_sha256_key"},
		run: func(ctx context.Context, f *planFixture) error {
			_, dup, err := f.s.Receive(ctx, "payments", []byte(`{"id":"evt-plan"}`))
			if err == nil && !dup {
				err = fmt.Errorf("duplicate delivery taken for a new one")
			}
			return err
		}},
	{name: "ClaimDeliveries", want: []string{"webhook_inbox_due", "webhook_inbox_pkey"},
		run: func(ctx context.Context, f *planFixture) error {
			var err error
			f.inbox, err = f.s.ClaimDeliveries(ctx, 100, time.Minute)
			if err == nil && len(f.inbox) < 2 {
				err = fmt.Errorf("claimed %d deliveries, want 2 or more", len(f.inbox))
			}
			return err
		}},
	{name: "FinishDelivery", want: []string{"webhook_inbox_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		if len(f.inbox) < 2 {
			return errNoFixture
		}
		return f.s.FinishDelivery(ctx, f.inbox[0].ID, "applied")
	}},
	{name: "FailDelivery", want: []string{"webhook_inbox_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		if len(f.inbox) < 2 {
			return errNoFixture
		}
		return f.s.FailDelivery(ctx, f.inbox[1].ID, f.now.Add(time.Minute), "store refused the event")
	}},
	{name: "DeferDelivery", want: []string{"webhook_inbox_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		if len(f.inbox) < 2 {
			return errNoFixture
		}
		return f.s.DeferDelivery(ctx, f.inbox[1].ID, f.now.Add(time.Minute), "operation busy")
	}},
	{name: "Quarantine", run: func(ctx context.Context, f *planFixture) error {
		var err error
		f.qid, err = f.s.Quarantine(ctx, ledger.QuarantineItem{Target: "payments", Reason: "unknown reference",
			EventID: "evt-plan"})
		return err
	}},
	{name: "ListQuarantine/Open", want: []string{"quarantine_open_id|quarantine_open|quarantine_pkey|quarantine_scope"},
		run: func(ctx context.Context, f *planFixture) error {
			_, err := f.s.ListQuarantine(ctx, ledger.QuarantineFilter{Open: true, AllTenants: true, Unattributed: true})
			return err
		}},
	{name: "ListQuarantine/All", want: []string{"quarantine_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.ListQuarantine(ctx, ledger.QuarantineFilter{AllTenants: true, Unattributed: true})
		return err
	}},
	{name: "ListQuarantine/Tenants", want: []string{"quarantine_scope|quarantine_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.ListQuarantine(ctx, ledger.QuarantineFilter{Tenants: []string{"tenant-1", "tenant-2"}})
		return err
	}},
	// A search by reference walks the reference indexes once the
	// quarantine is large (a BitmapOr of a few rows) rather than the scope.
	{name: "ListQuarantine/Page", want: []string{"quarantine_scope|quarantine_pkey|quarantine_event_id|quarantine_reference"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.ListQuarantine(ctx, ledger.QuarantineFilter{Tenants: []string{"tenant-1"}, After: f.qid + 1, Limit: 51,
			Ref: "evt-plan"})
		return err
	}},
	// The id bound reads quarantine_time's entries; when the cutoff covers
	// nearly every item, as here, the planner reads the small heap instead.
	{name: "ListQuarantine/OlderThan", want: []string{"quarantine_open_id|quarantine_open|quarantine_pkey|quarantine_scope"},
		seq: []string{"quarantine: the newest id before a cutoff that nearly every item is older than"},
		run: func(ctx context.Context, f *planFixture) error {
			before := f.now.Add(-time.Hour)
			_, err := f.s.ListQuarantine(ctx, ledger.QuarantineFilter{Open: true, AllTenants: true, Before: &before})
			return err
		}},
	// An open item by id: the primary key, or the open items' id index,
	// which holds the same id among fewer entries.
	{name: "ResolveQuarantine", want: []string{"quarantine_pkey|quarantine_open_id"}, run: func(ctx context.Context, f *planFixture) error {
		return f.s.ResolveQuarantine(ctx, "", f.qid, "ignored")
	}},
	{name: "QuarantineItem", want: []string{"quarantine_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.QuarantineItem(ctx, "", f.qid)
		return err
	}},
	{name: "LinkQuarantine", want: []string{"operation_ledger_pkey", "quarantine_pkey|quarantine_open_id|quarantine_scope"},
		run: func(ctx context.Context, f *planFixture) error {
			id, err := f.setup.Quarantine(ctx, ledger.QuarantineItem{Target: "payments", Reason: "unknown reference",
				EventID: "evt-plan-link", Tenant: f.unknown.Tenant})
			if err != nil {
				return err
			}
			return f.s.LinkQuarantine(ctx, f.unknown.Tenant, id, f.unknown.ID, "reference in the event metadata")
		}},
	{name: "Actions/Tenant", want: []string{"actions_tenant"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.Actions(ctx, ledger.ActionFilter{Tenant: "tenant-1"})
		return err
	}},
	{name: "Actions/Operation", want: []string{"actions_operation|actions_tenant"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.Actions(ctx, ledger.ActionFilter{Tenant: f.escalated[0].Tenant, OperationID: f.escalated[0].ID})
		return err
	}},
	{name: "Propose", want: []string{"operation_ledger_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		var err error
		f.proposal, err = f.s.Propose(ctx, proposal(f.escalated[0]))
		return err
	}},
	// Approve's UPDATE names one ESCALATED operation: the planner may take
	// the primary key or the (rare-state) tenant_state index; both find it
	// at once.
	{name: "Approve", want: []string{"resolutions_pkey|resolutions_open", "operation_ledger_pkey|operation_ledger_tenant_state"},
		run: func(ctx context.Context, f *planFixture) error {
			bob := ledger.NewContextWithActor(ctx, ledger.Actor{Subject: "cli:bob", Name: "bob", Role: "owner"})
			_, err := f.s.Approve(bob, f.proposal.Tenant, f.proposal.ID)
			return err
		}},
	// ApproveSupersede is Approve plus one creation: the successor's
	// insert (and its event) goes by the intent's unique index.
	{name: "ApproveSupersede", want: []string{"resolutions_pkey|resolutions_open", "operation_ledger_pkey|operation_ledger_tenant_state"},
		run: func(ctx context.Context, f *planFixture) error {
			op := f.escalated[2]
			r, err := f.setup.Propose(ctx, ledger.Resolution{Tenant: op.Tenant, OperationID: op.ID,
				Kind: ledger.KindSupersede, To: ledger.FailedTerminal, Reason: "absent at the target"})
			if err != nil {
				return err
			}
			bob := ledger.NewContextWithActor(ctx, ledger.Actor{Subject: "cli:bob", Name: "bob", Role: "owner"})
			keep := func(payload []byte, _, _ string) ([]byte, error) { return payload, nil }
			_, _, err = f.s.ApproveSupersede(bob, r.Tenant, r.ID, keep)
			return err
		}},
	{name: "Reject", want: []string{"resolutions_pkey|resolutions_open"}, run: func(ctx context.Context, f *planFixture) error {
		r, err := f.setup.Propose(ctx, proposal(f.escalated[1]))
		if err != nil {
			return err
		}
		return f.s.Reject(ctx, r.Tenant, r.ID, "no evidence")
	}},
	{name: "Resolutions/Open", want: []string{"resolutions_tenant|resolutions_open"},
		run: func(ctx context.Context, f *planFixture) error {
			_, err := f.s.Resolutions(ctx, f.escalated[0].Tenant, true)
			return err
		}},
	{name: "OpenResolutions/Tenants", want: []string{"resolutions_open_all|resolutions_open|resolutions_tenant"},
		run: func(ctx context.Context, f *planFixture) error {
			_, err := f.s.OpenResolutions(ctx, []string{f.escalated[0].Tenant, "tenant-2"}, false)
			return err
		}},
	{name: "OpenResolutions/All", want: []string{"resolutions_open_all|resolutions_open"},
		run: func(ctx context.Context, f *planFixture) error {
			_, err := f.s.OpenResolutions(ctx, nil, true)
			return err
		}},
	{name: "Resolutions/All", want: []string{"resolutions_tenant"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.Resolutions(ctx, f.escalated[0].Tenant, false)
		return err
	}},
	{name: "CreateTenant", run: func(ctx context.Context, f *planFixture) error {
		return f.s.CreateTenant(ctx, "tenant-1", f.now)
	}},
	{name: "TenantKnown", want: []string{"tenants_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.TenantKnown(ctx, "tenant-1")
		return err
	}},
	// The administrators' list to pick from: one row per customer.
	{name: "ListTenants", seq: []string{"tenants: every tenant, from a table of one row per customer"},
		run: func(ctx context.Context, f *planFixture) error {
			_, err := f.s.ListTenants(ctx)
			return err
		}},
	{name: "CreateToken", run: func(ctx context.Context, f *planFixture) error {
		h := sha256.Sum256([]byte("plan-token"))
		return f.s.CreateToken(ctx, ledger.Token{ID: "tok_0123456789ab", Tenant: "tenant-1", Name: "plan",
			Hash: h[:], CreatedAt: f.now})
	}},
	// At most once a minute per token, by its primary key.
	{name: "TouchToken", want: []string{"api_tokens_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.TouchToken(ctx, "tenant-1", "tok_0123456789ab", f.now)
		return err
	}},
	// Every API request looks its token up.
	{name: "TokenByHash", want: []string{"api_tokens_token_hash_key"}, run: func(ctx context.Context, f *planFixture) error {
		h := sha256.Sum256([]byte("plan-token"))
		_, err := f.s.TokenByHash(ctx, h[:])
		return err
	}},
	// A tenant's tokens: a small table (one row per issued token), read whole.
	{name: "ListTokens", seq: []string{"api_tokens: a tenant's tokens, from a table of one row per issued token"},
		run: func(ctx context.Context, f *planFixture) error {
			_, err := f.s.ListTokens(ctx, "tenant-1")
			return err
		}},
	{name: "RevokeToken", want: []string{"api_tokens_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		return f.s.RevokeToken(ctx, "tenant-1", "tok_0123456789ab", f.now)
	}},
	{name: "SetTenantParams/First", want: []string{"tenant_params_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		return f.s.SetTenantParams(ctx, "tenant-1", map[string]string{"account": "acct_plan"}, nil, false)
	}},
	// A change counts the tenant's unfinished operations: the few
	// rows of the partial index, never the tenant's history.
	{name: "SetTenantParams/Refused", want: []string{"operation_ledger_tenant_state"}, run: func(ctx context.Context, f *planFixture) error {
		return wantCode(f.s.SetTenantParams(ctx, "tenant-1", map[string]string{"account": "acct_other"}, nil, false), ledger.EConflict)
	}},
	{name: "SetTenantParams/Forced", want: []string{"operation_ledger_tenant_state"}, run: func(ctx context.Context, f *planFixture) error {
		return f.s.SetTenantParams(ctx, "tenant-1", map[string]string{"account": "acct_other"}, []string{"region"}, true)
	}},
	{name: "TenantParams", want: []string{"tenant_params_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.TenantParams(ctx, "tenant-1")
		return err
	}},
	{name: "ListTenantParams", want: []string{"tenant_params_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.ListTenantParams(ctx, "tenant-1")
		return err
	}},
	{name: "RecordDrill", run: func(ctx context.Context, f *planFixture) error {
		return f.s.RecordDrill(ctx, []ledger.DrillResult{{RunID: "plan-run", Target: "payments", Number: 1, Name: "response_lost", Passed: true}})
	}},
	{name: "LatestDrill", want: []string{"drill_results_target|drill_results_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.LatestDrill(ctx, "payments")
		return err
	}},
	{name: "SchemaFacts", run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.SchemaFacts(ctx)
		return err
	}},
	// One row per cluster-wide duty: a table never big enough to index.
	{name: "AcquireLeader", run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.AcquireLeader(ctx, "auditor", "replica-plan", 30*time.Second)
		return err
	}},
	{name: "CurrentLeader", run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.CurrentLeader(ctx, "auditor")
		return err
	}},
	{name: "ReleaseLeader", run: func(ctx context.Context, f *planFixture) error {
		return f.s.ReleaseLeader(ctx, "auditor", "replica-plan")
	}},
	{name: "CreateSession", run: func(ctx context.Context, f *planFixture) error {
		return f.s.CreateSession(ctx, planSession(f.now))
	}},
	{name: "GetSession", want: []string{"console_sessions_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.GetSession(ctx, planSession(f.now).IDHash)
		return err
	}},
	{name: "TouchSession", want: []string{"console_sessions_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.TouchSession(ctx, planSession(f.now).IDHash, time.Hour)
		return err
	}},
	{name: "DeleteSession", want: []string{"console_sessions_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		return f.s.DeleteSession(ctx, planSession(f.now).IDHash)
	}},
	{name: "RevokeSessions", want: []string{"console_sessions_subject"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.RevokeSessions(ctx, "oidc:plan")
		return err
	}},
	{name: "KnownPerson", want: []string{"console_sessions_subject", "actions_tenant"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.KnownPerson(ctx, "acme", "oidc:plan")
		return err
	}},
	{name: "ListSessions", seq: []string{"console_sessions: `settle session list` lists every live session, and the table holds live sessions only"},
		run: func(ctx context.Context, f *planFixture) error {
			_, err := f.s.ListSessions(ctx, "")
			return err
		}},
	{name: "DeleteExpiredSessions", seq: []string{"console_sessions: the idle expiry has no index; the table holds live sessions only"},
		run: func(ctx context.Context, f *planFixture) error {
			_, err := f.s.DeleteExpiredSessions(ctx)
			return err
		}},
	// Retention runs last: it deletes rows other cases read. The dry run
	// counts whatever the cutoffs cover, the whole history at worst.
	{name: "CountRetention", want: []string{"operation_ledger_final_updated", "operation_ledger_redactable"},
		seq: []string{"webhook_inbox: counting the processed deliveries of the whole purge window, most of the table",
			"operation_events: counting the events of every operation to delete, most of the table at worst",
			"callback_outbox: counting the notifications of every operation to delete, most of the table at worst",
			"payload_conflicts: counting the conflicts of every operation to delete, most of the table at worst"},
		run: func(ctx context.Context, f *planFixture) error {
			_, err := f.s.CountRetention(ctx, ledger.RetentionCutoffs{Redact: f.now.Add(-time.Hour),
				Delete: f.now.Add(-30 * 24 * time.Hour), Purge: f.now.Add(-time.Hour)})
			return err
		}},
	{name: "RedactPayloads", want: []string{"operation_ledger_redactable"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.RedactPayloads(ctx, f.now.Add(-time.Hour), 100)
		return err
	}},
	{name: "DeleteOperations", want: []string{"operation_ledger_final_updated", "operation_events_operation"},
		run: func(ctx context.Context, f *planFixture) error {
			n, err := f.s.DeleteOperations(ctx, f.now.Add(-time.Hour), 100)
			if err == nil && n.Operations != 100 {
				err = fmt.Errorf("deleted %d operations, want 100", n.Operations)
			}
			return err
		}},
	{name: "PurgeReviewed", want: []string{"quarantine_resolved|quarantine_pkey", "webhook_inbox_processed"},
		run: func(ctx context.Context, f *planFixture) error {
			_, err := f.s.PurgeReviewed(ctx, f.now.Add(-time.Hour), 100)
			return err
		}},
	// A tenant of a few operations among everyone's: each step reads only
	// the tenant's rows.
	{name: "EraseTenant", want: []string{"operation_ledger_tenant_state", "operation_events_operation"},
		run: func(ctx context.Context, f *planFixture) error {
			for i := range 3 {
				n := planOp(fmt.Sprintf("erase-%d", i), 100+i)
				n.Tenant = "tenant-erase"
				if _, _, err := f.setup.Create(ctx, n); err != nil {
					return err
				}
			}
			e, err := f.s.EraseTenant(ctx, "tenant-erase", true)
			if err == nil && e.Counts.Operations != 3 {
				err = fmt.Errorf("erased %d operations, want 3", e.Counts.Operations)
			}
			return err
		}},
	{name: "Erasures", want: []string{"tenant_erasures_tenant|tenant_erasures_pkey"}, run: func(ctx context.Context, f *planFixture) error {
		_, err := f.s.Erasures(ctx, "tenant-erase")
		return err
	}},
	// The observations table holds what CLI commands committed for seconds,
	// until a server drains it: always small.
	{name: "RecordObservations", run: func(ctx context.Context, f *planFixture) error {
		var c ledger.Commit
		c.Add(f.settled, ledger.InFlight)
		c.Refuse("tenant-1")
		return f.s.RecordObservations(ctx, c)
	}},
	{name: "DrainObservations", run: func(ctx context.Context, f *planFixture) error {
		c, err := f.s.DrainObservations(ctx, 500)
		if err == nil && c.Len() != 2 {
			err = fmt.Errorf("drained %d observations, want 2", c.Len())
		}
		return err
	}},
}

// planSession is the console session the session cases share.
func planSession(now time.Time) ledger.Session {
	h := sha256.Sum256([]byte("plan-session"))
	return ledger.Session{IDHash: h[:], Subject: "oidc:plan", Name: "Plan", CreatedAt: now, LastSeenAt: now,
		IdleExpiresAt: now.Add(time.Hour), ExpiresAt: now.Add(12 * time.Hour)}
}

// notFound turns the expected ENotFound into success.
func notFound(err error) error {
	if ledger.ErrorCode(err) == ledger.ENotFound {
		return nil
	}
	if err == nil {
		return fmt.Errorf("an unknown id was found")
	}
	return err
}

// errNoFixture: an earlier case that should have made this one's rows failed.
var errNoFixture = errors.New("no rows to work on: an earlier case failed")

func succeeded(op ledger.Operation) ledger.Outcome {
	return ledger.Outcome{Tenant: op.Tenant, OperationID: op.ID, Fence: op.Fence, From: ledger.InFlight,
		To: ledger.Succeeded, RemoteRef: "ref-plan-" + op.ID, Actor: ledger.ActorExecutor, Reason: "created"}
}

func proposal(op ledger.Operation) ledger.Resolution {
	return ledger.Resolution{Tenant: op.Tenant, OperationID: op.ID, To: ledger.Succeeded,
		RemoteRef: "ref-manual-" + op.ID, Reason: "found in the target's dashboard"}
}

// wantCode accepts err when its code is one of codes.
func wantCode(err error, codes ...ledger.Code) error {
	if err == nil {
		return fmt.Errorf("no error, want %v", codes)
	}
	if !slices.Contains(codes, ledger.ErrorCode(err)) {
		return err
	}
	return nil
}

// planTenants is a console user's set of tenants.
var planTenants = []string{"tenant-1", "tenant-2", "tenant-3"}

// wantPage accepts a full first or next page.
func wantPage(p ledger.Page, err error) error {
	if err == nil && (len(p.Operations) < ledger.DefaultListLimit || p.Next == "") {
		err = fmt.Errorf("listed %d operations, next %q: want a full page and more", len(p.Operations), p.Next)
	}
	return err
}

func found(ops []ledger.Operation, err error) error {
	if err == nil && len(ops) == 0 {
		return fmt.Errorf("found nothing")
	}
	return err
}
