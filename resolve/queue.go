package resolve

import (
	"cmp"
	"context"
	"encoding/base64"
	"slices"
	"strconv"
	"strings"

	"settle/ledger"
)

// The escalation queue: what waits for a person's decision. One
// definition, used by the console, the CLI and the digest
// (ledger.AwaitsPerson says which operation waits).

// Show selects the queue's kinds.
type Show string

// The kinds the queue shows.
const (
	ShowAll       Show = ""          // escalated and overdue
	ShowEscalated Show = "escalated" // ESCALATED only
	ShowOverdue   Show = "overdue"   // UNKNOWN past its deadline only
)

// Order is the queue's order.
type Order string

// The queue's orders.
const (
	OldestFirst   Order = ""         // by creation, oldest first
	DeadlineFirst Order = "deadline" // earliest deadline first, none last
	NewestFirst   Order = "newest"   // by creation, newest first
)

// QueueFilter selects and orders the queue. Tenant and Target narrow it;
// Cursor continues after the last item of the previous page (keyset: an
// item that enters or leaves the queue moves no other across pages).
type QueueFilter struct {
	Tenant, Target string
	Show           Show
	Order          Order
	Cursor         string
	Limit          int // 0: DefaultQueueLimit; at most ledger.MaxListLimit
}

// DefaultQueueLimit is a queue page's size unless asked otherwise.
const DefaultQueueLimit = 100

// QueueScan bounds the operations read per state for one queue: the
// queue is the work of a few people, not an archive. Past it the queue
// says so (Queue.Partial) and asks to narrow by tenant or target.
const QueueScan = 10 * ledger.MaxListLimit

// Queue is one page of the escalation queue.
type Queue struct {
	Items []Item
	Next  string // the cursor of the next page; "" on the last
	// Partial: more than QueueScan operations of one state matched, so the
	// queue holds the newest QueueScan of each.
	Partial bool
}

// Item is one operation that waits, and its open proposal (or nil).
type Item struct {
	Operation ledger.Operation
	Overdue   bool // UNKNOWN past its deadline: the reconciler escalates it next round
	Open      *ledger.Resolution
}

// Queue returns the page of the escalation queue f selects for a person
// of sc at the service's now: ESCALATED operations, and UNKNOWN ones past
// their deadline, of the targets sc resolves. EInvalid for a bad filter
// or cursor, ENotFound for a tenant outside sc.
func (s *Service) Queue(ctx context.Context, sc Scope, f QueueFilter) (Queue, error) {
	if err := f.validate(); err != nil {
		return Queue{}, err
	}
	now := s.now()
	all, tenants := sc.ResolveTenants()
	lf := ledger.ListFilter{Tenants: tenants, AllTenants: all, Target: f.Target, Limit: ledger.MaxListLimit}
	if f.Tenant != "" {
		if !inTenants(sc, f.Tenant) {
			return Queue{}, ledger.Errorf(ledger.ENotFound, "you resolve no target of tenant %q", ledger.PlainText(f.Tenant, 63))
		}
		lf.Tenant, lf.Tenants, lf.AllTenants = f.Tenant, nil, false
	}
	var q Queue
	var items []Item
	for _, st := range []ledger.State{ledger.Escalated, ledger.Unknown} {
		if (st == ledger.Escalated && f.Show == ShowOverdue) || (st == ledger.Unknown && f.Show == ShowEscalated) {
			continue
		}
		lf.State, lf.Cursor = st, ""
		for read := 0; ; {
			page, err := s.store.List(ctx, lf)
			if err != nil {
				return Queue{}, err
			}
			for _, op := range page.Operations {
				if ledger.AwaitsPerson(op, now) && sc.CanResolve(op.Tenant, op.Target) {
					items = append(items, Item{Operation: op, Overdue: op.State == ledger.Unknown})
				}
			}
			read += len(page.Operations)
			if page.Next == "" {
				break
			}
			if read >= QueueScan {
				q.Partial = true
				break
			}
			lf.Cursor = page.Next
		}
	}
	slices.SortFunc(items, func(a, b Item) int {
		return compareKeys(f.Order, keyOf(f.Order, a.Operation), keyOf(f.Order, b.Operation))
	})
	if f.Cursor != "" {
		after, err := decodeCursor(f.Cursor)
		if err != nil {
			return Queue{}, err
		}
		i, _ := slices.BinarySearchFunc(items, after, func(it Item, k cursorKey) int {
			return compareKeys(f.Order, keyOf(f.Order, it.Operation), k)
		})
		for i < len(items) && compareKeys(f.Order, keyOf(f.Order, items[i].Operation), after) <= 0 {
			i++
		}
		items = items[i:]
	}
	limit := cmp.Or(f.Limit, DefaultQueueLimit)
	if len(items) > limit {
		items = items[:limit]
		q.Next = encodeCursor(keyOf(f.Order, items[limit-1].Operation))
	}
	open, err := s.openByOperation(ctx, sc)
	if err != nil {
		return Queue{}, err
	}
	for i := range items {
		if r, ok := open[items[i].Operation.Tenant+"/"+items[i].Operation.ID]; ok {
			items[i].Open = &r
		}
	}
	q.Items = items
	return q, nil
}

func (f QueueFilter) validate() error {
	switch {
	case f.Show != ShowAll && f.Show != ShowEscalated && f.Show != ShowOverdue:
		return ledger.Errorf(ledger.EInvalid, "show is escalated, overdue, or empty for both")
	case f.Order != OldestFirst && f.Order != DeadlineFirst && f.Order != NewestFirst:
		return ledger.Errorf(ledger.EInvalid, "order is deadline, newest, or empty for oldest first")
	case f.Limit < 0 || f.Limit > ledger.MaxListLimit:
		return ledger.Errorf(ledger.EInvalid, "limit is between 1 and %d", ledger.MaxListLimit)
	}
	if f.Tenant != "" {
		if err := ledger.CheckText("tenant", f.Tenant, 63); err != nil {
			return err
		}
	}
	if f.Target != "" {
		return ledger.CheckText("target", f.Target, 100)
	}
	return nil
}

// openByOperation returns sc's open proposals by "tenant/operation".
func (s *Service) openByOperation(ctx context.Context, sc Scope) (map[string]ledger.Resolution, error) {
	all, tenants := sc.ResolveTenants()
	list, err := s.store.OpenResolutions(ctx, tenants, all)
	if err != nil {
		return nil, err
	}
	out := make(map[string]ledger.Resolution, len(list))
	for _, r := range list {
		out[r.Tenant+"/"+r.OperationID] = r
	}
	return out, nil
}

// cursorKey is an item's place in the order: its sort time, then tenant
// and id, so that no two items share one.
type cursorKey struct {
	At     int64 // creation or deadline, microseconds; MaxInt64 for no deadline
	Tenant string
	ID     string
}

// keyOf is op's key in order o.
func keyOf(o Order, op ledger.Operation) cursorKey {
	k := cursorKey{At: op.CreatedAt.UnixMicro(), Tenant: op.Tenant, ID: op.ID}
	if o == DeadlineFirst {
		k.At = 1<<63 - 1 // no deadline: last
		if op.Deadline != nil {
			k.At = op.Deadline.UnixMicro()
		}
	}
	return k
}

func compareKeys(o Order, a, b cursorKey) int {
	c := cmp.Compare(a.At, b.At)
	if o == NewestFirst {
		c = -c
	}
	return cmp.Or(c, strings.Compare(a.Tenant, b.Tenant), strings.Compare(a.ID, b.ID))
}

func encodeCursor(k cursorKey) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(k.At, 10) + "\x00" + k.Tenant + "\x00" + k.ID))
}

func decodeCursor(s string) (cursorKey, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	parts := strings.Split(string(b), "\x00")
	if err != nil || len(parts) != 3 {
		return cursorKey{}, ledger.Errorf(ledger.EInvalid, "the queue's cursor is not one settle gave")
	}
	at, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil {
		return cursorKey{}, ledger.Errorf(ledger.EInvalid, "the queue's cursor is not one settle gave")
	}
	return cursorKey{At: at, Tenant: parts[1], ID: parts[2]}, nil
}
