package target

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"settle/fileerr"
)

// Set is every target contract of one deployment, validated as a whole.
type Set struct {
	byName map[string]*Contract
	names  []string // sorted
}

// Get returns the contract of the named target.
func (s *Set) Get(name string) (*Contract, bool) {
	c, ok := s.byName[name]
	return c, ok
}

// Names returns the target names in sorted order; the slice is the caller's.
func (s *Set) Names() []string { return slices.Clone(s.names) }

// Load reads and validates the contracts file at path (settle's
// --contracts flag or SETTLE_CONTRACTS). Errors are as from Parse, with
// path as the file name.
func Load(path string) (*Set, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load contracts: %w", err)
	}
	return Parse(path, data)
}

// Parse validates a contracts file; name is used in error messages. On any
// problem it returns no Set and an error joining one *fileerr.Error per
// problem found (errors.Join), each reading "file:line: field: message".
func Parse(name string, data []byte) (*Set, error) {
	d := &decoder{file: name}
	body := d.document(data)
	if body == nil {
		return nil, errors.Join(d.errs...)
	}
	var items []ast.Node
	if top := d.object(body, "", "targets"); top != nil && top.require("targets") {
		items = top.list("targets")
		if seq, ok := top.fields["targets"].Value.(*ast.SequenceNode); ok && len(seq.Values) == 0 {
			top.fail("targets", "needs at least one target")
		}
	}
	s := &Set{byName: make(map[string]*Contract, len(items))}
	seen := make(map[string]int) // lower-case name → index
	lines := make([]int, len(items))
	for i, item := range items {
		c, o := d.target(item, index("targets", i))
		if c == nil || c.Name == "" {
			continue
		}
		lines[i] = lineOf(o.fields["name"].Value)
		// Names are compared without case: they appear in URLs, metrics and
		// conversations, where "Payments" and "payments" are one target.
		key := strings.ToLower(c.Name)
		if j, dup := seen[key]; dup {
			o.fail("name", "duplicate name; targets[%d] on line %d already uses it", j, lines[j])
			continue
		}
		seen[key] = i
		s.byName[c.Name] = c
		s.names = append(s.names, c.Name)
	}
	if len(d.errs) > 0 {
		return nil, errors.Join(d.errs...)
	}
	slices.Sort(s.names)
	return s, nil
}

// document parses data as exactly one YAML document and returns its body.
func (d *decoder) document(data []byte) (body ast.Node) {
	defer func() {
		// The YAML parser is third-party code fed an operator's file; a
		// crash inside it must become an error at start-up, not a panic.
		if r := recover(); r != nil {
			body = nil
			d.errs = append(d.errs, &fileerr.Error{File: d.file, Message: "not valid YAML (the parser failed)"})
		}
	}()
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		fe := &fileerr.Error{File: d.file, Message: "not valid YAML"}
		var ye yaml.Error
		if errors.As(err, &ye) {
			fe.Message += ": " + ye.GetMessage()
			if tk := ye.GetToken(); tk != nil && tk.Position != nil {
				fe.Line = tk.Position.Line
			}
		}
		d.errs = append(d.errs, fe)
		return nil
	}
	var docs []ast.Node
	for _, doc := range f.Docs {
		if doc != nil && doc.Body != nil {
			docs = append(docs, doc.Body)
		}
	}
	switch len(docs) {
	case 0:
		d.errs = append(d.errs, &fileerr.Error{File: d.file, Message: "the file is empty; it needs a targets list"})
		return nil
	case 1:
		return docs[0]
	}
	d.fail(docs[1], "", "holds more than one YAML document; put every target in one targets list")
	return nil
}
