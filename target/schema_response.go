package target

import (
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

func (o *object) response(c *Contract) Response {
	r := Response{IDField: o.field("id_field")}
	o.require("id_field")
	if o.require("match") {
		r.Match = o.match(c)
	}
	r.StatusField = o.field("status_field")
	r.Statuses = o.statuses(r.StatusField != "")
	r.ErrorObjectField = o.field("error_object_field")
	if r.ErrorObjectField != "" && !slices.ContainsFunc(c.Outcomes, func(x OutcomeRule) bool { return x.Outcome == RejectedWithoutSideEffect }) {
		// Read only in such answers: without one, the field would look like
		// a check settle never makes.
		o.fail("error_object_field", "is read only in answers mapped rejected_without_side_effect, and outcomes has none")
	}
	return r
}

// match reads response.match: each item a dotted path (rule exact) or a
// mapping {field, rule}.
func (o *object) match(c *Contract) []MatchField {
	var match []MatchField
	items := o.list("match")
	if seq, ok := o.fields["match"].Value.(*ast.SequenceNode); ok && len(seq.Values) == 0 {
		o.fail("match", "needs at least one field; matching nothing would accept any object")
	}
	has := func(f string) bool {
		return slices.ContainsFunc(match, func(m MatchField) bool { return m.Field == f })
	}
	for i, n := range items {
		p := index(join(o.path, "match"), i)
		m := MatchField{Rule: MatchExact}
		switch v := o.d.plain(n, p).(type) {
		case nil:
			continue
		case *ast.StringNode:
			m.Field = v.Value
		case *ast.MappingNode, *ast.MappingValueNode:
			mo := o.d.object(v, p, "field", "rule")
			if mo == nil {
				continue
			}
			m.Field = mo.field("field")
			mo.require("field")
			m.Rule = MatchRule(mo.oneOf("rule", string(MatchExact), matchRuleNames...))
			if m.Field == "" {
				continue
			}
		default:
			o.d.fail(n, p, "must be a dotted field path, or a mapping with field and rule")
			continue
		}
		switch {
		case !fieldRe.MatchString(m.Field):
			o.d.fail(n, p, "%q is not a dotted field path (e.g. metadata.settle_ref)", m.Field)
		case has(m.Field):
			o.d.fail(n, p, "%s is listed twice", m.Field)
		case (m.Field == c.ReferenceField || m.Field == c.TenantField) && m.Rule != MatchExact:
			// settle wrote these itself: anything but the exact value is
			// another operation's object, or another tenant's.
			o.d.fail(n, p, "%s is written by settle and compares exactly; remove the rule", m.Field)
		default:
			match = append(match, m)
		}
	}
	// A lookup result is this operation's only if it carries settle's
	// reference and tenant (paper: check tenant on every lookup result).
	for _, f := range []string{c.ReferenceField, c.TenantField} {
		if f != "" && len(match) > 0 && !has(f) {
			o.fail("match", "must include %s, which settle writes into the payload", f)
		}
	}
	return match
}

// statuses reads response.statuses, the object status table. It belongs
// with status_field: a table without the field would look like a status
// check that settle never makes.
func (o *object) statuses(hasField bool) []StatusRule {
	if !o.has("statuses") {
		if hasField {
			o.fail("statuses", "required with status_field: list the values and what each means (at least one succeeded)")
		}
		return nil
	}
	if !hasField {
		if o.has("status_field") {
			return nil // status_field itself is wrong and already reported
		}
		o.fail("statuses", "needs status_field; set it to the field holding the status, or remove statuses")
		return nil
	}
	items := o.list("statuses")
	if seq, ok := o.fields["statuses"].Value.(*ast.SequenceNode); ok && len(seq.Values) == 0 {
		o.fail("statuses", "needs at least one value; with none, nothing would ever count as completed")
		return nil
	}
	var (
		out       []StatusRule
		succeeded bool
	)
	for i, n := range items {
		so := o.d.object(n, index(join(o.path, "statuses"), i), "value", "outcome", "documentation")
		if so == nil {
			continue
		}
		r := StatusRule{Value: so.str("value", true), Outcome: ObjectOutcome(so.oneOf("outcome", "", objectOutcomeNames...)),
			Documentation: so.url("documentation", false)}
		so.require("outcome")
		if r.Value == "" || r.Outcome == "" {
			continue
		}
		if slices.ContainsFunc(out, func(x StatusRule) bool { return x.Value == r.Value }) {
			so.fail("value", "%s is listed twice", r.Value)
			continue
		}
		// A status read as anything but succeeded changes what settle
		// concludes from an object that exists, so the owner cites where
		// the target says so; unlisted values are pending, the safe reading.
		if r.Outcome != ObjectSucceeded && !so.has("documentation") {
			so.fail("documentation", "required for %s: cite where the target documents what %s means", r.Outcome, strings.TrimSpace(r.Value))
		}
		succeeded = succeeded || r.Outcome == ObjectSucceeded
		out = append(out, r)
	}
	if len(out) > 0 && !succeeded {
		o.fail("statuses", "needs at least one value with outcome succeeded; with none, nothing would ever count as completed")
	}
	return out
}
