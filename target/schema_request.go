package target

import (
	"net/http"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// Headers a contract's headers block may not set, and why: settle sets
// some itself; some change how a request travels, which the client's
// exactly-once properties depend on; and credentials belong in auth, where
// the secret stays in the environment rather than in the contracts file.
var reservedHeaders = map[string]string{
	"Content-Type":        "settle sets it from encoding",
	"Content-Length":      "settle sets it itself",
	"Host":                "settle sets it from base_url",
	"Authorization":       "credentials belong in auth, whose secret_env keeps the secret out of this file",
	"Proxy-Authorization": "credentials belong in auth, whose secret_env keeps the secret out of this file",
}

// hopHeaders change how a request travels (Expect and the hop-by-hop
// headers); settle's client controls them so that nothing is sent twice.
var hopHeaders = []string{"Expect", "Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "Te", "Trailer", "Upgrade"}

// auth reads the auth block.
func (o *object) auth() *Auth {
	au := o.child("auth", "header", "scheme", "secret_env")
	if au == nil {
		return nil
	}
	a := &Auth{Header: au.header("header"), Scheme: au.oneOf("scheme", "", AuthBearer, AuthBasic)}
	// As for webhook secrets, the value is never echoed: an owner who
	// pasted the key itself here must not find it in settle's log.
	if s := au.str("secret_env", true); s != "" && !envRe.MatchString(s) {
		au.fail("secret_env", "must name an environment variable (A-Z, 0-9, _), never hold the secret itself")
	} else {
		a.SecretEnv = s
	}
	return a
}

// headers reads the headers block. It runs after auth, idempotency and
// conditional_update, whose headers it may not set.
func (o *object) headers(c *Contract) []Header {
	entries := o.entries("headers")
	taken := map[string]string{} // canonical name → why
	for _, h := range hopHeaders {
		taken[h] = "it changes how the request travels, which settle controls so that nothing is sent twice"
	}
	for h, why := range reservedHeaders {
		taken[h] = why
	}
	if c.Auth != nil && c.Auth.Header != "" {
		taken[http.CanonicalHeaderKey(c.Auth.Header)] = "auth.header sends the credential there"
	}
	if c.Idempotency != nil && c.Idempotency.Header != "" {
		taken[http.CanonicalHeaderKey(c.Idempotency.Header)] = "idempotency.header carries the operation's key there"
	}
	if c.ConditionalUpdate != nil && c.ConditionalUpdate.Header != "" {
		taken[http.CanonicalHeaderKey(c.ConditionalUpdate.Header)] = "conditional_update.header carries the expected version there"
	}
	var out []Header
	seen := map[string]bool{}
	for _, e := range entries {
		switch canon := http.CanonicalHeaderKey(e.key); {
		case !headerRe.MatchString(e.key):
			o.d.fail(e.keyNode, e.path, "is not an HTTP header name")
			continue
		case taken[canon] != "":
			o.d.fail(e.keyNode, e.path, "cannot be set here: %s", taken[canon])
			continue
		case seen[canon]:
			o.d.fail(e.keyNode, e.path, "is listed twice (header names ignore case)")
			continue
		default:
			seen[canon] = true
		}
		// Header values are never quoted back: one may be a pasted secret.
		v, ok := o.d.text(e.value, e.path)
		if !ok {
			continue
		}
		if p := templateProblem(v); p != "" {
			o.d.fail(e.value, e.path, "%s", p)
			continue
		}
		if controlChar(v) {
			o.d.fail(e.value, e.path, "holds a control character, which no header value may carry")
			continue
		}
		out = append(out, Header{Name: e.key, Value: Template(v)})
	}
	return out
}

// bodyFields reads body_fields. It runs after the fields settle writes at
// registration and after response, whose match fields it may not touch.
func (o *object) bodyFields(c *Contract) []BodyField {
	var out []BodyField
	for _, e := range o.entries("body_fields") {
		if !fieldRe.MatchString(e.key) {
			o.d.fail(e.keyNode, e.path, "is not a dotted field path (e.g. transfer_data.destination)")
			continue
		}
		if why := c.bodyFieldClash(e.key, out); why != "" {
			o.d.fail(e.keyNode, e.path, "%s", why)
			continue
		}
		v, ok := o.d.text(e.value, e.path)
		if !ok {
			continue
		}
		if p := templateProblem(v); p != "" {
			o.d.fail(e.value, e.path, "%s", p)
			continue
		}
		out = append(out, BodyField{Path: e.key, Value: Template(v)})
	}
	return out
}

// bodyFieldClash says why path cannot be a body field, or "". A body field
// is written after the payload was approved and hashed, so it must not
// touch what settle binds at registration, nor a field that is matched
// against the approved payload (the approved side never holds it, so every
// object would mismatch).
func (c *Contract) bodyFieldClash(path string, earlier []BodyField) string {
	named := []struct{ field, what string }{
		{c.ReferenceField, "reference_field"}, {c.TenantField, "tenant_field"},
	}
	if c.ConditionalUpdate != nil {
		named = append(named, struct{ field, what string }{c.ConditionalUpdate.VersionField, "conditional_update.version_field"})
	}
	for _, m := range c.Response.Match {
		named = append(named, struct{ field, what string }{m.Field, "response.match, which compares with the approved payload"})
	}
	for _, f := range earlier {
		named = append(named, struct{ field, what string }{f.Path, "another body field"})
	}
	for _, n := range named {
		if n.field != "" && overlaps(path, n.field) {
			return "overlaps " + n.field + " (" + n.what + ")"
		}
	}
	return ""
}

// overlaps reports whether two dotted paths are equal or one lies inside
// the other.
func overlaps(a, b string) bool {
	return a == b || strings.HasPrefix(a, b+".") || strings.HasPrefix(b, a+".")
}

// entry is one key of a free-form mapping (headers, body_fields).
type entry struct {
	key     string
	keyNode ast.Node
	value   ast.Node
	path    string
}

// entries reads a mapping whose keys are the owner's (header names, field
// paths) rather than the schema's. Keys are reported in file order.
func (o *object) entries(key string) []entry {
	n := o.value(key)
	if n == nil {
		return nil
	}
	var values []*ast.MappingValueNode
	switch m := n.(type) {
	case *ast.MappingNode:
		values = m.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{m}
	default:
		o.fail(key, "must be a mapping, not %s", kind(n))
		return nil
	}
	var out []entry
	for _, kv := range values {
		k, ok := kv.Key.(*ast.StringNode)
		if !ok {
			if _, merge := kv.Key.(*ast.MergeKeyNode); merge {
				o.d.fail(kv.Key, join(o.path, key), "merge keys (<<) are not supported; write the fields out")
			} else {
				o.d.fail(kv.Key, join(o.path, key), "keys must be plain names")
			}
			continue
		}
		out = append(out, entry{key: k.Value, keyNode: kv.Key, value: kv.Value, path: join(o.path, key) + "." + k.Value})
	}
	return out
}

// text reads a node that must be text; numbers and booleans must be quoted
// so that YAML's typing never changes what was meant ("2024-06-20").
func (d *decoder) text(n ast.Node, field string) (string, bool) {
	if n == nil {
		d.fail(n, field, "is empty; give a value or remove the field")
		return "", false
	}
	if n = d.plain(n, field); n == nil {
		return "", false
	}
	switch v := n.(type) {
	case *ast.StringNode:
		return v.Value, true
	case *ast.NullNode:
		d.fail(n, field, "is empty; give a value or remove the field")
	case *ast.MappingNode, *ast.MappingValueNode, *ast.SequenceNode:
		d.fail(n, field, "must be a single value, not %s", kind(n))
	default:
		d.fail(n, field, "must be text (quote it)")
	}
	return "", false
}
