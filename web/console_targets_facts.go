package web

import (
	"strings"

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
	replayed := "not documented: a replayed answer cannot be told from a fresh one"
	if i.ReplayedHeader != "" {
		replayed = i.ReplayedHeader + ": true marks the target's saved answer to the key's first use; settle records it, and looks up rather than replays again when such an answer settles nothing"
	}
	facts = append(facts,
		fact("mismatch", "Same key, different payload", mismatchText(i.Mismatch)),
		fact("concurrent", "Same key while the first runs", concurrentText(i.Concurrent)),
		fact("replayed-header", "Replayed answers", replayed))
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

// requestFacts say what every request carries. The credential is named by
// its header, scheme and environment variable only: the contract never
// holds the secret, and neither does this page.
func requestFacts(ct *target.Contract) []views.Fact {
	cred := "none: requests carry no credential"
	if a := ct.Auth; a != nil {
		value := "the secret itself"
		switch a.Scheme {
		case target.AuthBearer:
			value = "Bearer and the secret"
		case target.AuthBasic:
			value = "Basic and the base64 of the user:password the variable holds"
		}
		cred = "the " + a.Header + " header carries " + value + "; the secret is read at start-up from the environment variable " + a.SecretEnv
	}
	enc := "JSON: the approved payload's canonical bytes"
	if ct.Encoding == target.EncodingForm {
		enc = "form (application/x-www-form-urlencoded, bracket notation), derived from the approved payload's canonical JSON, the same bytes on every replay"
	}
	headers := "none beyond settle's own"
	if len(ct.Headers) > 0 {
		var hs []string
		for _, h := range ct.Headers {
			hs = append(hs, h.Name+": "+string(h.Value))
		}
		headers = ledger.PlainText(strings.Join(hs, "; "), 500)
	}
	body := "none: the approved payload as it is"
	if len(ct.BodyFields) > 0 {
		var fs []string
		for _, f := range ct.BodyFields {
			fs = append(fs, f.Path+" = "+string(f.Value))
		}
		body = ledger.PlainText(strings.Join(fs, "; "), 500) + " (written in at send time; the stored payload and its hash are unchanged)"
	}
	params := "none"
	if ps := ct.TenantParams(); len(ps) > 0 {
		params = strings.Join(ps, ", ") + ": set for each tenant (settle tenant set); an operation of a tenant without them is escalated, never sent"
	}
	return []views.Fact{
		fact("credential", "Credential", cred),
		fact("encoding", "Body encoding", enc),
		fact("headers", "Headers on every request", headers),
		fact("body-fields", "Fields written at send time", body),
		fact("tenant-params", "Tenant parameters", params),
	}
}

// responseFacts say how settle reads the target's objects.
func responseFacts(ct *target.Contract) []views.Fact {
	var match []string
	for _, m := range ct.Response.Match {
		rule := m.Rule
		if rule == "" {
			rule = target.MatchExact
		}
		match = append(match, m.Field+" ("+strings.ReplaceAll(string(rule), "_", "-")+")")
	}
	status := "none documented: an object that exists counts as completed"
	if ct.Response.StatusField != "" {
		var rows []string
		for _, r := range ct.Response.Statuses {
			rows = append(rows, r.Value+" → "+string(r.Outcome))
		}
		status = ct.Response.StatusField + ": " + strings.Join(rows, ", ") + "; any other value counts as pending"
	}
	return []views.Fact{
		fact("id-field", "Object id", ct.Response.IDField),
		fact("match", "Must agree with the approved payload", ledger.PlainText(strings.Join(match, ", "), 500)),
		fact("object-status", "The object's own status", ledger.PlainText(status, 500)),
	}
}
