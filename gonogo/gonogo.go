// Package gonogo evaluates the paper's eleven go/no-go controls for one
// target ("Go/No-Go Controls and a Decision Matrix"). It is domain only:
// it takes facts (the contract, the live schema, the newest drill, the
// retention rule) and returns one PASS or FAIL per control with the
// evidence it used. There is no score: a single FAIL is a no-go for the
// target. `settle gonogo` and the console's Targets page render the same
// Report.
package gonogo

import (
	"fmt"
	"strings"
	"time"

	"settle/ledger"
	"settle/target"
)

// Defaults of the ages the gate accepts.
const (
	// MaxDocumentationAge: control 1 fails when the contract's
	// documentation.checked is older.
	MaxDocumentationAge = 180 * 24 * time.Hour
	// DefaultMaxDrillAge: a drill older than this no longer counts.
	DefaultMaxDrillAge = 90 * 24 * time.Hour
)

// Facts are everything the gate weighs for one target.
type Facts struct {
	Contract *target.Contract
	Now      time.Time
	// Schema is what the live database shows; SchemaErr says why it could
	// not be read (controls 2-5 then fail).
	Schema    ledger.SchemaFacts
	SchemaErr string
	// Drill is the target's newest drill run (nil: never drilled); DrillErr
	// says why it could not be read.
	Drill       []ledger.DrillResult
	DrillErr    string
	MaxDrillAge time.Duration // 0: DefaultMaxDrillAge
	Retention   ledger.RetentionPolicy
}

// Result is one control's verdict.
type Result struct {
	Number   int    `json:"number"`
	Name     string `json:"name"`
	Pass     bool   `json:"pass"`
	Evidence string `json:"evidence"`
}

// Verdict is "PASS" or "FAIL".
func (r Result) Verdict() string {
	if r.Pass {
		return "PASS"
	}
	return "FAIL"
}

// Report is the gate's answer for one target.
type Report struct {
	Target   string   `json:"target"`
	Go       bool     `json:"go"` // every control passed
	Controls []Result `json:"controls"`
}

// Failed counts the controls that failed.
func (r Report) Failed() int {
	n := 0
	for _, c := range r.Controls {
		if !c.Pass {
			n++
		}
	}
	return n
}

// Evaluate runs all eleven controls in order.
func Evaluate(f Facts) Report {
	if f.MaxDrillAge <= 0 {
		f.MaxDrillAge = DefaultMaxDrillAge
	}
	checks := []struct {
		name string
		fn   func(Facts) (bool, string)
	}{
		{"Target contract recorded", contractRecorded},
		{"Durable operation identity", durableIdentity},
		{"Payload binding", payloadBinding},
		{"Atomic claim", atomicClaim},
		{"Atomic scheduling", atomicScheduling},
		{"Unknown handling", unknownHandling},
		{"Verified acknowledgment", verifiedAck},
		{"Terminal failure rule", terminalRule},
		{"Escalation path", escalationPath},
		{"Privacy ownership", privacyOwnership},
		{"Legitimate repeat operations", legitimateRepeats},
	}
	rep := Report{Target: f.Contract.Name, Go: true}
	for i, c := range checks {
		pass, ev := c.fn(f)
		rep.Controls = append(rep.Controls, Result{Number: i + 1, Name: c.name, Pass: pass, Evidence: ev})
		rep.Go = rep.Go && pass
	}
	return rep
}

// days writes a duration in whole days, as the flags take it ("90d").
func days(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return d.String()
}

// findings joins what a control found: "; " between facts.
type findings struct{ ok, bad []string }

func (fs *findings) good(format string, args ...any) {
	fs.ok = append(fs.ok, fmt.Sprintf(format, args...))
}
func (fs *findings) fail(format string, args ...any) {
	fs.bad = append(fs.bad, fmt.Sprintf(format, args...))
}

// result puts the failures first, so that a reader sees what to fix.
func (fs *findings) result() (bool, string) {
	return len(fs.bad) == 0, strings.Join(append(fs.bad, fs.ok...), "; ")
}

// drill adds the newest drill's results for the tests numbered nums.
func (fs *findings) drill(f Facts, nums ...int) {
	switch {
	case f.DrillErr != "":
		fs.fail("drill results unreadable: %s", f.DrillErr)
		return
	case len(f.Drill) == 0:
		fs.fail("no drill recorded (run: settle drill --target %s)", f.Contract.Name)
		return
	}
	ran := f.Drill[0].RanAt
	where := ""
	if u, ok := f.Drill[0].Evidence["base_url"].(string); ok && u != "" {
		where = " against " + u
	}
	if age := f.Now.Sub(ran); age > f.MaxDrillAge {
		fs.fail("the last drill (%s) is older than %s and no longer counts (run: settle drill --target %s)",
			ran.Format(time.DateOnly), days(f.MaxDrillAge), f.Contract.Name)
		return
	}
	for _, n := range nums {
		t, _ := TestByNumber(n)
		var got *ledger.DrillResult
		for i := range f.Drill {
			if f.Drill[i].Number == n {
				got = &f.Drill[i]
			}
		}
		switch {
		case got == nil:
			fs.fail("drill of %s lacks test %d %s", ran.Format(time.DateOnly), n, t.Name)
		case !got.Passed:
			fs.fail("drill test %d %s FAILED on %s: %s", n, t.Name, ran.Format(time.DateOnly), got.Reason)
		case got.NotApplicable:
			fs.good("drill test %d %s not applicable on %s: %s", n, t.Name, ran.Format(time.DateOnly), got.Reason)
		default:
			fs.good("drill test %d %s passed on %s%s", n, t.Name, ran.Format(time.DateOnly), where)
		}
	}
}

// schema adds the live schema's version, or why it cannot be read.
func (fs *findings) schema(f Facts) bool {
	if f.SchemaErr != "" {
		fs.fail("live schema unreadable: %s", f.SchemaErr)
		return false
	}
	if f.Schema.Version < f.Schema.Latest {
		fs.fail("schema at migration %d, behind this build's %d (run: settle migrate)", f.Schema.Version, f.Schema.Latest)
	} else {
		fs.good("schema at migration %d", f.Schema.Version)
	}
	return true
}

// 1: the contract records the vendor's documented facts, recently checked.
func contractRecorded(f Facts) (bool, string) {
	var fs findings
	c := f.Contract
	doc := c.Documentation
	switch {
	case doc.URL == "":
		fs.fail("documentation.url missing")
	case doc.Checked.IsZero():
		fs.fail("documentation.checked missing")
	default:
		age := f.Now.Sub(doc.Checked)
		if age > MaxDocumentationAge {
			fs.fail("documentation %s checked %s, older than %s: re-check it and update documentation.checked",
				doc.URL, doc.Checked.Format(time.DateOnly), days(MaxDocumentationAge))
		} else {
			fs.good("documentation %s checked %s", doc.URL, doc.Checked.Format(time.DateOnly))
		}
	}
	if idem := c.Idempotency; idem != nil {
		if idem.Mismatch == "" || idem.Mismatch == target.Undocumented {
			fs.fail("idempotency.mismatch undocumented (what the target does with a reused key and another payload)")
		}
		fs.good("idempotency %s scope %s, retention %s, mismatch %s", idem.Header, or(idem.Scope, "undocumented"),
			idem.Retention, or(idem.Mismatch, target.Undocumented))
	} else {
		fs.good("no idempotency key documented (window zero)")
	}
	if l := c.Lookup; l != nil {
		switch {
		case l.ReadAfterWrite:
			fs.good("lookup %s, read-after-write", l.Path)
		case l.PropagationLimit > 0:
			fs.good("lookup %s, propagation limit %s", l.Path, l.PropagationLimit)
		default:
			fs.fail("lookup consistency undocumented (set lookup.read_after_write or lookup.propagation_limit from the documentation)")
		}
	} else {
		fs.good("no lookup documented")
	}
	return fs.result()
}

// 2: operations are identified durably and per tenant.
func durableIdentity(f Facts) (bool, string) {
	var fs findings
	if fs.schema(f) {
		if f.Schema.IntentUnique {
			fs.good("unique index %s on (tenant_id, operation_type, intent_ref)", f.Schema.Index)
		} else {
			fs.fail("no unique index on (tenant_id, operation_type, intent_ref) in the live schema")
		}
	}
	return fs.result()
}

// 3: the approved payload is bound by its hash; a changed payload is refused.
func payloadBinding(f Facts) (bool, string) {
	var fs findings
	if fs.schema(f) {
		if f.Schema.PayloadHash {
			fs.good("operation_ledger.payload_hash present")
		} else {
			fs.fail("operation_ledger.payload_hash missing from the live schema")
		}
	}
	fs.drill(f, 4)
	return fs.result()
}

// 4: a claim is a fenced conditional update; racing claimers send once.
func atomicClaim(f Facts) (bool, string) {
	var fs findings
	if fs.schema(f) {
		if f.Schema.Fence {
			fs.good("operation_ledger.fence_token present")
		} else {
			fs.fail("operation_ledger.fence_token missing from the live schema")
		}
	}
	fs.drill(f, 3)
	return fs.result()
}

// 5: a crash between send and record is recovered by lease expiry.
func atomicScheduling(f Facts) (bool, string) {
	var fs findings
	if fs.schema(f) {
		if f.Schema.Lease {
			fs.good("operation_ledger.lease_expires_at present (the sweeper's lease)")
		} else {
			fs.fail("operation_ledger.lease_expires_at missing from the live schema")
		}
	}
	fs.drill(f, 2)
	return fs.result()
}

// 6: ambiguity becomes UNKNOWN and is reconciled, never retried blindly or
// failed on absence alone.
func unknownHandling(f Facts) (bool, string) {
	var fs findings
	fs.drill(f, 1, 5)
	return fs.result()
}

// 7: SUCCEEDED only on the authoritative system's confirmation, with its id.
func verifiedAck(f Facts) (bool, string) {
	var fs findings
	c := f.Contract
	if c.Response.IDField == "" {
		fs.fail("response.id_field missing: SUCCEEDED needs the remote object's id")
	} else {
		fs.good("SUCCEEDED needs response %s", c.Response.IDField)
	}
	fields := make([]string, len(c.Response.Match))
	for i, m := range c.Response.Match {
		fields[i] = m.Field
	}
	if len(fields) == 0 {
		fs.fail("response.match empty: nothing ties a confirmation to the approved payload")
	} else {
		fs.good("and agreement on %s", strings.Join(fields, ", "))
	}
	var success []string
	for _, o := range c.Outcomes {
		if o.Outcome == target.Succeeded {
			success = append(success, o.Status)
		}
	}
	confirmLater := c.Lookup != nil || c.Webhook != nil
	switch {
	case len(success) > 0:
		fs.good("status table: %s → succeeded", strings.Join(success, ", "))
	case confirmLater:
		fs.good("no status answers succeeded directly; confirmation by lookup or event")
	default:
		fs.fail("no status maps to succeeded and the target has neither lookup nor webhook: nothing can confirm a success")
	}
	if c.Response.StatusField != "" {
		var ok []string
		for _, s := range c.Response.Statuses {
			if s.Outcome == target.ObjectSucceeded {
				ok = append(ok, s.Value)
			}
		}
		if len(ok) == 0 {
			fs.fail("response.status_field %s has no succeeded status", c.Response.StatusField)
		} else {
			fs.good("object status %s = %s", c.Response.StatusField, strings.Join(ok, ", "))
		}
	}
	fs.drill(f, 6)
	return fs.result()
}

// 8: FAILED_TERMINAL only from rows the vendor documents.
func terminalRule(f Facts) (bool, string) {
	var fs findings
	c := f.Contract
	var rows []string
	for _, o := range c.Outcomes {
		if o.Outcome != target.RejectedWithoutSideEffect {
			continue
		}
		if o.Documentation == "" {
			fs.fail("status %s is rejected_without_side_effect without documentation", o.Status)
			continue
		}
		rows = append(rows, fmt.Sprintf("%s (%s)", o.Status, o.Documentation))
	}
	for _, s := range c.Response.Statuses {
		if s.Outcome != target.ObjectFailed {
			continue
		}
		if s.Documentation == "" {
			fs.fail("object status %q is failed without documentation", s.Value)
			continue
		}
		rows = append(rows, fmt.Sprintf("object %s (%s)", s.Value, s.Documentation))
	}
	if len(rows) == 0 {
		fs.good("no status is terminal: every failure is reconciled")
	} else {
		fs.good("terminal only for documented %s", strings.Join(rows, ", "))
	}
	if c.LateRequestsRejected {
		fs.good("late requests rejected (documented), so absence can be terminal after the deadline")
	} else {
		fs.good("absence is never terminal (late_requests_rejected: false)")
	}
	return fs.result()
}

// 9: operations stuck past their deadline reach a named owner.
func escalationPath(f Facts) (bool, string) {
	var fs findings
	c := f.Contract
	if c.Owner.Team == "" {
		fs.fail("owner.team missing")
	}
	if c.Owner.EscalationContact == "" {
		fs.fail("owner.escalation_contact missing")
	}
	if c.Deadline <= 0 {
		fs.fail("deadline missing")
	}
	if len(fs.bad) == 0 {
		fs.good("escalations past the %s deadline go to %s <%s>; runbook docs/runbook.md", c.Deadline, c.Owner.Team, c.Owner.EscalationContact)
	}
	return fs.result()
}

// 10: the ledger's data has a retention and deletion rule with a named owner.
func privacyOwnership(f Facts) (bool, string) {
	var fs findings
	p := f.Retention
	if p.Owner == "" {
		fs.fail("no retention owner (--retention-owner)")
	} else {
		fs.good("retention owner %s", p.Owner)
	}
	if err := p.Validate(); err != nil {
		fs.fail("retention rule invalid: %s", err)
	}
	if p.RedactPayloadsAfter <= 0 && p.DeleteOperationsAfter <= 0 {
		fs.fail("no retention rule (--redact-payloads-after or --delete-operations-after)")
	}
	var rules []string
	for _, r := range []struct {
		what string
		d    time.Duration
	}{{"payloads redacted after", p.RedactPayloadsAfter}, {"operations deleted after", p.DeleteOperationsAfter},
		{"reviewed items purged after", p.PurgeReviewedAfter}} {
		if r.d > 0 {
			rules = append(rules, r.what+" "+days(r.d))
		}
	}
	if len(rules) > 0 {
		fs.good("%s; inventory docs/data-inventory.md", strings.Join(rules, ", "))
	}
	return fs.result()
}

// 11: a genuinely new action is a new operation that executes too.
func legitimateRepeats(f Facts) (bool, string) {
	var fs findings
	fs.drill(f, 7)
	return fs.result()
}

func or(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}
