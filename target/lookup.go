package target

import (
	"errors"
	"net/url"
	"strings"
)

// LookupURL returns the method and absolute URL of a lookup, with
// {reference} and {remote_ref} filled in. In the path each value is
// path-escaped. The query is read as name=value pairs (decoded as a form
// decodes them), the values are filled in and every pair is re-encoded, in
// the order written, so that a query-language string such as Stripe's
// query=metadata['settle_ref']:'{reference}' reaches the target decoded
// exactly as written with the reference in place. A value that goes into
// the query and holds a quote or a backslash is refused rather than
// escaped for a query language settle does not know: settle's references
// are UUIDs, and targets' object ids hold neither. The error names which
// value, never the value. It returns "", "", nil when the contract has no
// lookup; when Lookup.NeedsRemoteRef, call it only with a remote ref.
func (c *Contract) LookupURL(reference, remoteRef string) (method, u string, err error) {
	if c.Lookup == nil {
		return "", "", nil
	}
	p, q, hasQuery := strings.Cut(c.Lookup.Path, "?")
	p = strings.NewReplacer("{reference}", pathEscape(reference), "{remote_ref}", pathEscape(remoteRef)).Replace(p)
	if hasQuery {
		pairs, err := splitQuery(q)
		if err != nil {
			return "", "", err
		}
		fill := strings.NewReplacer("{reference}", reference, "{remote_ref}", remoteRef)
		enc := make([]string, 0, len(pairs))
		for _, kv := range pairs {
			for _, v := range []struct{ name, placeholder, value string }{
				{"settle's reference", "{reference}", reference}, {"the target's object id", "{remote_ref}", remoteRef},
			} {
				if strings.Contains(kv.value, v.placeholder) && strings.ContainsAny(v.value, `'"\`) {
					return "", "", errors.New("lookup: " + v.name + " holds a quote or a backslash, which settle does not escape for the target's query language")
				}
			}
			s := url.QueryEscape(kv.name)
			if kv.hasValue {
				s += "=" + url.QueryEscape(fill.Replace(kv.value))
			}
			enc = append(enc, s)
		}
		p += "?" + strings.Join(enc, "&")
	}
	return c.Lookup.Method, c.BaseURL + p, nil
}

// queryPair is one name=value of a lookup path's query, decoded.
type queryPair struct {
	name, value string
	hasValue    bool
}

// splitQuery decodes a query as written in a contract, keeping the order.
func splitQuery(q string) ([]queryPair, error) {
	var out []queryPair
	for _, part := range strings.Split(q, "&") {
		if part == "" {
			continue
		}
		k, v, hasValue := strings.Cut(part, "=")
		name, err1 := url.QueryUnescape(k)
		value, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			return nil, errors.New("lookup: the path's query holds an invalid %-escape")
		}
		out = append(out, queryPair{name: name, value: value, hasValue: hasValue})
	}
	return out, nil
}
