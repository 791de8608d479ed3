package resolve

import (
	"cmp"
	"context"
	"time"

	"settle/ledger"
)

// The escalation queue: what waits for a person's decision. One
// definition, used by the console, the CLI and the digest
// (ledger.AwaitsPerson says which operation waits); the store reads its
// pages by keyset (ledger.QueueLister), so a page costs the same at any
// depth of a queue of any length.

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

// The queue's orders: by creation, then operation id.
const (
	OldestFirst Order = ""       // oldest first
	NewestFirst Order = "newest" // newest first
)

// QueueFilter selects and orders the queue. Tenant and Target narrow it;
// Cursor continues after the last item of the previous page (keyset: an
// item that enters or leaves the queue moves no other across pages).
type QueueFilter struct {
	Tenant, Target string
	Show           Show
	Order          Order
	// Ref narrows to the operations carrying a reference: id or id prefix,
	// intent reference (any case), remote reference.
	Ref string
	// OlderThan keeps operations created more than this long ago.
	OlderThan time.Duration
	// Reason keeps operations whose recorded reason contains it.
	Reason string
	// AwaitingMe keeps operations with an open proposal that the
	// context's actor did not make: what they may approve.
	AwaitingMe bool
	Cursor     string
	Limit      int // 0: DefaultQueueLimit; at most ledger.MaxListLimit
}

// DefaultQueueLimit is a queue page's size unless asked otherwise.
const DefaultQueueLimit = 100

// QueueScan bounds the operations read for one page when the scope
// leaves out some targets of a tenant (they are read and skipped): past
// it the page is shorter than asked and Next continues after what was
// read.
const QueueScan = 10 * ledger.MaxListLimit

// Queue is one page of the escalation queue.
type Queue struct {
	Items []Item
	Next  string // the cursor of the next page; "" on the last
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
	lf, err := s.queueFilter(ctx, sc, f)
	if err != nil {
		return Queue{}, err
	}
	q, err := s.queuePage(ctx, sc, lf)
	if err != nil {
		return Queue{}, err
	}
	open, err := s.openByOperation(ctx, sc)
	if err != nil {
		return Queue{}, err
	}
	for i := range q.Items {
		if r, ok := open[q.Items[i].Operation.Tenant+"/"+q.Items[i].Operation.ID]; ok {
			q.Items[i].Open = &r
		}
	}
	return q, nil
}

// AwaitingCount is how many operations of the queue await the context's
// actor's approval (QueueFilter.AwaitingMe: someone else's open proposal
// on a target sc resolves), counted up to limit: more reports that there
// are more than limit. It reads the queue's own first page, so that the
// number a person sees beside "Escalations" is the length of the list
// "Awaiting my approval" shows them. EInvalid without a signed-in actor.
func (s *Service) AwaitingCount(ctx context.Context, sc Scope, limit int) (n int, more bool, err error) {
	lf, err := s.queueFilter(ctx, sc, QueueFilter{AwaitingMe: true, Limit: limit})
	if err != nil {
		return 0, false, err
	}
	q, err := s.queuePage(ctx, sc, lf)
	if err != nil {
		return 0, false, err
	}
	return len(q.Items), q.Next != "", nil
}

// queuePage reads the page lf selects of the operations sc resolves,
// without their proposals.
func (s *Service) queuePage(ctx context.Context, sc Scope, lf ledger.QueueFilter) (Queue, error) {
	limit := lf.Limit
	lf.Limit = min(limit+1, ledger.MaxListLimit)
	var q Queue
	var items []Item
	more := false
	for read := 0; !more; {
		page, err := s.store.ListQueue(ctx, lf)
		if err != nil {
			return Queue{}, err
		}
		for _, op := range page.Operations {
			if !sc.CanResolve(op.Tenant, op.Target) {
				continue
			}
			if len(items) == limit {
				more = true // the next page starts after the last one shown
				break
			}
			items = append(items, Item{Operation: op, Overdue: op.State == ledger.Unknown})
		}
		read += len(page.Operations)
		if more || page.Next == "" {
			break
		}
		if read >= QueueScan {
			q.Next = page.Next // what was read and skipped is not sc's
			break
		}
		lf.Cursor = page.Next
	}
	if more {
		q.Next = cursorAfter(items[limit-1].Operation)
	}
	q.Items = items
	return q, nil
}

// cursorAfter is the cursor of a page whose last operation is op.
func cursorAfter(op ledger.Operation) string {
	return ledger.NextPage([]ledger.Operation{op, op}, 1).Next
}

// queueFilter is the store's filter for f within sc, at the service's now.
func (s *Service) queueFilter(ctx context.Context, sc Scope, f QueueFilter) (ledger.QueueFilter, error) {
	if err := f.validate(); err != nil {
		return ledger.QueueFilter{}, err
	}
	now := s.now()
	all, tenants := sc.ResolveTenants()
	lf := ledger.QueueFilter{Tenants: tenants, AllTenants: all, Target: f.Target, Now: now, Ref: f.Ref,
		Reason: f.Reason, Newest: f.Order == NewestFirst, Cursor: f.Cursor, Limit: cmp.Or(f.Limit, DefaultQueueLimit),
		Escalated: f.Show != ShowOverdue, Overdue: f.Show != ShowEscalated}
	if f.Tenant != "" {
		if !inTenants(sc, f.Tenant) {
			return lf, ledger.Errorf(ledger.ENotFound, "you resolve no target of tenant %q", ledger.PlainText(f.Tenant, 63))
		}
		lf.Tenant, lf.Tenants, lf.AllTenants = f.Tenant, nil, false
	}
	if f.OlderThan > 0 {
		before := now.Add(-f.OlderThan)
		lf.CreatedBefore = &before
	}
	if f.AwaitingMe {
		// Only who they are: reading the queue takes no role.
		a, ok := ledger.ActorFromContext(ctx)
		if !ok || a.Subject == "" {
			return lf, invalid("“Awaiting my approval” needs a signed-in person.")
		}
		lf.AwaitingOthersOf = a.Subject
	}
	return lf, nil
}

func (f QueueFilter) validate() error {
	switch {
	case f.Show != ShowAll && f.Show != ShowEscalated && f.Show != ShowOverdue:
		return ledger.Errorf(ledger.EInvalid, "show is escalated, overdue, or empty for both")
	case f.Order != OldestFirst && f.Order != NewestFirst:
		return ledger.Errorf(ledger.EInvalid, "order is newest, or empty for oldest first")
	case f.Limit < 0 || f.Limit > ledger.MaxListLimit:
		return ledger.Errorf(ledger.EInvalid, "limit is between 1 and %d", ledger.MaxListLimit)
	case f.OlderThan < 0:
		return ledger.Errorf(ledger.EInvalid, "the age is a positive duration")
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
