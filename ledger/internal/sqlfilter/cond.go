package sqlfilter

import (
	"strings"

	"settle/ledger"
)

// Arg is a value a condition compares with. Args of one Name are one
// placeholder however often a statement reads them.
type Arg struct {
	Name string
	V    any
	UUID bool // an operation id or remote key, as text
}

// Cond is one condition on a row of operation_ledger. Its column names
// are the builder's, never the caller's.
type Cond struct {
	kind    kind
	col, op string
	args    []Arg
	state   ledger.State
	tenants []string
	alts    []Cond
	scope   *Cond
}

type kind int

const (
	kRaw      kind = iota // col is the condition's whole text
	kCmp                  // col op arg
	kLowerEq              // lower(col) = lower(arg)
	kBetween              // col BETWEEN arg AND arg
	kKeyset               // (created_at, operation_id) op (arg, arg)
	kState                // state = literal
	kTenants              // tenant_id in the set
	kOr                   // (alt OR alt …)
	kContains             // col contains arg (a LIKE pattern), case aside
	kAwaiting             // an open proposal made by someone but arg
	kObject               // an object id settle saw for the operation, within scope
)

// Raw is trusted SQL: a correlation (tenant_id = t.tenant) or a CTE's
// tenants.
func Raw(sql string) Cond { return Cond{kind: kRaw, col: sql} }

// Cmp is col op a, op one of = < <= >= >.
func Cmp(col, op string, a Arg) Cond { return Cond{kind: kCmp, col: col, op: op, args: []Arg{a}} }

// Eq is col = a.
func Eq(col string, a Arg) Cond { return Cmp(col, "=", a) }

// LowerEq is lower(col) = lower(a): the folded intent index's form.
func LowerEq(col string, a Arg) Cond { return Cond{kind: kLowerEq, col: col, args: []Arg{a}} }

// Between is col BETWEEN lo AND hi.
func Between(col string, lo, hi Arg) Cond { return Cond{kind: kBetween, col: col, args: []Arg{lo, hi}} }

// Keyset is (created_at, operation_id) op (at, id): past a cursor.
func Keyset(op string, at, id Arg) Cond { return Cond{kind: kKeyset, op: op, args: []Arg{at, id}} }

// StateIs is the condition on a valid state, a literal from ledger.States
// (the dialect writes it so that its planner can use the partial
// indexes); a state not among them panics, having escaped validation.
func StateIs(s ledger.State) Cond {
	if !s.Valid() {
		panic("sqlfilter: StateIs: state " + string(s) + " was not validated")
	}
	return Cond{kind: kState, state: s}
}

// Tenants is tenant_id in tenants (at least one).
func Tenants(tenants []string) Cond { return Cond{kind: kTenants, tenants: tenants} }

// Or is any of alts.
func Or(alts ...Cond) Cond { return Cond{kind: kOr, alts: alts} }

// Contains is col containing the text a LIKE pattern p holds, case aside
// (ASCII letters on SQLite), with backslash as the escape.
func Contains(col string, p Arg) Cond { return Cond{kind: kContains, col: col, args: []Arg{p}} }

// AwaitingOthersOf is that the operation has an open proposal made by
// someone other than subject.
func AwaitingOthersOf(subject Arg) Cond { return Cond{kind: kAwaiting, args: []Arg{subject}} }

// ObjectIs is that settle saw object id a for the operation (migration
// 00033), within the tenants scope names.
func ObjectIs(scope Cond, a Arg) Cond { return Cond{kind: kObject, args: []Arg{a}, scope: &scope} }

// Dialect is how a database spells the conditions. It holds what the two
// planners genuinely need written differently; everything else is the
// same text.
type Dialect struct {
	// Placeholder is the n-th parameter, from 1: $n or ?n.
	Placeholder func(n int) string
	// UUIDCast follows the placeholder of an id ("::uuid"; "" where ids are
	// text).
	UUIDCast string
	// Value is a Go value as the database binds it (SQLite's times are
	// Unix microseconds); nil keeps it.
	Value func(v any) any
	// State is the condition state = s.
	State func(s ledger.State) string
	// TenantArray binds a set of tenants as one text[] (= ANY); otherwise
	// it is an IN list of one placeholder each.
	TenantArray bool
	// ILike is the case-insensitive LIKE.
	ILike string
	// Awaiting is AwaitingOthersOf with the subject's placeholder.
	Awaiting func(subject string) string
	// Hint, when not nil, tells the planner to read an index (SQLite's
	// INDEXED BY, where without statistics it would take the primary key).
	Hint func(index string) string
}

// binder numbers the arguments of one statement.
type binder struct {
	d    *Dialect
	args []any
	at   map[string]string
}

func (b *binder) ph(a Arg) string {
	if p, ok := b.at[a.Name]; ok && a.Name != "" {
		return p
	}
	v := a.V
	if b.d.Value != nil {
		v = b.d.Value(v)
	}
	b.args = append(b.args, v)
	p := b.d.Placeholder(len(b.args))
	if a.UUID {
		p += b.d.UUIDCast
	}
	if a.Name != "" {
		b.at[a.Name] = p
	}
	return p
}

func (b *binder) and(conds []Cond) string {
	parts := make([]string, len(conds))
	for i, c := range conds {
		parts[i] = b.cond(c)
	}
	return strings.Join(parts, " AND ")
}

func (b *binder) cond(c Cond) string {
	switch c.kind {
	case kCmp:
		return c.col + " " + c.op + " " + b.ph(c.args[0])
	case kLowerEq:
		return "lower(" + c.col + ") = lower(" + b.ph(c.args[0]) + ")"
	case kBetween:
		return c.col + " BETWEEN " + b.ph(c.args[0]) + " AND " + b.ph(c.args[1])
	case kKeyset:
		return "(created_at, operation_id) " + c.op + " (" + b.ph(c.args[0]) + ", " + b.ph(c.args[1]) + ")"
	case kState:
		return b.d.State(c.state)
	case kTenants:
		return b.tenants(c.tenants)
	case kOr:
		alts := make([]string, len(c.alts))
		for i, a := range c.alts {
			alts[i] = b.cond(a)
		}
		return "(" + strings.Join(alts, " OR ") + ")"
	case kContains:
		return c.col + " " + b.d.ILike + " " + b.ph(c.args[0]) + ` ESCAPE '\'`
	case kAwaiting:
		return b.d.Awaiting(b.ph(c.args[0]))
	case kObject:
		return "(tenant_id, operation_id) IN (SELECT tenant_id, operation_id FROM operation_objects WHERE " +
			b.cond(*c.scope) + " AND object_id = " + b.ph(c.args[0]) + ")"
	}
	return c.col
}

func (b *binder) tenants(ts []string) string {
	switch {
	case len(ts) == 1:
		return "tenant_id = " + b.ph(Arg{Name: "tenant:" + ts[0], V: ts[0]})
	case b.d.TenantArray:
		return "tenant_id = ANY(" + b.ph(Arg{Name: "tenants:" + strings.Join(ts, ","), V: ts}) + "::text[])"
	}
	ph := make([]string, len(ts))
	for i, t := range ts {
		ph[i] = b.ph(Arg{Name: "tenant:" + t, V: t})
	}
	return "tenant_id IN (" + strings.Join(ph, ", ") + ")"
}
