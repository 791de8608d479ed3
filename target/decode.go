package target

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"

	"settle/fileerr"
)

// decoder walks the YAML syntax tree by hand instead of unmarshalling into
// structs: only the tree keeps every line number, and walking it lets one
// pass report every problem rather than stopping at the first.
type decoder struct {
	file string
	errs []error
}

func (d *decoder) fail(n ast.Node, field, format string, args ...any) {
	d.errs = append(d.errs, &fileerr.Error{File: d.file, Line: lineOf(n), Field: field, Message: fmt.Sprintf(format, args...)})
}

// lineOf is defensive because some nodes (a document without a start marker)
// carry no token at all.
func lineOf(n ast.Node) int {
	if n == nil {
		return 0
	}
	if _, ok := n.(*ast.DocumentNode); ok {
		return 0
	}
	tk := n.GetToken()
	if tk == nil || tk.Position == nil {
		return 0
	}
	return tk.Position.Line
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// plain refuses anchors, aliases and tags. A contract states safety facts;
// a fact inherited through an alias or retyped by a tag is easy to misread
// in review, so every value is written out where it applies.
func (d *decoder) plain(n ast.Node, field string) ast.Node {
	switch v := n.(type) {
	case *ast.AnchorNode, *ast.AliasNode, *ast.TagNode:
		d.fail(n, field, "anchors, aliases and tags are not supported; write the value out")
		return nil
	case *ast.LiteralNode: // a block scalar (| or >): its text
		if v.Value == nil {
			d.fail(n, field, "is empty; give a value or remove the field")
			return nil
		}
		return v.Value
	}
	return n
}

func kind(n ast.Node) string {
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.NullNode:
		return "empty"
	}
	return "a single value"
}

// object is one YAML mapping whose keys were checked against the fields the
// schema allows. Unknown keys are errors: a misspelt "retension" must not
// silently turn a documented window into the default of zero.
type object struct {
	d      *decoder
	node   ast.Node
	path   string
	fields map[string]*ast.MappingValueNode
}

// object returns nil (after recording why) when n is not a mapping.
func (d *decoder) object(n ast.Node, path string, known ...string) *object {
	if n = d.plain(n, path); n == nil {
		return nil
	}
	var values []*ast.MappingValueNode
	switch m := n.(type) {
	case *ast.MappingNode:
		values = m.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{m}
	default:
		d.fail(n, path, "must be a mapping with the fields %s, not %s", strings.Join(known, ", "), kind(n))
		return nil
	}
	o := &object{d: d, node: n, path: path, fields: make(map[string]*ast.MappingValueNode, len(values))}
	for _, kv := range values {
		var name string
		switch k := kv.Key.(type) {
		case *ast.StringNode:
			name = k.Value
		case *ast.MergeKeyNode:
			d.fail(kv.Key, path, "merge keys (<<) are not supported; write the fields out")
			continue
		default:
			d.fail(kv.Key, path, "keys must be plain field names")
			continue
		}
		if !slices.Contains(known, name) {
			d.fail(kv.Key, join(path, name), "unknown field (allowed here: %s)", strings.Join(known, ", "))
			continue
		}
		o.fields[name] = kv
	}
	return o
}

func (o *object) has(key string) bool { _, ok := o.fields[key]; return ok }

// fail records a problem with key, on the line of its value when the key is
// present and on the line of the enclosing mapping when it is missing.
func (o *object) fail(key, format string, args ...any) {
	n := o.node
	if kv, ok := o.fields[key]; ok {
		n = kv.Value
		if n == nil {
			n = kv.Key
		}
	}
	o.d.fail(n, join(o.path, key), format, args...)
}

func (o *object) require(key string) bool {
	if !o.has(key) {
		o.fail(key, "required")
		return false
	}
	return true
}

// value returns key's value node, or nil when the key is absent or has no
// usable value. An explicit empty value is an error rather than "absent":
// "lookup:" with nothing under it usually means an indentation slip.
func (o *object) value(key string) ast.Node {
	kv, ok := o.fields[key]
	if !ok {
		return nil
	}
	n := o.d.plain(kv.Value, join(o.path, key))
	if n == nil {
		return nil
	}
	if _, isNull := n.(*ast.NullNode); isNull {
		o.fail(key, "is empty; give a value or remove the field")
		return nil
	}
	return n
}

// scalar returns the source text of a single value.
func (o *object) scalar(key string) (string, bool) {
	n := o.value(key)
	if n == nil {
		return "", false
	}
	switch v := n.(type) {
	case *ast.StringNode:
		return v.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return n.GetToken().Value, true
	}
	o.fail(key, "must be a single value, not %s", kind(n))
	return "", false
}

// str reads a text field. Numbers and booleans are refused so that YAML's
// typing never changes what an owner meant (quote them).
func (o *object) str(key string, required bool) string {
	if required && !o.require(key) {
		return ""
	}
	n := o.value(key)
	if n == nil {
		return ""
	}
	s, ok := n.(*ast.StringNode)
	if !ok {
		if _, isScalar := o.scalar(key); isScalar {
			o.fail(key, "must be text (quote it)")
		}
		return ""
	}
	if strings.TrimSpace(s.Value) == "" {
		o.fail(key, "is empty; give a value or remove the field")
		return ""
	}
	return s.Value
}

func (o *object) boolean(key string) bool {
	n := o.value(key)
	if n == nil {
		return false
	}
	b, ok := n.(*ast.BoolNode)
	if !ok {
		o.fail(key, "must be true or false")
		return false
	}
	return b.Value
}

// duration reads a Go duration ("24h", "90s"); def applies when the field
// is absent or wrong (the error is recorded).
func (o *object) duration(key string, def time.Duration) time.Duration {
	if v, ok := o.durationOK(key); ok {
		return v
	}
	return def
}

// durationOK reports ok only for a present, valid, non-negative duration.
func (o *object) durationOK(key string) (time.Duration, bool) {
	s, ok := o.scalar(key)
	if !ok {
		return 0, false
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		o.fail(key, "%q is not a duration (use e.g. 24h)", s)
		return 0, false
	}
	if v < 0 {
		o.fail(key, "must not be negative")
		return 0, false
	}
	return v, true
}

func (o *object) date(key string) time.Time {
	if !o.require(key) {
		return time.Time{}
	}
	s, ok := o.scalar(key)
	if !ok {
		return time.Time{}
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		o.fail(key, "%q is not a date (use YYYY-MM-DD)", s)
	}
	return t
}

// oneOf reads an enumerated text field; def applies when absent.
func (o *object) oneOf(key, def string, allowed ...string) string {
	s, ok := o.scalar(key)
	if !ok {
		return def
	}
	if !slices.Contains(allowed, s) {
		o.fail(key, "%q is not one of %s", s, strings.Join(allowed, ", "))
		return def
	}
	return s
}

func (o *object) child(key string, known ...string) *object {
	n := o.value(key)
	if n == nil {
		return nil
	}
	return o.d.object(n, join(o.path, key), known...)
}

func (o *object) list(key string) []ast.Node {
	n := o.value(key)
	if n == nil {
		return nil
	}
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		o.fail(key, "must be a list, not %s", kind(n))
		return nil
	}
	return seq.Values
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }
