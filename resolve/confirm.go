package resolve

import (
	"context"
	"fmt"
	"strings"
	"time"

	"settle/ledger"
	"settle/reconciler"
	"settle/target"
)

// confirmObject checks, by one lookup, a person's claim that the target
// holds remoteRef as op's object: the lookup must find an object with that
// id carrying settle's reference, and the reconciler's own object check
// (match fields, the object's own status) must call it SUCCEEDED; an
// object whose status documents failure confirms nothing of the kind. op needs its
// Payload. checked is false, and nothing asked, when the contract has no
// lookup; an EInvalid error says in words why the target contradicts the
// claim (field names only, never values), or that it did not answer.
func confirmObject(ctx context.Context, client *target.Client, c *target.Contract, op ledger.Operation,
	remoteRef string) (checked bool, err error) {
	if c.Lookup == nil {
		return false, nil
	}
	a := client.Lookup(ctx, c, op.Tenant, op.RemoteKey, remoteRef)
	switch {
	case !a.Sent():
		return true, ledger.Errorf(ledger.EInvalid, "nothing was sent to the target: %s", a.NotSent)
	case !a.Answered():
		return true, ledger.Errorf(ledger.EInvalid, "the target did not answer the lookup (%s); try again later", a.Failure)
	case a.Status != 200:
		return true, ledger.Errorf(ledger.EInvalid, "the target answered the lookup with HTTP %d; it does not confirm %s", a.Status, remoteRef)
	}
	results, err := c.Results(a.Body)
	if err != nil {
		return true, ledger.Errorf(ledger.EInvalid, "the target's lookup answer could not be read")
	}
	for _, res := range results {
		if id, err := c.RemoteID(res); err != nil || id != remoteRef {
			continue
		}
		to, why, evidence := reconciler.ObjectVerdict(c, op, res)
		if to == ledger.Succeeded {
			return true, nil
		}
		if bad, ok := evidence["mismatched_fields"].([]string); ok {
			why += " (fields: " + strings.Join(bad, ", ") + ")"
		}
		return true, ledger.Errorf(ledger.EInvalid, "the target's object %s does not confirm it: %s", remoteRef, why)
	}
	return true, ledger.Errorf(ledger.EInvalid, "%s", fmt.Sprintf(
		"the target holds no object %s carrying settle's reference (the lookup found %d)", remoteRef, len(results)))
}

// confirmAbsent checks, by one lookup at now, a person's claim that the
// target holds no object carrying op's reference (a supersede's
// precondition): the lookup must answer 200 with no result, read as the
// reconciler reads it, AND the paper's three absence conditions must hold
// (visibility, late requests rejected after the deadline, no same-key
// replay possible) — the same test that lets the reconciler take "not
// found" as "not applied". Without them a late original request could
// still commit beside its successor. checked is false, and nothing asked,
// when the contract has no lookup; an EInvalid error says in words why
// absence is not confirmed.
func confirmAbsent(ctx context.Context, client *target.Client, c *target.Contract, op ledger.Operation, now time.Time) (checked bool, err error) {
	if c.Lookup == nil {
		return false, nil
	}
	a := client.Lookup(ctx, c, op.Tenant, op.RemoteKey, op.RemoteRef)
	switch {
	case !a.Sent():
		return true, ledger.Errorf(ledger.EInvalid, "nothing was sent to the target, so absence is not confirmed: %s", a.NotSent)
	case !a.Answered():
		return true, ledger.Errorf(ledger.EInvalid, "the target did not answer the lookup (%s); absence is not confirmed, try again later", a.Failure)
	case a.Status != 200:
		return true, ledger.Errorf(ledger.EInvalid, "the target answered the lookup with HTTP %d; absence is not confirmed", a.Status)
	}
	results, err := c.Results(a.Body)
	if err != nil {
		return true, ledger.Errorf(ledger.EInvalid, "the target's lookup answer could not be read; absence is not confirmed")
	}
	if len(results) > 0 {
		return true, ledger.Errorf(ledger.EInvalid,
			"the target holds %d object(s) carrying this operation's reference: it was applied, so it cannot be superseded", len(results))
	}
	if ok, conds := c.AbsenceMeaningful(reconciler.AbsenceTimes(c, op, now)); !ok {
		var unmet []string
		for _, k := range conds {
			if !k.Met {
				unmet = append(unmet, k.Detail)
			}
		}
		return true, ledger.Errorf(ledger.EInvalid, "the lookup found nothing, but absence is not yet proven: %s",
			strings.Join(unmet, "; "))
	}
	return true, nil
}
