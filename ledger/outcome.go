package ledger

import (
	"bytes"
	"context"
	"time"
)

// Reasons written by settle's own transitions.
const (
	ReasonLeaseExpired    = "lease expired before the outcome was recorded"
	ReasonPayloadTampered = "stored payload does not match its approved hash"
)

// validateOutcomes checks every outcome of a batch and encodes its evidence.
// errs[i] is non-nil for an outcome that must not be applied, including a
// second outcome for an operation already in the batch.
func validateOutcomes(outcomes []Outcome) (errs []error, evidence [][]byte) {
	errs = make([]error, len(outcomes))
	evidence = make([][]byte, len(outcomes))
	seen := make(map[string]bool, len(outcomes))
	for i, o := range outcomes {
		key := o.Tenant + "/" + o.OperationID
		if seen[key] {
			errs[i] = Errorf(EInvalid, "operation appears twice in one batch")
			continue
		}
		seen[key] = true
		evidence[i], errs[i] = o.EvidenceJSON()
	}
	return errs, evidence
}

// nextReconcile returns the next_reconcile_at an outcome leaves behind: the
// requested time (or now) for UNKNOWN, nothing for any other state.
func nextReconcile(o Outcome, now time.Time) *time.Time {
	if o.To != Unknown {
		return nil
	}
	if o.NextAt != nil {
		t := o.NextAt.UTC().Truncate(time.Microsecond)
		return &t
	}
	return &now
}

// staleFence explains why an outcome did not apply to cur.
func staleFence(cur Operation, o Outcome) error {
	return Errorf(EStaleFence, "fence %d no longer holds (operation is %s at fence %d); the result was discarded",
		o.Fence, cur.State, cur.Fence)
}

// notClaimable explains why a claim of op with the given hash took no row.
func notClaimable(op Operation, hash []byte) error {
	if op.State != Prepared {
		return Errorf(EInvalidTransition, "operation is %s, not PREPARED; do not send", op.State)
	}
	if !bytes.Equal(op.PayloadHash, hash) {
		return Errorf(EPayloadConflict, "payload hash differs from the approved one; do not send")
	}
	return Errorf(EStaleFence, "operation was claimed concurrently; do not send")
}

// tamperedOutcome escalates a claimed operation whose stored bytes no longer
// hash to the approved hash.
func tamperedOutcome(op Operation) Outcome {
	return Outcome{
		Tenant: op.Tenant, OperationID: op.ID, Fence: op.Fence,
		From: op.State, To: Escalated, Actor: ActorExecutor, Reason: ReasonPayloadTampered,
	}
}

// verifyClaimed re-hashes a just-claimed operation's stored bytes (rule 2:
// re-verify at claim time). A mismatch means the row was altered behind the
// ledger's back: the operation is escalated under the fence just taken, with
// record, and never handed to a sender.
func verifyClaimed(ctx context.Context, op Operation, record func(context.Context, Outcome) (Operation, error)) (Operation, error) {
	if HashMatches(op.Payload, op.PayloadHash) {
		return op, nil
	}
	if _, err := record(ctx, tamperedOutcome(op)); err != nil {
		return Operation{}, err
	}
	return Operation{}, Errorf(EPayloadConflict, "stored payload does not match its approved hash; escalated")
}

// explainUnapplied fills errs[i] for every valid outcome that the store's
// conditional write did not apply: not found, or a stale fence.
func explainUnapplied(ctx context.Context, outcomes []Outcome, errs []error, applied []bool,
	get func(ctx context.Context, tenant, id string) (Operation, error)) {
	for i, o := range outcomes {
		if errs[i] != nil || applied[i] {
			continue
		}
		cur, err := get(ctx, o.Tenant, o.OperationID)
		if err != nil {
			errs[i] = err
			continue
		}
		errs[i] = staleFence(cur, o)
	}
}

// recordEach is a store's fallback when the one statement (or transaction)
// that records a whole batch fails: it records each outcome still valid
// (errs[i] == nil) on its own with record, so that one row the database
// refuses costs only that row its verdict, never its neighbours, which may
// be other tenants' operations. A refused row's errs[i] is the database's
// error (payload-free: it names the constraint, not the value). allFailed
// reports that every row failed too: the database itself is at fault, and
// the caller returns the batch's error instead.
func recordEach(ctx context.Context, outcomes []Outcome, errs []error,
	record func(context.Context, Outcome) (Operation, error)) (ops []Operation, allFailed bool) {
	ops = make([]Operation, len(outcomes))
	tried, failed := 0, 0
	for i, o := range outcomes {
		if errs[i] != nil {
			continue
		}
		tried++
		op, err := record(ctx, o)
		if err != nil {
			errs[i] = err
			if ErrorCode(err) == EInternal {
				failed++
			}
			continue
		}
		ops[i] = op
	}
	return ops, tried > 0 && failed == tried
}
