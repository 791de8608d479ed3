package sim

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Stripe's v1 API takes application/x-www-form-urlencoded bodies whose keys
// nest with brackets: metadata[settle_ref]=r1 is a hash, items[0][price]=p
// an array of hashes, expand[]=a&expand[]=b an array in the order sent.
// decodeForm turns such a body into plain values — map[string]any for a
// hash, []any for an array, string for every leaf — so that parameters can
// be validated, compared and shown as JSON.
//
// What the simulator decides where Stripe's documentation is silent:
//   - A hash whose keys are all array indexes 0..n-1 is an array (except
//     metadata, whose keys are the client's and always a hash); indexes with
//     gaps or leading zeros are refused.
//   - "[]" appends and may only end a key; a key may not be both a value and
//     a container (a=1&a[b]=2), nor be given twice (a=1&a=2).
//
// Two requests have the same parameters when their decoded values are
// equal: the order of different keys does not matter, the order of "[]"
// appends does (it is the array's order), and explicit indexes say where an
// element stands whatever order they arrive in.
func decodeForm(body string) (map[string]any, error) {
	values, err := url.ParseQuery(body)
	if err != nil {
		return nil, fmt.Errorf("the body is not valid application/x-www-form-urlencoded")
	}
	root := &formNode{}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	slices.Sort(keys) // so that the first conflict reported is always the same
	for _, key := range keys {
		path, err := splitFormKey(key)
		if err != nil {
			return nil, err
		}
		if err := root.insert(key, path, values[key]); err != nil {
			return nil, err
		}
	}
	v, err := root.value(nil)
	if err != nil {
		return nil, err
	}
	m, _ := v.(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// formNode is one key of the body on its way to a value.
type formNode struct {
	leaf     *string
	kids     map[string]*formNode
	appended []string // values of "key[]", in order
}

// splitFormKey splits "a[b][0][]" into ["a", "b", "0", ""]; "" stands for
// "[]" and may only come last.
func splitFormKey(key string) ([]string, error) {
	bad := fmt.Errorf("invalid parameter name %s: use name, name[key] or name[]", quoteName(key))
	name, rest, _ := strings.Cut(key, "[")
	if name == "" || strings.Contains(name, "]") {
		return nil, bad
	}
	path := []string{name}
	if rest == "" && !strings.Contains(key, "[") {
		return path, nil
	}
	rest = "[" + rest
	for rest != "" {
		if rest[0] != '[' {
			return nil, bad
		}
		seg, after, ok := strings.Cut(rest[1:], "]")
		if !ok || strings.Contains(seg, "[") {
			return nil, bad
		}
		if seg == "" && after != "" {
			return nil, bad
		}
		path = append(path, seg)
		rest = after
	}
	return path, nil
}

func (n *formNode) insert(key string, path []string, vals []string) error {
	conflict := fmt.Errorf("parameter %s conflicts with another parameter of the same name", quoteName(key))
	for i, seg := range path {
		if n.leaf != nil {
			return conflict
		}
		if seg == "" { // "[]": the values are appended to n, in order
			if len(n.kids) > 0 {
				return conflict
			}
			n.appended = append(n.appended, vals...)
			return nil
		}
		if len(n.appended) > 0 {
			return conflict
		}
		if n.kids == nil {
			n.kids = map[string]*formNode{}
		}
		kid := n.kids[seg]
		if kid == nil {
			kid = &formNode{}
			n.kids[seg] = kid
		}
		n = kid
		if i == len(path)-1 {
			if n.kids != nil || n.appended != nil || n.leaf != nil {
				return conflict
			}
			if len(vals) != 1 {
				return fmt.Errorf("parameter %s was given more than once; use name[] for a list", quoteName(key))
			}
			n.leaf = &vals[0]
		}
	}
	return nil
}

// value converts n, found at path, to a plain value.
func (n *formNode) value(path []string) (any, error) {
	switch {
	case n.leaf != nil:
		return *n.leaf, nil
	case n.appended != nil:
		list := make([]any, len(n.appended))
		for i, v := range n.appended {
			list[i] = v
		}
		return list, nil
	}
	out := make(map[string]any, len(n.kids))
	for k, kid := range n.kids {
		v, err := kid.value(slices.Concat(path, []string{k}))
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	if len(path) == 1 && path[0] == "metadata" {
		return out, nil
	}
	return asArray(out, path)
}

// asArray returns m as an array if all its keys are array indexes.
func asArray(m map[string]any, path []string) (any, error) {
	if len(m) == 0 {
		return m, nil
	}
	for k := range m {
		if !isDigits(k) {
			return m, nil
		}
	}
	list := make([]any, len(m))
	for k, v := range m {
		i, err := strconv.Atoi(k)
		if err != nil || k != strconv.Itoa(i) {
			return nil, fmt.Errorf("parameter %s has an invalid array index", quoteName(formKey(path)))
		}
		if i >= len(m) {
			return nil, fmt.Errorf("parameter %s has array indexes with gaps; number elements 0, 1, 2, …", quoteName(formKey(path)))
		}
		list[i] = v
	}
	return list, nil
}

// namePattern is what an error message may repeat of a parameter name. A
// client that posts JSON as a form sends its whole payload as one "name",
// and an error must not carry a payload back (or into anyone's logs).
var namePattern = regexp.MustCompile(`^[A-Za-z0-9_\-\[\]]{1,100}$`)

// quoteName quotes a parameter name for a message, or stands in for one
// that does not look like a name.
func quoteName(name string) string {
	if namePattern.MatchString(name) {
		return strconv.Quote(name)
	}
	return "(not shown)"
}

// paramName is name for an error's param field, or "" if it does not look
// like a name.
func paramName(name string) string {
	if namePattern.MatchString(name) {
		return name
	}
	return ""
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// formKey writes path back in bracket notation, for messages.
func formKey(path []string) string {
	if len(path) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(path[0])
	for _, seg := range path[1:] {
		b.WriteString("[" + seg + "]")
	}
	return b.String()
}
