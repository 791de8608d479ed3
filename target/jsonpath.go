package target

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"settle/ledger"
)

// Errors from the JSON helpers name field paths only, never values: payloads
// and remote objects may hold personal or financial data.

// decodeJSON decodes exactly one JSON value, keeping numbers exact.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errors.New("not valid JSON")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not valid JSON: data after the value")
	}
	return v, nil
}

// get returns the value at a dotted path; ok is false when any step is
// missing or is not an object.
func get(v any, path string) (any, bool) {
	for _, seg := range strings.Split(path, ".") {
		m, isObj := v.(map[string]any)
		if !isObj {
			return nil, false
		}
		if v, isObj = m[seg]; !isObj {
			return nil, false
		}
	}
	return v, true
}

// InjectFields sets each dotted path of fields (e.g. "metadata.settle_ref")
// in the JSON object payload to its string value, creating intermediate
// objects. A path that already holds the same string is left alone; one
// that holds anything else, or that crosses a non-object, is a
// ledger.EInvalid naming the payload path and the clash, so settle never
// overwrites a value the client approved. The output is re-marshalled
// (settle canonicalises it afterwards).
func InjectFields(payload []byte, fields map[string]string) ([]byte, error) {
	list := make([]boundField, 0, len(fields))
	for p, v := range fields {
		list = append(list, boundField{path: p, value: v, what: "its own value"})
	}
	return inject(payload, list)
}

// boundField is one value settle writes into a payload; what names it for
// the client ("the operation's reference (reference_field of target x)").
type boundField struct {
	path, value, what string
	// replace lets a string already at path be overwritten: a supersede's
	// successor carries its predecessor's reference, which it replaces.
	replace bool
}

func inject(payload []byte, fields []boundField) ([]byte, error) {
	v, err := decodeJSON(payload)
	if err != nil {
		return nil, fmt.Errorf("inject fields: payload: %w", err)
	}
	root, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("inject fields: payload is not a JSON object")
	}
	// Sorted for deterministic errors when paths conflict.
	slices.SortFunc(fields, func(a, b boundField) int { return strings.Compare(a.path, b.path) })
	for _, f := range fields {
		if !fieldRe.MatchString(f.path) {
			return nil, fmt.Errorf("inject fields: %q is not a dotted field path", f.path)
		}
		segs := strings.Split(f.path, ".")
		m := root
		for i, seg := range segs[:len(segs)-1] {
			next, exists := m[seg]
			if !exists {
				child := map[string]any{}
				m[seg] = child
				m = child
				continue
			}
			if m, ok = next.(map[string]any); !ok {
				return nil, ledger.Errorf(ledger.EInvalid,
					"payload.%s is %s, not an object, so settle cannot write %s at %s; send %s as an object or leave it out",
					strings.Join(segs[:i+1], "."), jsonKind(next), f.what, f.path, strings.Join(segs[:i+1], "."))
			}
		}
		last := segs[len(segs)-1]
		if old, exists := m[last]; exists {
			if s, isStr := old.(string); isStr && f.replace {
				m[last] = f.value
				continue
			} else if !isStr || s != f.value {
				return nil, ledger.Errorf(ledger.EInvalid,
					"payload.%s is already set, but settle writes %s there; leave it out of the payload", f.path, f.what)
			}
			continue
		}
		m[last] = f.value
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(root); err != nil {
		return nil, fmt.Errorf("inject fields: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// jsonKind names the kind of a decoded JSON value, never the value.
func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case nil:
		return "null"
	}
	return "an object"
}

// RemoteID reads the remote object id at response.id_field from body. The
// id must be a non-empty string or a number (returned in its JSON form),
// and usable text by ledger.CheckProviderText: an id with a NUL or another
// control character, or longer than ledger.MaxProviderText bytes, is no id
// settle can store or show. For such an id the error says why (never
// repeating it) and the raw id is returned beside it, for a caller that
// shows it escaped (ledger.PlainText); every caller that stores an id
// treats any error as "no readable id".
func (c *Contract) RemoteID(body []byte) (string, error) {
	id, err := c.rawRemoteID(body)
	if err != nil {
		return "", err
	}
	if err := ledger.CheckProviderText(c.Response.IDField, id); err != nil {
		return id, fmt.Errorf("remote id: %s", ledger.ErrorMessage(err))
	}
	return id, nil
}

func (c *Contract) rawRemoteID(body []byte) (string, error) {
	v, err := decodeJSON(body)
	if err != nil {
		return "", fmt.Errorf("remote id: %w", err)
	}
	id, ok := get(v, c.Response.IDField)
	if !ok {
		return "", fmt.Errorf("remote id: %s is missing", c.Response.IDField)
	}
	switch id := id.(type) {
	case string:
		if id != "" {
			return id, nil
		}
	case json.Number:
		return id.String(), nil
	}
	return "", fmt.Errorf("remote id: %s is not a non-empty string or a number", c.Response.IDField)
}

// ExpectedVersion returns the version an update expects to replace: the
// value at conditional_update.version_field in the approved payload, a
// non-empty string or a number as written. ok is false when the contract
// has no conditional_update or no version_field, or the payload lacks a
// usable value; a sender that needs the guard must then not resend.
func (c *Contract) ExpectedVersion(payload []byte) (version string, ok bool) {
	if c.ConditionalUpdate == nil || c.ConditionalUpdate.VersionField == "" {
		return "", false
	}
	v, err := decodeJSON(payload)
	if err != nil {
		return "", false
	}
	switch x, _ := get(v, c.ConditionalUpdate.VersionField); x := x.(type) {
	case string:
		return x, x != ""
	case json.Number:
		return x.String(), true
	}
	return "", false
}

// Results extracts the objects of a lookup response: the array at
// lookup.results_field, or the body itself as the one result when
// results_field is empty. An empty array is zero results; a body of the
// wrong shape is an error, never "not found", since only a well-formed
// answer can be evidence of absence.
func (c *Contract) Results(body []byte) ([]json.RawMessage, error) {
	if c.Lookup == nil {
		return nil, fmt.Errorf("lookup results: target %s has no lookup", c.Name)
	}
	raw := json.RawMessage(bytes.TrimSpace(body))
	if f := c.Lookup.ResultsField; f != "" {
		for _, seg := range strings.Split(f, ".") {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(raw, &m); err != nil || m == nil {
				return nil, fmt.Errorf("lookup results: %s: not inside a JSON object", f)
			}
			var ok bool
			if raw, ok = m[seg]; !ok {
				return nil, fmt.Errorf("lookup results: %s is missing", f)
			}
		}
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil || items == nil {
			return nil, fmt.Errorf("lookup results: %s is not an array", f)
		}
		for i, it := range items {
			if !isObject(it) {
				return nil, fmt.Errorf("lookup results: %s[%d] is not an object", f, i)
			}
		}
		return items, nil
	}
	if !isObject(raw) {
		return nil, errors.New("lookup results: the body is not a JSON object")
	}
	return []json.RawMessage{raw}, nil
}

func isObject(b json.RawMessage) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}
