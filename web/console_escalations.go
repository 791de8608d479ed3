package web

import (
	"cmp"
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"settle/auth"
	"settle/ledger"
	"settle/views"
)

// escalationRoutes are the console's pages for the escalation queue, proposals and their decisions (owners).
var escalationRoutes = []ConsoleRoute{
	{Method: http.MethodGet, Path: "/escalations", Permission: auth.Resolve, handle: (*server).escalationsPage},
	{Method: http.MethodGet, Path: "/escalations/proposals", Permission: auth.Resolve, handle: (*server).proposalsPage},
	{Method: http.MethodGet, Path: "/escalations/:tenant/:id", Permission: auth.Resolve, Tenanted: true,
		handle: (*server).escalationPage},
	{Method: http.MethodPost, Path: "/escalations/:tenant/:id/propose", Permission: auth.Resolve, Tenanted: true,
		handle: (*server).proposeResolution},
	{Method: http.MethodPost, Path: "/escalations/:tenant/:id/approve", Permission: auth.Resolve, Tenanted: true,
		handle: (*server).approveResolution},
	{Method: http.MethodPost, Path: "/escalations/:tenant/:id/reject", Permission: auth.Resolve, Tenanted: true,
		handle: (*server).rejectResolution},
}

// escQuery is the queue's state, all of it in the URL.
type escQuery struct {
	Target, Tenant string
	Show           string // "" both, "escalated", "overdue" (UNKNOWN past its deadline)
	Sort           string // "" oldest first, "deadline", "newest"
}

// queueLimit bounds each listing the queue reads: the queue is the work
// of a few people, not an archive.
const queueLimit = ledger.MaxListLimit

func escalationHref(tenant, id string) string {
	return "/escalations/" + url.PathEscape(tenant) + "/" + url.PathEscape(id)
}

func (s *server) escalationsPage(c echo.Context) error {
	ctx := c.Request().Context()
	p := auth.FromContext(ctx)
	qv := c.QueryParams()
	q := escQuery{Target: qv.Get("target"), Tenant: qv.Get("tenant"), Show: qv.Get("show"), Sort: qv.Get("sort")}
	v, err := s.escalationsView(ctx, p, q, s.now())
	if err != nil {
		return err
	}
	v.Layout = s.layout(c, "Escalations", "escalations")
	v.ServedIn = servedIn(c)
	return s.render(c, http.StatusOK, views.Escalations(v))
}

// escalationsView lists what waits for p's decision: ESCALATED operations,
// and UNKNOWN ones past their deadline (the reconciler escalates them on
// its next round), of the targets p owns.
func (s *server) escalationsView(ctx context.Context, p *auth.Principal, q escQuery, now time.Time) (views.EscalationsPage, error) {
	all, tenants := p.Tenants(auth.Resolve)
	v := views.EscalationsPage{
		Targets: s.targetOptions(q.Target), Tenants: tenantOptions(all, tenants, q.Tenant),
		Shows: options(q.Show, [][2]string{{"", "Escalated and overdue"}, {"escalated", "Escalated"},
			{"overdue", "Pending past the deadline"}}),
		Sorts: options(q.Sort, [][2]string{{"", "Oldest first"}, {"deadline", "Earliest deadline first"},
			{"newest", "Newest first"}}),
		Empty: "Nothing waits for you: no operation of your targets is escalated or overdue.",
	}
	f := ledger.ListFilter{Tenants: tenants, AllTenants: all, Target: q.Target, Limit: queueLimit}
	if q.Tenant != "" {
		if !all && !slices.Contains(tenants, q.Tenant) {
			v.Problem = "You do not own targets of tenant “" + ledger.PlainText(q.Tenant, 63) + "”."
			return v, nil
		}
		f.Tenant, f.Tenants, f.AllTenants = q.Tenant, nil, false
	}
	var ops []ledger.Operation
	for _, st := range []ledger.State{ledger.Escalated, ledger.Unknown} {
		if (st == ledger.Escalated && q.Show == "overdue") || (st == ledger.Unknown && q.Show == "escalated") {
			continue
		}
		f.State = st
		page, err := s.store.List(ctx, f)
		if ledger.ErrorCode(err) == ledger.EInvalid {
			v.Problem = ledger.ErrorMessage(err)
			return v, nil
		}
		if err != nil {
			return v, err
		}
		if page.Next != "" {
			v.Note = "Showing the newest " + countText(queueLimit, false) + " of each kind; narrow by target or tenant to see the rest."
		}
		for _, op := range page.Operations {
			overdue := op.Deadline != nil && !now.Before(*op.Deadline)
			if (op.State == ledger.Escalated || overdue) && p.Can(auth.Resolve, op.Tenant, op.Target) {
				ops = append(ops, op)
			}
		}
	}
	sortQueue(ops, q.Sort)
	open, err := s.openProposals(ctx, p)
	if err != nil {
		return v, err
	}
	for _, op := range ops {
		row := views.EscalationRow{ID: op.ID, Href: escalationHref(op.Tenant, op.ID), Tenant: op.Tenant,
			Target: op.Target, Intent: ledger.PlainText(op.IntentRef, 300), State: string(op.State),
			Status: op.State.Plain(s.owner(op.Target)), Age: spanText(now.Sub(op.CreatedAt)),
			Since: timeView(&op.CreatedAt, now, ""), Deadline: timeView(op.Deadline, now, "none"),
			Reason: queueReason(op)}
		if r, ok := open[op.Tenant+"/"+op.ID]; ok {
			row.Proposal = "Awaiting approval: " + kindLabel(r.Kind)
		}
		v.Rows = append(v.Rows, row)
	}
	return v, nil
}

// sortQueue orders the queue: oldest first unless asked otherwise.
func sortQueue(ops []ledger.Operation, by string) {
	slices.SortStableFunc(ops, func(a, b ledger.Operation) int {
		switch by {
		case "newest":
			return b.CreatedAt.Compare(a.CreatedAt)
		case "deadline":
			return cmp.Compare(deadlineKey(a), deadlineKey(b))
		}
		return a.CreatedAt.Compare(b.CreatedAt)
	})
}

// deadlineKey sorts operations without a deadline last.
func deadlineKey(op ledger.Operation) int64 {
	if op.Deadline == nil {
		return 1<<63 - 1
	}
	return op.Deadline.UnixMicro()
}

// queueReason is why an operation waits, in words.
func queueReason(op ledger.Operation) string {
	if op.State == ledger.Unknown {
		return "Still unconfirmed past its deadline; the reconciler escalates it on its next round. " +
			ledger.PlainText(op.Reason, 300)
	}
	if op.Reason == "" {
		return "Escalated; no reason was recorded."
	}
	return ledger.PlainText(op.Reason, 300)
}

func options(cur string, choices [][2]string) []views.Option {
	out := make([]views.Option, 0, len(choices))
	for _, ch := range choices {
		out = append(out, views.Option{Value: ch[0], Label: ch[1], Selected: cur == ch[0]})
	}
	return out
}

// resolutions is the store's ResolutionStore; both stores implement it.
func (s *server) resolutions() (ledger.ResolutionStore, error) {
	rs, ok := s.store.(ledger.ResolutionStore)
	if !ok {
		return nil, ledger.Errorf(ledger.EInternal, "the store keeps no manual resolutions")
	}
	return rs, nil
}

// openProposals returns the open proposals on the tenants p resolves in,
// by "tenant/operation".
func (s *server) openProposals(ctx context.Context, p *auth.Principal) (map[string]ledger.Resolution, error) {
	rs, err := s.resolutions()
	if err != nil {
		return nil, err
	}
	all, tenants := p.Tenants(auth.Resolve)
	list, err := rs.OpenResolutions(ctx, tenants, all)
	if err != nil {
		return nil, err
	}
	out := make(map[string]ledger.Resolution, len(list))
	for _, r := range list {
		out[r.Tenant+"/"+r.OperationID] = r
	}
	return out, nil
}

// proposalsPage lists the open proposals on p's targets: others' awaiting
// p's decision, and p's own awaiting someone else's.
func (s *server) proposalsPage(c echo.Context) error {
	ctx := c.Request().Context()
	p := auth.FromContext(ctx)
	rs, err := s.resolutions()
	if err != nil {
		return err
	}
	all, tenants := p.Tenants(auth.Resolve)
	list, err := rs.OpenResolutions(ctx, tenants, all)
	if err != nil {
		return err
	}
	now := s.now()
	v := views.ProposalsPage{}
	if len(list) == 500 {
		v.Note = "Showing the oldest 500 open proposals."
	}
	for _, r := range list {
		op, err := s.store.Summary(ctx, r.Tenant, r.OperationID)
		if err != nil {
			return err
		}
		if !p.Can(auth.Resolve, op.Tenant, op.Target) {
			continue
		}
		pv := proposalView(r, op, p, now)
		if pv.Mine {
			v.Mine = append(v.Mine, pv)
		} else {
			v.Awaiting = append(v.Awaiting, pv)
		}
	}
	v.Layout = s.layout(c, "Open proposals", "escalations")
	v.ServedIn = servedIn(c)
	return s.render(c, http.StatusOK, views.Proposals(v))
}

// proposalView shows r, on op, to p.
func proposalView(r ledger.Resolution, op ledger.Operation, p *auth.Principal, now time.Time) views.ProposalView {
	what := kindLabel(r.Kind)
	if r.RemoteRef != "" {
		what += " (object " + ledger.PlainText(r.RemoteRef, 300) + ")"
	}
	mine := r.ProposedBy == p.Subject
	return views.ProposalView{
		ID: strconv.FormatInt(r.ID, 10), Kind: string(r.Kind), What: what, Reason: ledger.PlainText(r.Reason, 500),
		ProposedBy: ledger.PlainText(cmp.Or(r.ProposedByName, r.ProposedBy), 200), ProposedAt: timeView(&r.ProposedAt, now, ""),
		Tenant: op.Tenant, Target: op.Target, Intent: ledger.PlainText(op.IntentRef, 300),
		Href: escalationHref(op.Tenant, op.ID), Action: escalationHref(op.Tenant, op.ID),
		Mine: mine, Decide: !mine && p.Can(auth.Resolve, op.Tenant, op.Target),
	}
}

// kindLabel names a kind of proposal in words.
func kindLabel(k ledger.ResolutionKind) string {
	switch k {
	case ledger.KindConfirmSucceeded:
		return "Confirm succeeded"
	case ledger.KindConfirmNotApplied:
		return "Confirm not applied"
	case ledger.KindReplay:
		return "Authorise one same-key replay"
	case ledger.KindSupersede:
		return "Supersede: close as not applied and register a new intent"
	}
	return string(k)
}
