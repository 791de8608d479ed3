package sim

import (
	"fmt"
	"strconv"
	"strings"
)

// A search query in Stripe's search query language
// (https://docs.stripe.com/search#search-query-language), the part of it
// the simulator understands:
//
//	query  = clause { separator clause }
//	sep    = spaces | spaces "AND" spaces | spaces "OR" spaces   (keywords in any case)
//	clause = [ "-" ] field ":" value
//	field  = "metadata[" string "]" | "amount" | "currency" | "customer" | "status"
//	value  = string | digits                                      (digits only for amount)
//	string = "'" … "'" | '"' … '"'                                (\ escapes the next character)
//
// Spaces join clauses with AND; AND and OR may not be mixed in one query;
// a query has at most ten clauses; "-" negates a clause. Every clause is an
// exact match (currency ignoring case). Stripe's other operators (~, >, <)
// and fields are refused with 400, so that a client relying on them learns
// it at once rather than from an empty result.
type searchQuery struct {
	clauses []searchClause
	or      bool // clauses joined with OR; otherwise AND
}

type searchClause struct {
	field  string // metadata, amount, currency, customer or status
	key    string // metadata key
	value  string
	negate bool
}

const maxSearchClauses = 10

// parseSearch parses a query. Its errors name positions and field names but
// never repeat a value, which may be a client's reference.
func parseSearch(query string) (searchQuery, error) {
	p := &queryParser{s: query}
	var q searchQuery
	joiner := "" // "AND" or "OR" once one was used, explicitly or by a space
	if p.skipSpace(); p.eof() {
		return q, fmt.Errorf("the query is empty")
	}
	for {
		c, err := p.clause()
		if err != nil {
			return q, err
		}
		if q.clauses = append(q.clauses, c); len(q.clauses) > maxSearchClauses {
			return q, fmt.Errorf("a query may have at most %d clauses", maxSearchClauses)
		}
		spaces := p.skipSpace()
		if p.eof() {
			break
		}
		if spaces == 0 {
			return q, fmt.Errorf("expected a space, AND or OR at position %d", p.i)
		}
		next := "AND" // a space alone joins with AND
		if word := p.word(); strings.EqualFold(word, "AND") || strings.EqualFold(word, "OR") {
			next = strings.ToUpper(word)
			p.i += len(word)
			if p.skipSpace() == 0 || p.eof() {
				return q, fmt.Errorf("%s at position %d must be followed by a space and a clause", next, p.i-len(word))
			}
		}
		if joiner != "" && joiner != next {
			return q, fmt.Errorf("AND and OR cannot be combined in one query")
		}
		joiner = next
	}
	q.or = joiner == "OR"
	return q, nil
}

type queryParser struct {
	s string
	i int
}

func (p *queryParser) eof() bool { return p.i >= len(p.s) }

func (p *queryParser) skipSpace() int {
	start := p.i
	for !p.eof() && p.s[p.i] == ' ' {
		p.i++
	}
	return p.i - start
}

// word returns the text up to the next space, without consuming it.
func (p *queryParser) word() string {
	end := strings.IndexByte(p.s[p.i:], ' ')
	if end < 0 {
		return p.s[p.i:]
	}
	return p.s[p.i : p.i+end]
}

func (p *queryParser) clause() (searchClause, error) {
	var c searchClause
	if !p.eof() && p.s[p.i] == '-' {
		c.negate = true
		p.i++
	}
	start := p.i
	for !p.eof() && (p.s[p.i] >= 'a' && p.s[p.i] <= 'z' || p.s[p.i] == '_') {
		p.i++
	}
	c.field = p.s[start:p.i]
	switch c.field {
	case "":
		return c, fmt.Errorf("expected a field name at position %d", start)
	case "metadata":
		if p.eof() || p.s[p.i] != '[' {
			return c, fmt.Errorf("expected metadata['key'] at position %d", start)
		}
		p.i++
		key, err := p.quoted()
		if err != nil {
			return c, err
		}
		if p.eof() || p.s[p.i] != ']' {
			return c, fmt.Errorf("expected ] at position %d", p.i)
		}
		p.i++
		c.key = key
	case "amount", "currency", "customer", "status":
	default:
		return c, fmt.Errorf("unknown field %q at position %d: this simulator searches metadata['key'], amount, currency, customer and status", c.field, start)
	}
	switch {
	case p.eof():
		return c, fmt.Errorf("expected : after the field at position %d", p.i)
	case strings.ContainsRune("~<>=", rune(p.s[p.i])):
		return c, fmt.Errorf("operator %q at position %d is not supported by this simulator; use : (exact match)", p.s[p.i], p.i)
	case p.s[p.i] != ':':
		return c, fmt.Errorf("expected : after the field at position %d", p.i)
	}
	p.i++
	if !p.eof() && (p.s[p.i] == '\'' || p.s[p.i] == '"') {
		v, err := p.quoted()
		if err != nil {
			return c, err
		}
		c.value = v
	} else {
		start := p.i
		for !p.eof() && p.s[p.i] != ' ' {
			p.i++
		}
		c.value = p.s[start:p.i]
		if c.field != "amount" {
			return c, fmt.Errorf("the value at position %d must be quoted ('…' or \"…\")", start)
		}
	}
	if c.field == "amount" && !isDigits(c.value) {
		return c, fmt.Errorf("the amount at position %d must be a whole number", p.i)
	}
	return c, nil
}

// quoted reads a string in single or double quotes; a backslash takes the
// next character literally.
func (p *queryParser) quoted() (string, error) {
	start := p.i
	if p.eof() || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", fmt.Errorf("expected a quoted string at position %d", start)
	}
	quote := p.s[p.i]
	p.i++
	var b strings.Builder
	for !p.eof() {
		ch := p.s[p.i]
		p.i++
		switch ch {
		case quote:
			return b.String(), nil
		case '\\':
			if p.eof() {
				return "", fmt.Errorf("the string at position %d ends in a lone backslash", start)
			}
			b.WriteByte(p.s[p.i])
			p.i++
		default:
			b.WriteByte(ch)
		}
	}
	return "", fmt.Errorf("the string at position %d is not closed", start)
}

// matches reports whether a FlavorStripe record satisfies q.
func (q searchQuery) matches(rec *record) bool {
	for _, c := range q.clauses {
		if c.holds(rec) == q.or {
			return q.or
		}
	}
	return !q.or
}

func (c searchClause) holds(rec *record) bool {
	var got string
	var ok bool
	switch c.field {
	case "metadata":
		got, ok = rec.intent.metadata[c.key]
	case "amount":
		n, err := strconv.ParseInt(c.value, 10, 64)
		return (err == nil && n == rec.obj.Amount) != c.negate
	case "currency":
		return strings.EqualFold(rec.obj.Currency, c.value) != c.negate
	case "customer":
		got, ok = rec.intent.params["customer"].(string)
	case "status":
		got, ok = rec.obj.Status, true
	}
	return (ok && got == c.value) != c.negate
}
