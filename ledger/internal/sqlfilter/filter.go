package sqlfilter

import (
	"settle/ledger"
)

// List is what a normalized f selects beyond its tenants, past cur (nil
// for the first page): the conditions of each walk of a listing, newest
// first. Only what f sets is a condition.
func List(f ledger.ListFilter, cur *ledger.Cursor) []Cond {
	var c []Cond
	if f.IntentRef != "" {
		c = append(c, Eq("intent_ref", Arg{Name: "intent_ref", V: f.IntentRef}))
	}
	if f.State != "" {
		c = append(c, StateIs(f.State))
	}
	if f.Target != "" {
		c = append(c, Eq("target", Arg{Name: "target", V: f.Target}))
	}
	if f.CreatedAfter != nil {
		c = append(c, Cmp("created_at", ">=", Arg{Name: "created_after", V: *f.CreatedAfter}))
	}
	if f.CreatedBefore != nil {
		c = append(c, Cmp("created_at", "<", Arg{Name: "created_before", V: *f.CreatedBefore}))
	}
	if cur != nil {
		c = append(c, keyset("<", cur))
	}
	return c
}

func keyset(op string, cur *ledger.Cursor) Cond {
	return Keyset(op, Arg{Name: "cursor_at", V: cur.CreatedAt}, Arg{Name: "cursor_id", V: cur.ID, UUID: true})
}

// Queue is, for each state a normalized f reads (f.States), the
// conditions of its walk beyond the tenants, past cur (nil for the first
// page), in the order f.Newest chooses (Dir).
func Queue(f ledger.QueueFilter, cur *ledger.Cursor) [][]Cond {
	var c []Cond
	if f.Target != "" {
		c = append(c, Eq("target", Arg{Name: "target", V: f.Target}))
	}
	if f.CreatedBefore != nil {
		c = append(c, Cmp("created_at", "<", Arg{Name: "created_before", V: *f.CreatedBefore}))
	}
	if f.Ref != "" {
		c = append(c, carries(f.Ref))
	}
	if f.Reason != "" {
		c = append(c, Contains("reason", Arg{Name: "reason", V: ledger.LikePattern(f.Reason)}))
	}
	if f.AwaitingOthersOf != "" {
		c = append(c, AwaitingOthersOf(Arg{Name: "subject", V: f.AwaitingOthersOf}))
	}
	if cur != nil {
		op := ">"
		if f.Newest {
			op = "<"
		}
		c = append(c, keyset(op, cur))
	}
	var walks [][]Cond
	for _, st := range f.States() {
		w := append([]Cond{StateIs(st)}, c...)
		if st == ledger.Unknown {
			w = append(w, Cmp("deadline", "<=", Arg{Name: "now", V: f.Now}))
		}
		walks = append(walks, w)
	}
	return walks
}

// Dir is the order of the queue's walks: ASC, or DESC for f.Newest.
func Dir(f ledger.QueueFilter) Block {
	if f.Newest {
		return Text("DESC")
	}
	return Text("ASC")
}

// carries is that an operation carries ref: its id or an id prefix, its
// intent reference (exactly or but for case) or its remote reference;
// each is an index of the tenant's (or the primary key).
func carries(ref string) Cond {
	r := Arg{Name: "ref", V: ref}
	alts := []Cond{Eq("intent_ref", r), LowerEq("intent_ref", r), Eq("remote_ref", r)}
	if id, ok := ledger.ParseID(ref); ok {
		alts = append(alts, Eq("operation_id", Arg{Name: "ref_id", V: id, UUID: true}))
	} else if first, last, ok := ledger.IDPrefixRange(ref); ok {
		alts = append(alts, Between("operation_id", Arg{Name: "ref_first", V: first, UUID: true},
			Arg{Name: "ref_last", V: last, UUID: true}))
	}
	return Or(alts...)
}

// Count is the blocks of a count by state of what a normalized f selects
// in tenants (or all): one copy of the block "part" per state, each with
// its "state" literal and its "where", and the "order" of the walks.
func Count(f ledger.ListFilter, tenants []string, all bool) Blocks {
	conds := List(f, nil)
	if !all {
		conds = append([]Cond{Tenants(tenants)}, conds...)
	}
	// Newest first where an index gives that order for nothing (one
	// tenant, or all): the count walks an index rather than the table from
	// its start, where rows matching a filter may be few. An order across
	// a set of tenants would sort all their rows.
	order := Text("ORDER BY created_at DESC")
	if len(tenants) > 1 {
		order = Text("")
	}
	parts := make([]Blocks, len(ledger.States))
	for i, st := range ledger.States {
		parts[i] = Blocks{"state": Text("'" + string(st) + "'"),
			"where": Where(append([]Cond{StateIs(st)}, conds...)...)}
	}
	return Blocks{"part": Repeat("UNION ALL", parts...), "order": order}
}

// Search is the blocks of one pass of a search for a normalized ref in
// tenants (or all, the tenants CTE's): one copy of the block "branch" per
// index look-up, each with its "where" and the "hint" of the index it
// reads. The exact pass looks up each reference ref may be; the near one
// (near true), when that finds nothing, what a person may have meant.
func Search(ref string, tenants []string, all, near bool) Blocks {
	scope := Raw("tenant_id IN (SELECT tenant FROM tenants WHERE tenant IS NOT NULL)")
	if !all {
		scope = Tenants(tenants)
	}
	r := Arg{Name: "ref", V: ref}
	type branch struct {
		index string
		conds []Cond
	}
	var bs []branch
	if !near {
		bs = []branch{{"operation_ledger_intent", []Cond{scope, Eq("intent_ref", r)}},
			{"operation_ledger_remote_ref", []Cond{scope, Eq("remote_ref", r)}},
			// Any object id settle has seen for the operation: the second
			// charge of a duplicate is the one a customer quotes.
			{"", []Cond{scope, ObjectIs(scope, r)}}}
		if id, ok := ledger.ParseID(ref); ok {
			idArg := Arg{Name: "id", V: id, UUID: true}
			key := []Cond{Eq("remote_key", idArg)}
			if !all {
				key = append(key, scope) // only the remote key is indexed without the tenant
			}
			bs = append(bs, branch{"", []Cond{scope, Eq("operation_id", idArg)}},
				branch{"operation_ledger_remote_key", key})
		}
	} else {
		// Migration 00031's folded intent index, the primary key's range.
		bs = []branch{{"operation_ledger_intent_folded", []Cond{scope, LowerEq("intent_ref", r)}}}
		if first, last, ok := ledger.IDPrefixRange(ref); ok {
			bs = append(bs, branch{"", []Cond{scope, Between("operation_id", Arg{Name: "first", V: first, UUID: true},
				Arg{Name: "last", V: last, UUID: true})}})
		}
	}
	copies := make([]Blocks, len(bs))
	for i, b := range bs {
		copies[i] = Blocks{"hint": Hint(b.index), "where": Where(b.conds...)}
	}
	// UNION, not UNION ALL: an operation found by two of its references is
	// one result.
	return Blocks{"branch": Repeat("UNION", copies...)}
}
