// Package sqlfilter assembles the few statements the ledger cannot write
// whole — a listing's, the queue's, a count's or a search's conditions —
// once for both dialects, and splices them into a statement sqlc compiled
// (river's sqlctemplate, in miniature).
//
// A statement in a dbsqlc .sql file marks each part that varies with a
// block, whose default text is what sqlc parses and types:
//
//	SELECT … FROM operation_ledger /* TEMPLATE_BEGIN: where */ WHERE true /* TEMPLATE_END */
//
// Expand replaces each block with a Block: trusted text, a WHERE built
// from Conds, or copies of the block's own text (a union of index walks).
// The conditions are the builder's (filter.go); how they are spelled —
// placeholders, casts, the few forms the two planners need differently —
// is the Dialect's. sqlc still generates the row type and its scanning.
package sqlfilter

import (
	"fmt"
	"strings"
)

const (
	beginMark = "/* TEMPLATE_BEGIN: "
	endMark   = "/* TEMPLATE_END */"
)

// Block is what replaces one template block of a statement.
type Block struct {
	text   string
	where  []Cond
	isWh   bool
	sep    string
	copies []Blocks
	isRep  bool
	hint   bool // text is an index's name
}

// Blocks names the blocks of a statement (or of one copy of a Repeat).
type Blocks map[string]Block

// Text is trusted SQL (a literal, ASC or DESC, an index hint): never the
// caller's text.
func Text(s string) Block { return Block{text: s} }

// Hint is the dialect's hint that a statement read index (Dialect.Hint);
// nothing for "".
func Hint(index string) Block { return Block{text: index, hint: true} }

// Where is "WHERE c1 AND c2 …", or nothing when conds is empty: the
// statement holds only the conditions the filter sets, which is what lets
// SQLite's planner use an index for them.
func Where(conds ...Cond) Block { return Block{where: conds, isWh: true} }

// Repeat is one copy of the block's text per element of copies, each
// expanded with its own blocks (falling back to the statement's), joined
// by sep ("UNION ALL", say).
func Repeat(sep string, copies ...Blocks) Block { return Block{sep: sep, copies: copies, isRep: true} }

// Expand returns sql with its template blocks replaced from blocks, and
// the arguments: args (sqlc's, numbered first) followed by those of the
// conditions, numbered in the dialect's placeholders. A block sql marks
// that blocks does not name is an error, as is a Repeat of no copies.
func Expand(d *Dialect, sql string, args []any, blocks Blocks) (string, []any, error) {
	b := &binder{d: d, args: args, at: map[string]string{}}
	out, err := b.expand(sql, []Blocks{blocks})
	if err != nil {
		return "", nil, err
	}
	return out, b.args, nil
}

// expand replaces the outermost blocks of sql, looking their names up in
// scopes from the innermost.
func (b *binder) expand(sql string, scopes []Blocks) (string, error) {
	var out strings.Builder
	for {
		i := strings.Index(sql, beginMark)
		if i < 0 {
			out.WriteString(sql)
			return out.String(), nil
		}
		out.WriteString(sql[:i])
		rest := sql[i+len(beginMark):]
		j := strings.Index(rest, " */")
		if j < 0 {
			return "", fmt.Errorf("sqlfilter: unterminated template marker")
		}
		name, rest := rest[:j], rest[j+len(" */"):]
		body, after, err := matchEnd(rest)
		if err != nil {
			return "", fmt.Errorf("sqlfilter: block %s: %w", name, err)
		}
		blk, ok := lookup(scopes, name)
		if !ok {
			return "", fmt.Errorf("sqlfilter: no block %s given", name)
		}
		s, err := b.render(blk, body, scopes)
		if err != nil {
			return "", fmt.Errorf("sqlfilter: block %s: %w", name, err)
		}
		out.WriteString(s)
		sql = after
	}
}

func lookup(scopes []Blocks, name string) (Block, bool) {
	for i := len(scopes) - 1; i >= 0; i-- {
		if blk, ok := scopes[i][name]; ok {
			return blk, true
		}
	}
	return Block{}, false
}

// matchEnd splits s at the TEMPLATE_END that closes a block opened just
// before it, past any blocks nested in it.
func matchEnd(s string) (body, after string, err error) {
	depth, at := 0, 0
	for {
		e := strings.Index(s[at:], endMark)
		if e < 0 {
			return "", "", fmt.Errorf("no %s", endMark)
		}
		if bg := strings.Index(s[at:], beginMark); bg >= 0 && bg < e {
			depth++
			at += bg + len(beginMark)
			continue
		}
		if depth == 0 {
			return s[:at+e], s[at+e+len(endMark):], nil
		}
		depth--
		at += e + len(endMark)
	}
}

func (b *binder) render(blk Block, body string, scopes []Blocks) (string, error) {
	switch {
	case blk.hint:
		if blk.text == "" || b.d.Hint == nil {
			return "", nil
		}
		return b.d.Hint(blk.text), nil
	case blk.isWh:
		if len(blk.where) == 0 {
			return "", nil
		}
		return "WHERE " + b.and(blk.where), nil
	case blk.isRep:
		if len(blk.copies) == 0 {
			return "", fmt.Errorf("a repeat of nothing")
		}
		parts := make([]string, len(blk.copies))
		for i, c := range blk.copies {
			s, err := b.expand(body, append(scopes[:len(scopes):len(scopes)], c))
			if err != nil {
				return "", err
			}
			parts[i] = strings.TrimSpace(s)
		}
		return strings.Join(parts, "\n\t"+blk.sep+" "), nil
	}
	return blk.text, nil
}
