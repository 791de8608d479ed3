package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// DrillResult is the recorded outcome of one fault-injection test of a
// drill (`settle drill`) against one target. The go/no-go gate reads the
// newest run per target as the evidence for its runtime controls.
type DrillResult struct {
	RunID  string // the same for every test of one drill run
	Target string
	Number int    // the paper's fault-injection test number (1-6), or 7 for legitimate repeats
	Name   string // short machine name, e.g. "response_lost"
	// Passed is whether the expectation held. A test that could not run
	// because the target lacks a capability is NotApplicable; Passed then
	// says whether that absence is itself safe (see docs/runbook.md).
	Passed        bool
	NotApplicable bool
	Reason        string         // one payload-free sentence
	Evidence      map[string]any // states, counts, remote ids; never a payload value
	RanAt         time.Time      // set by the store when zero
	Version       string         // the settle build that ran the drill ("" when unknown)
}

// SchemaFacts are what the live database shows about the ledger's schema,
// the evidence of go/no-go controls 2 to 5.
type SchemaFacts struct {
	// Version is the newest applied migration; Latest the newest this
	// build embeds.
	Version, Latest int64
	// IntentUnique: a unique index or constraint on (tenant_id, type,
	// intent_ref) of operation_ledger.
	IntentUnique bool
	// PayloadHash, Fence, Lease: operation_ledger has payload_hash,
	// fence_token and lease_expires_at columns.
	PayloadHash, Fence, Lease bool
	// Index names the unique index found ("" when none).
	Index string
}

// DrillStore keeps drill results and reports on the live schema. Both
// stores implement it.
type DrillStore interface {
	// RecordDrill stores the results of one run in one transaction.
	// EInvalid for an empty run, a result without target, run id, name or
	// a number outside 1-99.
	RecordDrill(ctx context.Context, results []DrillResult) error
	// LatestDrill returns the results of the target's newest run, by test
	// number, or ENotFound when the target was never drilled.
	LatestDrill(ctx context.Context, target string) ([]DrillResult, error)
	// SchemaFacts inspects the live schema.
	SchemaFacts(ctx context.Context) (SchemaFacts, error)
}

// ValidateDrill checks a run before a store writes it.
func ValidateDrill(results []DrillResult) error {
	if len(results) == 0 {
		return Errorf(EInvalid, "a drill run has at least one result")
	}
	for _, r := range results {
		switch {
		case r.RunID == "" || r.RunID != results[0].RunID:
			return Errorf(EInvalid, "every result of a drill run carries the run's id")
		case r.Target == "" || r.Target != results[0].Target:
			return Errorf(EInvalid, "every result of a drill run names its one target")
		case r.Name == "":
			return Errorf(EInvalid, "drill result %d has no name", r.Number)
		case r.Number < 1 || r.Number > 99:
			return Errorf(EInvalid, "drill test number %d is out of range 1-99", r.Number)
		}
	}
	return nil
}

// RecordDrill implements DrillStore: results without a time are stamped
// with the ledger's clock, and missing evidence is stored as {}.
func (l *Ledger) RecordDrill(ctx context.Context, results []DrillResult) error {
	if err := ValidateDrill(results); err != nil {
		return err
	}
	now := l.clock()
	rows := make([]DrillRow, len(results))
	for i, r := range results {
		ev := r.Evidence
		if ev == nil {
			ev = map[string]any{}
		}
		raw, err := json.Marshal(ev)
		if err != nil {
			return fmt.Errorf("record drill: evidence: %w", err)
		}
		at := now
		if !r.RanAt.IsZero() {
			at = r.RanAt.UTC()
		}
		rows[i] = DrillRow{RunID: r.RunID, Target: r.Target, Number: r.Number, Name: r.Name,
			Passed: r.Passed, NotApplicable: r.NotApplicable, Reason: r.Reason, Evidence: raw, RanAt: at, Version: r.Version}
	}
	if err := l.d.DrillInsert(ctx, rows); err != nil {
		return fmt.Errorf("record drill: %w", err)
	}
	return nil
}

// LatestDrill implements DrillStore.
func (l *Ledger) LatestDrill(ctx context.Context, target string) ([]DrillResult, error) {
	rows, err := l.d.DrillLatest(ctx, target)
	if err != nil {
		return nil, fmt.Errorf("latest drill: %w", err)
	}
	if len(rows) == 0 {
		return nil, Errorf(ENotFound, "target %s was never drilled", target)
	}
	out := make([]DrillResult, len(rows))
	for i, r := range rows {
		out[i] = DrillResult{RunID: r.RunID, Target: r.Target, Number: r.Number, Name: r.Name, Passed: r.Passed,
			NotApplicable: r.NotApplicable, Reason: r.Reason, RanAt: r.RanAt.UTC(), Version: r.Version}
		if err := json.Unmarshal(r.Evidence, &out[i].Evidence); err != nil {
			return nil, fmt.Errorf("latest drill: evidence: %w", err)
		}
	}
	return out, nil
}
