package target

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// Template is a header or body value from a contract. It may name tenant
// parameters as {tenant.NAME}, which the client fills in per request from
// the ledger (ParamSource); everything else is sent as written.
type Template string

var (
	// ParamNameRe is the form of a tenant parameter name.
	ParamNameRe = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)
	placeholder = regexp.MustCompile(`\{tenant\.([a-z][a-z0-9_]{0,31})\}`)
)

// Params returns the tenant parameters the template names, sorted, once
// each.
func (t Template) Params() []string {
	var names []string
	for _, m := range placeholder.FindAllStringSubmatch(string(t), -1) {
		if !slices.Contains(names, m[1]) {
			names = append(names, m[1])
		}
	}
	sort.Strings(names)
	return names
}

// expand fills in params. A parameter that is absent or blank is listed in
// missing (sorted) and the result is then unusable.
func (t Template) expand(params map[string]string) (out string, missing []string) {
	out = placeholder.ReplaceAllStringFunc(string(t), func(m string) string {
		name := m[len("{tenant.") : len(m)-1]
		v, ok := params[name]
		if !ok || strings.TrimSpace(v) == "" {
			if !slices.Contains(missing, name) {
				missing = append(missing, name)
			}
			return ""
		}
		return v
	})
	sort.Strings(missing)
	return out, missing
}

// templateProblem says what is wrong with a template as written, or "".
// Only {tenant.NAME} placeholders are allowed, so that a typo such as
// {tenant.Account} or {account} is an error at start-up rather than text
// sent to the target.
func templateProblem(s string) string {
	if strings.TrimSpace(s) == "" {
		return "is empty; give a value or remove the field"
	}
	if strings.ContainsAny(placeholder.ReplaceAllString(s, ""), "{}") {
		return "may contain only {tenant.NAME} placeholders (NAME: a-z, 0-9 and _, starting with a letter, at most 32), and no other braces"
	}
	return ""
}

// controlChar reports whether s holds a control character, which no
// header value may carry (a line break would start another header).
func controlChar(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r != '\t' && unicode.IsControl(r) }) >= 0
}

// TenantParams returns every tenant parameter the contract's headers and
// body fields name, sorted, once each: what `settle tenant set` must
// provide for each tenant before an operation to this target is sent.
func (c *Contract) TenantParams() []string { return c.params(true) }

// params returns the tenant parameters the headers name, and with body
// those the body fields name too, sorted, once each. A lookup sends no
// body, so it needs only the headers'.
func (c *Contract) params(body bool) []string {
	var names []string
	add := func(t Template) {
		for _, n := range t.Params() {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	for _, h := range c.Headers {
		add(h.Value)
	}
	if body {
		for _, f := range c.BodyFields {
			add(f.Value)
		}
	}
	sort.Strings(names)
	return names
}
