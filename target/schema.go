package target

import (
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// Limits and defaults of the schema (see CONTRACTS.md).
const (
	DefaultTimeout   = 10 * time.Second
	MaxTimeout       = 2 * time.Minute
	DefaultTolerance = 5 * time.Minute
	MaxTolerance     = time.Hour
	MaxReplayMargin  = time.Hour
	// MaxWebhookBody is the largest inbound webhook body settle reads, and
	// the most a contract's webhook.max_body_bytes may ask for: the
	// setting can only lower it.
	MaxWebhookBody = 1 << 20
	// MaxReconcileConcurrency bounds reconcile.concurrency: more than the
	// reconciler's workers would never be used.
	MaxReconcileConcurrency = 256
)

var (
	// A leading letter or digit keeps "." and ".." out of /webhooks/{target}.
	nameRe   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	headerRe = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$") // RFC 9110 token
	envRe    = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)            // upper case: a pasted secret rarely is
	fieldRe  = regexp.MustCompile(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`)

	targetFields = []string{"name", "owner", "documentation", "base_url", "timeout", "deadline", "create",
		"reference_field", "tenant_field", "idempotency", "lookup", "conditional_update",
		"late_requests_rejected", "outcomes", "response", "webhook", "auth", "encoding", "headers", "body_fields",
		"reconcile"}
	createMethods = []string{"POST", "PUT", "PATCH", "DELETE"}
)

// target decodes and validates one entry of the targets list. It returns
// the entry's object too, so that Parse can report duplicates on its line.
func (d *decoder) target(n ast.Node, path string) (*Contract, *object) {
	o := d.object(n, path, targetFields...)
	if o == nil {
		return nil, nil
	}
	c := &Contract{Name: o.str("name", true)}
	if c.Name != "" && !nameRe.MatchString(c.Name) {
		o.fail("name", "%q is not a valid name (1 to 64 of A-Z a-z 0-9 . _ -, starting with a letter or digit)", c.Name)
	}
	if ow := o.need("owner", "team", "escalation_contact", "notify"); ow != nil {
		c.Owner = Owner{Team: ow.str("team", true), EscalationContact: ow.str("escalation_contact", true)}
		if nt := ow.child("notify", "url", "secret_env", "format"); nt != nil {
			c.Owner.Notify = &Notify{URL: nt.url("url", true),
				Format: nt.oneOf("format", NotifySettle, NotifySettle, NotifySlack)}
			if u, err := url.Parse(c.Owner.Notify.URL); err == nil && u.Fragment != "" {
				nt.fail("url", "must not have a #fragment")
			}
			// As for webhooks, the value is never echoed: it may be the
			// secret itself, pasted in the wrong place.
			if s := nt.str("secret_env", true); s != "" && !envRe.MatchString(s) {
				nt.fail("secret_env", "must name an environment variable (A-Z, 0-9, _), never hold the secret itself")
			} else {
				c.Owner.Notify.SecretEnv = s
			}
		}
	}
	if doc := o.need("documentation", "url", "checked"); doc != nil {
		c.Documentation = Documentation{URL: doc.url("url", true), Checked: doc.date("checked")}
	}
	if o.require("base_url") {
		if s := o.str("base_url", false); s != "" {
			if u, err := url.Parse(s); err != nil || !absolute(u) || u.RawQuery != "" || u.Fragment != "" {
				o.fail("base_url", "must be an absolute http or https URL without user info, query or fragment")
			} else {
				c.BaseURL = strings.TrimRight(s, "/")
			}
		}
	}
	c.Timeout = o.duration("timeout", DefaultTimeout)
	if c.Timeout == 0 || c.Timeout > MaxTimeout {
		o.fail("timeout", "must be more than 0s and at most %s", MaxTimeout)
	}
	// The deadline has no default: too short floods the owner, too long
	// leaves operations unresolved, and only the owner can choose.
	if o.require("deadline") {
		var ok bool
		if c.Deadline, ok = o.durationOK("deadline"); ok && c.Deadline <= c.Timeout {
			o.fail("deadline", "must be longer than the timeout (%s)", c.Timeout)
		}
	}
	if cr := o.need("create", "method", "path"); cr != nil {
		c.Create.Method = cr.method("method", true, createMethods...)
		c.Create.Path = cr.urlPath("path")
	}
	c.ReferenceField = o.field("reference_field")
	c.TenantField = o.field("tenant_field")
	if a, b := c.ReferenceField, c.TenantField; a != "" && b != "" &&
		(a == b || strings.HasPrefix(a, b+".") || strings.HasPrefix(b, a+".")) {
		o.fail("tenant_field", "overlaps reference_field; settle writes both, so they must be separate fields")
	}
	if id := o.child("idempotency", "header", "scope", "retention", "mismatch", "concurrent", "replay_margin", "replayed_header"); id != nil {
		c.Idempotency = &Idempotency{
			Header:     id.header("header"),
			Scope:      id.str("scope", false),
			Retention:  id.duration("retention", 0),
			Mismatch:   id.oneOf("mismatch", Undocumented, MismatchRejected, MismatchReplaysOriginal, Undocumented),
			Concurrent: id.oneOf("concurrent", Undocumented, ConcurrentConflict, ConcurrentWaits, Undocumented),
		}
		var ok bool
		if c.Idempotency.ReplayMargin, ok = id.durationOK("replay_margin"); ok &&
			(c.Idempotency.ReplayMargin == 0 || c.Idempotency.ReplayMargin > MaxReplayMargin) {
			id.fail("replay_margin", "must be more than 0s and at most %s; leave it out for the default %s", MaxReplayMargin, DefaultReplayMargin)
		}
		if id.has("replayed_header") {
			c.Idempotency.ReplayedHeader = id.header("replayed_header")
		}
	}
	c.Lookup = o.lookup(c)
	if cu := o.child("conditional_update", "header", "version_field"); cu != nil {
		c.ConditionalUpdate = &ConditionalUpdate{Header: cu.header("header"), VersionField: cu.field("version_field")}
	}
	c.LateRequestsRejected = o.boolean("late_requests_rejected")
	c.Outcomes = o.outcomes(c)
	if r := o.need("response", "id_field", "match", "status_field", "statuses", "error_object_field"); r != nil {
		c.Response = r.response(c)
	}
	c.Auth = o.auth()
	c.Encoding = Encoding(o.oneOf("encoding", string(EncodingJSON), string(EncodingJSON), string(EncodingForm)))
	c.Headers = o.headers(c)
	c.BodyFields = o.bodyFields(c)
	if wh := o.child("webhook", "secret_env", "tolerance", "signature_header", "object_field", "event_id_field", "max_body_bytes"); wh != nil {
		c.Webhook = &Webhook{Tolerance: wh.duration("tolerance", DefaultTolerance),
			SignatureHeader: "Settle-Signature", ObjectField: "data", EventIDField: "id"}
		if wh.has("signature_header") {
			c.Webhook.SignatureHeader = wh.header("signature_header")
		}
		if wh.has("object_field") {
			c.Webhook.ObjectField = wh.field("object_field")
		}
		if wh.has("event_id_field") {
			c.Webhook.EventIDField = wh.field("event_id_field")
		}
		// The value is never echoed: an owner who pasted the secret itself
		// here must not find it again in settle's start-up log.
		if s := wh.str("secret_env", true); s != "" && !envRe.MatchString(s) {
			wh.fail("secret_env", "must name an environment variable (A-Z, 0-9, _), never hold the secret itself")
		} else {
			c.Webhook.SecretEnv = s
		}
		if c.Webhook.Tolerance == 0 || c.Webhook.Tolerance > MaxTolerance {
			wh.fail("tolerance", "must be more than 0s and at most %s", MaxTolerance)
		}
		c.Webhook.MaxBodyBytes = MaxWebhookBody
		if s, ok := wh.scalar("max_body_bytes"); ok {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || n > MaxWebhookBody {
				wh.fail("max_body_bytes", "must be a whole number of bytes from 1 to %d", MaxWebhookBody)
			} else {
				c.Webhook.MaxBodyBytes = n
			}
		}
	}
	if rc := o.child("reconcile", "concurrency"); rc != nil {
		if s, ok := rc.scalar("concurrency"); ok {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || n > MaxReconcileConcurrency {
				rc.fail("concurrency", "must be a whole number from 1 to %d; leave it out for the default %d",
					MaxReconcileConcurrency, DefaultReconcileConcurrency)
			} else {
				c.Reconcile.Concurrency = n
			}
		}
	}
	return c, o
}

func (o *object) lookup(c *Contract) *Lookup {
	lo := o.child("lookup", "method", "path", "results_field", "read_after_write", "propagation_limit")
	if lo == nil {
		return nil
	}
	// Only GET: the reconciler repeats lookups freely, so they must be safe.
	l := &Lookup{Method: lo.method("method", false, "GET"), Path: lo.urlPath("path", "{reference}", "{remote_ref}")}
	if l.Method == "" {
		l.Method = "GET"
	}
	if l.Path != "" && !strings.Contains(l.Path, "{reference}") && !l.NeedsRemoteRef() {
		lo.fail("path", "must contain {reference} or {remote_ref}")
	}
	if _, q, ok := strings.Cut(l.Path, "?"); ok {
		// The query is decoded, filled in and re-encoded per lookup
		// (LookupURL), so it must decode, and placeholders belong in values.
		pairs, err := splitQuery(q)
		switch {
		case err != nil:
			lo.fail("path", "the query holds an invalid %%-escape (write %%25 for a literal %%)")
		case slices.ContainsFunc(pairs, func(p queryPair) bool { return strings.ContainsAny(p.name, "{}") }):
			lo.fail("path", "placeholders go in query values (name={reference}), not in names")
		}
	}
	if strings.Contains(l.Path, "{reference}") && c.ReferenceField == "" && c.Idempotency == nil {
		lo.fail("path", "uses {reference}, but settle sends the reference only through reference_field or the idempotency header; set one")
	}
	l.ResultsField = lo.field("results_field")
	l.ReadAfterWrite = lo.boolean("read_after_write")
	var ok bool
	if l.PropagationLimit, ok = lo.durationOK("propagation_limit"); ok && l.PropagationLimit == 0 {
		lo.fail("propagation_limit", "must be more than 0s; remove it if none is documented, or set read_after_write: true")
	}
	return l
}

func (o *object) outcomes(c *Contract) []OutcomeRule {
	var rules []OutcomeRule
	seen := make(map[string]int) // status → line
	inProgress := false
	for i, n := range o.list("outcomes") {
		ro := o.d.object(n, index(join(o.path, "outcomes"), i), "status", "outcome", "documentation")
		if ro == nil {
			continue
		}
		r := OutcomeRule{Outcome: Outcome(ro.oneOf("outcome", "", outcomeNames...)), Documentation: ro.url("documentation", false)}
		ro.require("outcome")
		if ro.require("status") {
			r.Status = ro.status("status")
		}
		if r.Status == "" || r.Outcome == "" {
			continue
		}
		if line, dup := seen[r.Status]; dup {
			ro.fail("status", "%s is mapped twice (also on line %d)", r.Status, line)
			continue
		}
		seen[r.Status] = lineOf(ro.fields["status"].Value)
		inProgress = inProgress || r.Outcome == InProgress
		success := r.Status[0] == '2'
		switch {
		case (r.Outcome == Succeeded || r.Outcome == AcceptedPending) && !success:
			ro.fail("outcome", "%s is only possible for a 2xx status", r.Outcome)
		case ro.has("documentation"):
			// Present: either valid, or already reported as not a URL.
		case r.Outcome == RejectedWithoutSideEffect:
			ro.fail("documentation", "required for rejected_without_side_effect: cite where the target documents that %s happens before any side effect", r.Status)
		case r.Status[0] == '5' && r.Outcome != Unknown:
			ro.fail("documentation", "required to map %s to %s: a 5xx is unknown unless the target documents otherwise", r.Status, r.Outcome)
		}
		rules = append(rules, r)
	}
	if c.Idempotency != nil && c.Idempotency.Concurrent == ConcurrentConflict && !inProgress {
		o.fail("outcomes", "idempotency.concurrent is conflict, so map the status the target returns for it to in_progress")
	}
	return rules
}

// need reads a required block.
func (o *object) need(key string, known ...string) *object {
	if !o.require(key) {
		return nil
	}
	return o.child(key, known...)
}

func (o *object) field(key string) string {
	s := o.str(key, false)
	if s != "" && !fieldRe.MatchString(s) {
		o.fail(key, "%q is not a dotted field path (e.g. metadata.settle_ref)", s)
		return ""
	}
	return s
}

func (o *object) header(key string) string {
	s := o.str(key, true)
	if s != "" && !headerRe.MatchString(s) {
		o.fail(key, "%q is not an HTTP header name", s)
		return ""
	}
	return s
}

func (o *object) method(key string, required bool, allowed ...string) string {
	s := o.str(key, required)
	if s != "" && !slices.Contains(allowed, s) {
		o.fail(key, "%q is not one of %s", s, strings.Join(allowed, ", "))
		return ""
	}
	return s
}

func (o *object) url(key string, required bool) string {
	s := o.str(key, required)
	if s == "" {
		return ""
	}
	if u, err := url.Parse(s); err != nil || !absolute(u) {
		o.fail(key, "must be an absolute http or https URL without user info")
		return ""
	}
	return s
}

func absolute(u *url.URL) bool {
	return (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil
}

// urlPath reads a request path below base_url; placeholders lists the only
// {names} it may contain.
func (o *object) urlPath(key string, placeholders ...string) string {
	s := o.str(key, true)
	if s == "" {
		return ""
	}
	bare := s
	for _, p := range placeholders {
		bare = strings.ReplaceAll(bare, p, "x")
	}
	u, err := url.Parse(bare)
	switch {
	case !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//"):
		o.fail(key, "must start with a single /")
	case strings.ContainsAny(bare, "{}"):
		if len(placeholders) == 0 {
			o.fail(key, "takes no placeholders")
		} else {
			o.fail(key, "may contain only the placeholders %s", strings.Join(placeholders, " and "))
		}
	case err != nil || strings.ContainsAny(bare, " \t#") || u.Host != "":
		o.fail(key, "is not a valid URL path (escape spaces; no fragment)")
	default:
		return s
	}
	return ""
}

// status reads an exact code (200–599) or a class (2xx–5xx), normalised.
func (o *object) status(key string) string {
	s, ok := o.scalar(key)
	if !ok {
		return ""
	}
	if len(s) == 3 && strings.EqualFold(s[1:], "xx") && s[0] >= '2' && s[0] <= '5' {
		return s[:1] + "xx"
	}
	if n, err := strconv.Atoi(s); err == nil && n >= 200 && n <= 599 && len(s) == 3 {
		return s
	}
	o.fail(key, "%q is not a status (use a code 200-599 such as 409, or a class 2xx-5xx such as 4xx)", s)
	return ""
}
