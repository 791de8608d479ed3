package web

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"settle/auth"
	"settle/ledger"
	"settle/resolve"
	"settle/views"
)

// escalations are the console's pages for the escalation queue, its
// proposals and one operation's decision page with the owners' actions;
// every rule is the resolve service's.
type escalations struct {
	pages
	resolve *resolve.Service
	targets Targets // names each operation's owning team; lists the target filter
}

// routes are the console's pages for the escalation queue, proposals and their decisions (owners).
func (es *escalations) routes() []ConsoleRoute {
	return append([]ConsoleRoute{
		{Method: http.MethodGet, Path: "/escalations", Permission: auth.Resolve, handle: es.escalationsPage},
		{Method: http.MethodGet, Path: "/escalations/proposals", Permission: auth.Resolve, handle: es.proposalsPage},
		{Method: http.MethodGet, Path: "/escalations/:tenant/:id", Permission: auth.Resolve, Tenanted: true,
			handle: es.escalationPage},
		{Method: http.MethodPost, Path: "/escalations/:tenant/:id/propose", Permission: auth.Resolve, Tenanted: true,
			handle: es.proposeResolution},
		{Method: http.MethodPost, Path: "/escalations/:tenant/:id/approve", Permission: auth.Resolve, Tenanted: true,
			handle: es.approveResolution},
		{Method: http.MethodPost, Path: "/escalations/:tenant/:id/reject", Permission: auth.Resolve, Tenanted: true,
			handle: es.rejectResolution},
	}, es.bulkRoutes()...)
}

// escQuery is the queue's state, all of it in the URL.
type escQuery struct {
	Target, Tenant string
	Show           string // "" both, "escalated", "overdue" (UNKNOWN past its deadline)
	Sort           string // "" oldest first, "newest"
	Ref            string // any reference: id or id prefix, intent or remote reference
	Reason         string // words of the recorded reason
	Age            string // "" any, or one of queueAges: created more than that long ago
	Mine           bool   // only proposals awaiting my approval
	Cursor         string
}

// queueAges are the age filter's choices.
var queueAges = [][2]string{{"", "Any age"}, {"1h", "Waiting more than an hour"}, {"24h", "More than a day"},
	{"168h", "More than a week"}}

// escQueryOf reads the queue's state from the URL's query.
func escQueryOf(qv url.Values) escQuery {
	return escQuery{Target: qv.Get("target"), Tenant: qv.Get("tenant"), Show: qv.Get("show"), Sort: qv.Get("sort"),
		Ref: qv.Get("q"), Reason: qv.Get("reason"), Age: qv.Get("age"), Mine: qv.Get("mine") == "1", Cursor: qv.Get("cursor")}
}

// values is q as a URL query, without its cursor.
func (q escQuery) values() url.Values {
	v := url.Values{}
	for k, x := range map[string]string{"target": q.Target, "tenant": q.Tenant, "show": q.Show, "sort": q.Sort,
		"q": q.Ref, "reason": q.Reason, "age": q.Age} {
		if x != "" {
			v.Set(k, x)
		}
	}
	if q.Mine {
		v.Set("mine", "1")
	}
	return v
}

func (q escQuery) href(cursor string) string {
	v := q.values()
	if cursor != "" {
		v.Set("cursor", cursor)
	}
	if len(v) == 0 {
		return "/escalations"
	}
	return "/escalations?" + v.Encode()
}

// filter is q as the service's filter; EInvalid for an age not offered.
func (q escQuery) filter() (resolve.QueueFilter, error) {
	f := resolve.QueueFilter{Tenant: q.Tenant, Target: q.Target, Show: resolve.Show(q.Show), Order: resolve.Order(q.Sort),
		Ref: q.Ref, Reason: q.Reason, AwaitingMe: q.Mine, Cursor: q.Cursor, Limit: queuePage}
	if q.Age != "" {
		ok := false
		for _, a := range queueAges {
			ok = ok || a[0] == q.Age
		}
		d, err := time.ParseDuration(q.Age)
		if !ok || err != nil {
			return f, formError("Choose an age from the list.")
		}
		f.OlderThan = d
	}
	return f, nil
}

// bulkKinds are the resolutions one bulk proposal may make ("confirm
// succeeded" names each operation's own object).
var bulkKinds = [][2]string{{string(ledger.KindConfirmNotApplied), "Confirm not applied"},
	{string(ledger.KindReplay), "Authorise one same-key replay"},
	{string(ledger.KindSupersede), "Supersede: close as not applied and register a new intent"}}

// queuePage is how many operations one page of the queue shows.
const queuePage = 100

func escalationHref(tenant, id string) string {
	return "/escalations/" + url.PathEscape(tenant) + "/" + url.PathEscape(id)
}

func (es *escalations) escalationsPage(c echo.Context) error {
	ctx := c.Request().Context()
	p := auth.FromContext(ctx)
	q := escQueryOf(c.QueryParams())
	v, err := es.escalationsView(actingAs(c, p, auth.Resolve, "", ""), p, q, es.clock(c))
	if err != nil {
		return err
	}
	v.Layout = es.layout(c, "Escalations", "escalations")
	v.ServedIn = servedIn(c)
	return es.render(c, http.StatusOK, views.Escalations(v))
}

// escalationsView shows p's page of the escalation queue (resolve.Queue).
func (es *escalations) escalationsView(ctx context.Context, p *auth.Principal, q escQuery, now time.Time) (views.EscalationsPage, error) {
	all, tenants := p.Tenants(auth.Resolve)
	v := views.EscalationsPage{
		Targets: targetOptions(es.targets, q.Target), Tenants: tenantOptions(all, tenants, q.Tenant),
		Shows: options(q.Show, [][2]string{{"", "Escalated and overdue"}, {"escalated", "Escalated"},
			{"overdue", "Pending past the deadline"}}),
		Sorts: options(q.Sort, [][2]string{{"", "Oldest first"}, {"newest", "Newest first"}}),
		Ages:  options(q.Age, queueAges), Ref: q.Ref, Reason: q.Reason, Mine: q.Mine,
		FilterQuery: q.values().Encode(), BulkKinds: options("", bulkKinds), BulkMax: strconv.Itoa(resolve.MaxBulk),
		Empty: "Nothing waits for you: no operation of your targets is escalated or overdue.",
	}
	f, err := q.filter()
	var queue resolve.Queue
	if err == nil {
		queue, err = es.resolve.Queue(ctx, resolverScope{p}, f)
	}
	switch ledger.ErrorCode(err) {
	case "":
	case ledger.ENotFound:
		v.Problem = "You do not own targets of tenant “" + ledger.PlainText(q.Tenant, 63) + "”."
		return v, nil
	case ledger.EInvalid:
		v.Problem = ledger.ErrorMessage(err)
		return v, nil
	default:
		return v, err
	}
	if q.Cursor != "" {
		v.First = q.href("")
	}
	if queue.Next != "" {
		v.Next = q.href(queue.Next)
	}
	for _, it := range queue.Items {
		op := it.Operation
		row := views.EscalationRow{ID: op.ID, Href: escalationHref(op.Tenant, op.ID), Tenant: op.Tenant,
			Target: op.Target, Intent: ledger.PlainText(op.IntentRef, 300), State: string(op.State),
			Status: op.State.Plain(ownerOf(es.targets, op.Target)), Age: spanText(now.Sub(op.CreatedAt)),
			Since: timeView(&op.CreatedAt, now, ""), Deadline: timeView(op.Deadline, now, "none"),
			Reason: queueReason(op)}
		if it.Open != nil {
			row.Proposal = "Awaiting approval: " + kindLabel(it.Open.Kind)
		}
		v.Rows = append(v.Rows, row)
	}
	return v, nil
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

// proposalsPage lists the open proposals on p's targets: others' awaiting
// p's decision, and p's own awaiting someone else's.
func (es *escalations) proposalsPage(c echo.Context) error {
	ctx := c.Request().Context()
	p := auth.FromContext(ctx)
	list, cut, err := es.resolve.OpenProposals(ctx, resolverScope{p})
	if err != nil {
		return err
	}
	now := es.clock(c)
	v := views.ProposalsPage{}
	if cut {
		v.Note = "Showing the oldest 500 open proposals."
	}
	for _, o := range list {
		pv := proposalView(o.Proposal, o.Operation, p, now)
		if pv.Mine {
			v.Mine = append(v.Mine, pv)
		} else {
			v.Awaiting = append(v.Awaiting, pv)
		}
	}
	v.Layout = es.layout(c, "Open proposals", "escalations")
	v.ServedIn = servedIn(c)
	return es.render(c, http.StatusOK, views.Proposals(v))
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
		ProposedBy: personName(r.ProposedByName, ""), ProposedAt: timeView(&r.ProposedAt, now, ""),
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
