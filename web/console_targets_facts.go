package web

import (
	"settle/ledger"
	"settle/target"
	"settle/views"
)

func fact(id, label, value string) views.Fact { return views.Fact{ID: id, Label: label, Value: value} }

func ownerFacts(ct *target.Contract) []views.Fact {
	deadline := "none"
	if ct.Deadline > 0 {
		deadline = "operations still unresolved " + durationText(ct.Deadline) + " after registration escalate to the owning team"
	}
	return []views.Fact{
		fact("owner", "Owning team", orTeam(ct.Owner.Team)),
		fact("escalation-contact", "Escalation contact", ledger.PlainText(ct.Owner.EscalationContact, 300)),
		fact("escalation-deadline", "Escalation deadline", deadline),
	}
}

func sendingFacts(ct *target.Contract) []views.Fact {
	facts := []views.Fact{
		fact("create", "Create call", ct.Create.Method+" "+ct.Create.Path),
		fact("timeout", "Timeout per request", durationText(ct.Timeout)),
	}
	ref := "not written into the payload: only the idempotency key carries it"
	if ct.ReferenceField != "" {
		ref = "written into the payload at " + ct.ReferenceField
	}
	facts = append(facts, fact("reference-field", "settle's reference", ref))
	if ct.TenantField != "" {
		facts = append(facts, fact("tenant-field", "Tenant", "written into the payload at "+ct.TenantField))
	}
	return facts
}

func idempotencyFacts(ct *target.Contract) []views.Fact {
	i := ct.Idempotency
	if i == nil {
		return []views.Fact{
			fact("idempotency-header", "Idempotency key", "none documented: settle never repeats a request"),
			fact("retention", "Retention window", "none: window zero, settle never repeats a request with the same key"),
		}
	}
	scope := "not documented"
	if i.Scope != "" {
		scope = ledger.PlainText(i.Scope, 200)
	}
	retention := "none documented: window zero, settle never repeats a request with the same key"
	if i.Retention > 0 {
		retention = "the target remembers a key for " + durationText(i.Retention) + ", counted by settle from the first claim"
	}
	facts := []views.Fact{
		fact("idempotency-header", "Idempotency key header", i.Header),
		fact("idempotency-scope", "Keys are unique within", scope),
		fact("retention", "Retention window", retention),
		fact("replay-margin", "Replay margin", durationText(ct.ReplayMargin())+" kept free at the end of the window for clock skew and queues"),
	}
	if ct.RetryWindow() > 0 {
		last := ct.RetryWindow() - ct.Timeout - ct.ReplayMargin()
		facts = append(facts, fact("replay-until", "Same-key replays",
			"sent only until "+durationText(last)+" after the first claim (the window less the timeout and the margin)"))
	} else {
		facts = append(facts, fact("replay-until", "Same-key replays", "never: the contract does not make this a class A target"))
	}
	facts = append(facts,
		fact("mismatch", "Same key, different payload", mismatchText(i.Mismatch)),
		fact("concurrent", "Same key while the first runs", concurrentText(i.Concurrent)))
	return facts
}

func mismatchText(m string) string {
	switch m {
	case target.MismatchRejected:
		return "rejected with an error"
	case target.MismatchReplaysOriginal:
		return "answered with the first request's response"
	}
	return "not documented"
}

func concurrentText(m string) string {
	switch m {
	case target.ConcurrentConflict:
		return "answered with an error status"
	case target.ConcurrentWaits:
		return "waits for the first to finish"
	}
	return "not documented"
}

func lookupFacts(ct *target.Contract) []views.Fact {
	l := ct.Lookup
	if l == nil {
		return []views.Fact{fact("lookup", "Lookup", "none: settle cannot ask the target, so unresolved operations escalate")}
	}
	lookup := l.Method + " " + l.Path
	if l.NeedsRemoteRef() {
		lookup += " (needs the target's own id, known only after an answer carried it)"
	}
	consistency := "not documented: \"not found\" alone never counts as not applied"
	if l.ReadAfterWrite {
		consistency = "read-after-write: a lookup right after a committed write sees it"
	}
	propagation := "none documented"
	if l.PropagationLimit > 0 {
		propagation = "a committed write is visible to lookups within " + durationText(l.PropagationLimit)
	}
	return []views.Fact{
		fact("lookup", "Lookup", lookup),
		fact("consistency", "Consistency", consistency),
		fact("propagation", "Propagation limit", propagation),
	}
}

func conditionalFacts(ct *target.Contract) []views.Fact {
	cond := "not supported"
	if cu := ct.ConditionalUpdate; cu != nil {
		cond = "supported through the " + cu.Header + " header"
		if cu.VersionField != "" {
			cond += ", with the expected version from " + cu.VersionField
		}
	}
	late := "not documented: after the deadline, \"not found\" still does not count as not applied"
	if ct.LateRequestsRejected {
		late = "the target documents that a request arriving after the operation's deadline is rejected"
	}
	return []views.Fact{
		fact("conditional", "Conditional update", cond),
		fact("late-requests", "Late requests", late),
	}
}
