package reconciler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"settle/ledger"
	"settle/target"
)

// Auditor compares final operations with the target's own records, the
// paper's "duplicates found by periodic audit against the target's own
// records". For each operation it looks up settle's reference and keeps
// only the objects carrying that reference and the operation's tenant, and
// whose own status does not document failure (response.statuses: a
// declined charge moved nothing, so it is no effect). For
// a SUCCEEDED operation more than one is a duplicate and none is a loss;
// for a FAILED_TERMINAL one ("Not applied") any is a phantom: the first
// send, or one settle could not see, did apply. Both states are final, so
// no finding changes the operation; the finding is the record, and losses
// and phantoms are escalated to the owning team. A failed lookup proves
// nothing and is only counted.
//
// A lookup by the target's object id alone ({remote_ref} without
// {reference}) returns at most that one object, so on such a target the
// auditor cannot see duplicates; and when it answers a missing object with
// 404 rather than an empty list, that counts as a failed lookup, not a loss.
type Auditor struct {
	Audit     ledger.AuditStore
	Contracts ContractSet
	Client    *target.Client
	Log       *slog.Logger
	Metrics   prometheus.Registerer // nil: not exported
	Now       func() time.Time      // nil: time.Now; must agree with the store's clock

	Batch    int           // operations per step of the periodic walk (default 100)
	Interval time.Duration // pause between steps of the periodic walk (default 10s)
	// UndocumentedGrace is how old a SUCCEEDED operation must be before
	// "not found" counts as a loss when the target documents neither
	// read-after-write consistency nor a propagation limit (default 1h).
	UndocumentedGrace time.Duration

	once                                          sync.Once
	duplicates, losses, phantoms, checked, failed *prometheus.CounterVec
}

// Report is what one audit pass over a target saw.
type Report struct {
	Target  string
	Skipped string // why the target was not audited ("" when it was)

	Checked        int // operations whose lookup gave a readable answer
	Duplicates     int // of those, SUCCEEDED with more than one remote object
	Losses         int // of those, SUCCEEDED with none
	Phantoms       int // of those, FAILED_TERMINAL with one or more
	LookupsFailed  int // no answer, a non-200 status or an unreadable body
	TooRecent      int // none found, but younger than the propagation limit: not yet a loss
	NewFindings    int // findings recorded by this pass; the others were already open
	Findings       []Found
	LookupFailures []LookupFailure
}

// LookupFailure is an operation whose lookup gave no readable answer.
type LookupFailure struct {
	Tenant, OperationID string
	Reason              string // "no response: timeout", "lookup answered 503", …
}

// Found is one discrepancy a pass saw.
type Found struct {
	ledger.Finding
	RemoteRef string // the object id the ledger recorded: the confirmed one, or a failed one; "" when none
	New       bool   // recorded by this pass, not already open
}

// Clean reports whether the pass audited every operation and found nothing.
func (r Report) Clean() bool {
	return r.Skipped == "" && r.LookupsFailed == 0 && len(r.Findings) == 0
}

// init applies defaults and registers the counters, once, so that Run and
// AuditTarget may share an Auditor.
func (a *Auditor) init() { a.once.Do(a.setup) }

func (a *Auditor) setup() {
	def(&a.Batch, 100)
	def(&a.Interval, 10*time.Second)
	def(&a.UndocumentedGrace, time.Hour)
	if a.Now == nil {
		a.Now = time.Now
	}
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"target"})
	}
	// Findings are counted when first recorded, so re-auditing an open
	// finding, or two replicas finding it, counts it once.
	a.duplicates = counter("settle_audit_duplicates_total", "SUCCEEDED operations with more than one remote object, found by the auditor (new findings), by target.")
	a.losses = counter("settle_audit_losses_total", "SUCCEEDED operations with no remote object found by the auditor (new findings), by target.")
	a.phantoms = counter("settle_audit_phantoms_total", "FAILED_TERMINAL operations with a remote object found by the auditor (new findings), by target.")
	a.checked = counter("settle_audit_checked_total", "SUCCEEDED and FAILED_TERMINAL operations compared with the target's records, by target.")
	a.failed = counter("settle_audit_lookup_failures_total", "Audit lookups without a readable answer, by target.")
	if a.Metrics != nil {
		a.Metrics.MustRegister(a.duplicates, a.losses, a.phantoms, a.checked, a.failed)
	}
}

// auditable returns the target's contract, or why it cannot be audited.
func (a *Auditor) auditable(name string) (*target.Contract, string) {
	c, ok := a.Contracts.Get(name)
	switch {
	case !ok:
		return nil, "no contract for target " + name
	case c.Lookup == nil:
		return nil, "the contract has no lookup, so the target's records cannot be read"
	}
	return c, ""
}

// AuditTarget makes one full pass over the target's final operations,
// from the oldest, independent of the periodic walk's position. A target
// that cannot be audited is reported in Report.Skipped; the error is for
// the store only.
func (a *Auditor) AuditTarget(ctx context.Context, name string) (Report, error) {
	a.init()
	rep := Report{Target: name}
	c, why := a.auditable(name)
	if c == nil {
		rep.Skipped = why
		return rep, nil
	}
	pos := ledger.Cursor{}
	for {
		ops, next, err := a.Audit.AuditBatch(ctx, name, pos, a.Batch)
		if err != nil {
			return rep, fmt.Errorf("audit %s: %w", name, err)
		}
		for _, op := range ops {
			if err := a.check(ctx, c, op, &rep); err != nil {
				return rep, fmt.Errorf("audit %s: %w", name, err)
			}
		}
		if next == (ledger.Cursor{}) {
			return rep, nil
		}
		pos = next
	}
}

// Run audits every target with a lookup until ctx is cancelled: each tick
// it checks the next Batch operations of each target from its saved
// position, and starts over at the end, so operations that settle later
// (an old UNKNOWN resolved today), duplicates made later and objects that
// appear later for FAILED_TERMINAL operations are all met on a later round.
// Replicas share the position, and settle serve runs Run under a leader
// lease (see Elector) so that one replica walks at a time; should two
// overlap, they only repeat lookups, since findings are recorded once.
func (a *Auditor) Run(ctx context.Context) error {
	a.init()
	for _, name := range a.Contracts.Names() {
		if _, why := a.auditable(name); why != "" {
			a.Log.Info("target not audited", "target", name, "reason", why)
		}
	}
	p := newPause(a.Interval)
	for ctx.Err() == nil {
		var failed bool
		for _, name := range a.Contracts.Names() {
			if err := a.step(ctx, name); err != nil && ctx.Err() == nil {
				a.Log.Error("step failed", "target", name, "err", err)
				failed = true
			}
		}
		if failed {
			p.fail(ctx)
			continue
		}
		p.ok()
		p.idle(ctx)
	}
	return nil
}

// step audits the next batch of one target and saves the new position.
func (a *Auditor) step(ctx context.Context, name string) error {
	c, _ := a.auditable(name)
	if c == nil {
		return nil
	}
	pos, err := a.Audit.AuditPosition(ctx, name)
	if err != nil && ledger.ErrorCode(err) != ledger.ENotFound {
		return err
	}
	ops, next, err := a.Audit.AuditBatch(ctx, name, pos, a.Batch)
	if err != nil {
		return err
	}
	rep := Report{Target: name}
	for _, op := range ops {
		if err := a.check(ctx, c, op, &rep); err != nil {
			return err
		}
	}
	return a.Audit.SaveAuditPosition(ctx, name, next)
}

// check audits one final operation and records what it finds.
func (a *Auditor) check(ctx context.Context, c *target.Contract, op ledger.Operation, rep *Report) error {
	now := a.Now()
	objects, ev, err := a.lookup(ctx, c, op)
	if err != nil && ctx.Err() != nil {
		return nil // cut by shutdown: not the target's failure, and nothing concluded
	}
	if err != nil {
		rep.LookupsFailed++
		rep.LookupFailures = append(rep.LookupFailures, LookupFailure{op.Tenant, op.ID, err.Error()})
		a.failed.WithLabelValues(c.Name).Inc()
		a.Log.Warn("lookup failed; nothing concluded", "target", c.Name, "tenant", op.Tenant,
			"operation_id", op.ID, "reason", err.Error())
		return nil
	}
	rep.Checked++
	a.checked.WithLabelValues(c.Name).Inc()
	f := ledger.Finding{Tenant: op.Tenant, OperationID: op.ID, Target: c.Name, RemoteIDs: objects}
	switch {
	case op.State == ledger.FailedTerminal && len(objects) == 0:
		return nil
	case op.State == ledger.FailedTerminal:
		// An object may become visible later (a late request, a lagging
		// read path); the walk meets the operation again on every round.
		rep.Phantoms++
		f.Kind, f.Escalated = ledger.FindingPhantom, true
	case len(objects) > 1:
		rep.Duplicates++
		f.Kind = ledger.FindingDuplicate
	case len(objects) == 1:
		return nil
	case now.Sub(op.UpdatedAt) < a.visibleAfter(c):
		// The object may not be visible to lookups yet: SUCCEEDED is
		// recorded no earlier than the commit, so the limit counts from it.
		rep.TooRecent++
		return nil
	default:
		rep.Losses++
		f.Kind, f.Escalated = ledger.FindingLoss, true
	}
	ev["remote_ref"], ev["ledger_state"] = op.RemoteRef, string(op.State)
	// A handful of counts and one id: far below ledger.MaxEvidenceBytes.
	if f.Evidence, err = json.Marshal(ev); err != nil {
		return err
	}
	// The write is not cut short by a shutdown: a commit that reached the
	// database but whose answer was cancelled would leave a finding that
	// no counter ever counted (a later walk finds it already recorded).
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), findingWriteTimeout)
	created, err := a.Audit.RecordFinding(wctx, f)
	cancel()
	if err != nil {
		return err
	}
	rep.Findings = append(rep.Findings, Found{Finding: f, RemoteRef: op.RemoteRef, New: created})
	if !created {
		return nil
	}
	rep.NewFindings++
	attrs := []any{"target", c.Name, "tenant", op.Tenant, "operation_id", op.ID, "remote_ref", op.RemoteRef,
		"remote_ids", objects, "owner", c.Owner.Team, "escalation_contact", c.Owner.EscalationContact}
	switch f.Kind {
	case ledger.FindingDuplicate:
		a.duplicates.WithLabelValues(c.Name).Inc()
		a.Log.Warn("the target holds more than one object for one operation", attrs...)
	case ledger.FindingLoss:
		a.losses.WithLabelValues(c.Name).Inc()
		a.Log.Warn("SUCCEEDED operation has no remote object; escalated to "+c.Owner.Team, attrs...)
	case ledger.FindingPhantom:
		a.phantoms.WithLabelValues(c.Name).Inc()
		a.Log.Warn("FAILED_TERMINAL operation has a remote object; escalated to "+c.Owner.Team, attrs...)
	}
	return nil
}

// findingWriteTimeout bounds the one write the auditor lets outlive a
// shutdown.
const findingWriteTimeout = 5 * time.Second

// visibleAfter is how long after a commit a lookup is sure to see it.
func (a *Auditor) visibleAfter(c *target.Contract) time.Duration {
	switch {
	case c.Lookup.ReadAfterWrite:
		return 0
	case c.Lookup.PropagationLimit > 0:
		return c.Lookup.PropagationLimit
	}
	return a.UndocumentedGrace
}

// lookup asks the target for the operation's objects and returns the ids
// of those that carry its reference and its tenant, with the evidence. Any
// answer that is not a readable 200 is an error: only a well-formed answer
// can show a duplicate or an absence.
func (a *Auditor) lookup(ctx context.Context, c *target.Contract, op ledger.Operation) ([]string, map[string]any, error) {
	at := a.Client.Lookup(ctx, c, op.Tenant, op.RemoteKey, op.RemoteRef)
	switch {
	case !at.Sent():
		return nil, nil, errors.New("nothing was sent: " + at.NotSent)
	case !at.Answered():
		return nil, nil, errors.New("no response: " + at.Failure)
	case at.Status != 200:
		return nil, nil, fmt.Errorf("lookup answered %d", at.Status)
	}
	results, err := c.Results(at.Body)
	if err != nil {
		return nil, nil, errors.New("lookup answer unreadable")
	}
	ids := []string{}
	ignored, failed := 0, 0
	for _, res := range results {
		// Only the fields the contract names can be compared. Another
		// tenant's object carrying the reference is not this tenant's
		// duplicate (and is not evidence about this operation at all).
		ref, tenant := c.References(res)
		if (c.ReferenceField != "" && ref != op.RemoteKey) || (c.TenantField != "" && tenant != op.Tenant) {
			ignored++
			continue
		}
		// An object whose own status documents failure (a declined
		// charge) exists but moved nothing: it is no effect, so neither a
		// duplicate beside the confirmed one nor a phantom of a
		// FAILED_TERMINAL operation (which it may be the evidence of).
		if st, err := c.ObjectStatus(res); err == nil && st.Outcome == target.ObjectFailed {
			failed++
			continue
		}
		// An id the target wrote with a NUL or at length is kept escaped
		// and cut short: the finding stays storable and readable.
		id, _ := c.RemoteID(res)
		ids = append(ids, shownID(id))
	}
	ev := map[string]any{"lookup_status": at.Status, "results": len(results), "matching": len(ids),
		"ignored_other_reference_or_tenant": ignored, "ignored_failed": failed}
	return ids, ev, nil
}
