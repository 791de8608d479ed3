package web

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"settle/auth"
	"settle/ledger"
	"settle/views"
)

// reviewPageSize is how many items one page of the quarantine or the
// findings shows.
const reviewPageSize = 50

// quarQuery is a review page's state (the quarantine's or the
// findings'), all of it in the URL.
type quarQuery struct {
	Path           string // "/quarantine" or "/findings"
	Status         string // "open", "resolved", "all"
	Ref            string // any reference the event names
	Target, Tenant string
	Reason         string // words of the quarantine reason
	Kind           string // a finding's kind
	Age            string // "" any, or one of queueAges
	Cursor         string // the id of the previous page's last row
}

// quarQueryOf reads the page's state from the URL's query.
func quarQueryOf(path string, qv url.Values) quarQuery {
	q := quarQuery{Path: path, Status: "open", Kind: qv.Get("kind"), Ref: strings.TrimSpace(qv.Get("q")), Target: qv.Get("target"),
		Tenant: qv.Get("tenant"), Reason: strings.TrimSpace(qv.Get("reason")), Age: qv.Get("age"), Cursor: qv.Get("cursor")}
	switch s := qv.Get("status"); s {
	case "resolved", "all":
		q.Status = s
	}
	return q
}

// values is q as a URL query, without its cursor.
func (q quarQuery) values() url.Values {
	v := url.Values{}
	for k, x := range map[string]string{"q": q.Ref, "target": q.Target, "tenant": q.Tenant, "reason": q.Reason,
		"age": q.Age, "kind": q.Kind} {
		if x != "" {
			v.Set(k, x)
		}
	}
	if q.Status != "open" {
		v.Set("status", q.Status)
	}
	return v
}

func (q quarQuery) href(cursor string) string {
	v := q.values()
	if cursor != "" {
		v.Set("cursor", cursor)
	}
	if len(v) == 0 {
		return q.Path
	}
	return q.Path + "?" + v.Encode()
}

// tabs are the status links, each keeping the other filters.
func (q quarQuery) tabs(resolvedLabel string) []views.ReviewFilter {
	out := make([]views.ReviewFilter, 0, 3)
	for _, f := range []struct{ id, label string }{{"open", "Open"}, {"resolved", resolvedLabel}, {"all", "All"}} {
		t := q
		t.Status = f.id
		out = append(out, views.ReviewFilter{ID: f.id, Label: f.label, Href: t.href(""), Current: f.id == q.Status})
	}
	return out
}

// filtered says whether q narrows the list beyond its status.
func (q quarQuery) filtered() bool {
	return q.Ref != "" || q.Target != "" || q.Tenant != "" || q.Reason != "" || q.Age != "" || q.Kind != ""
}

// scope is what q asks beyond the status, checked: the tenant (when p
// reviews it), the time before which items were recorded (the age) and
// the id the page continues after; a problem in words for a filter p may
// not use or that is not offered.
func (q quarQuery) scope(p *auth.Principal, now time.Time) (before *time.Time, after int64, problem string) {
	if q.Tenant != "" && (!ledger.ValidTenant(q.Tenant) || !p.Can(auth.ReviewInbox, q.Tenant, "")) {
		return nil, 0, "You do not review the events and findings of tenant “" + ledger.PlainText(q.Tenant, 63) + "”."
	}
	if q.Age != "" {
		ok := false
		for _, a := range queueAges {
			ok = ok || a[0] == q.Age
		}
		d, err := time.ParseDuration(q.Age)
		if !ok || err != nil {
			return nil, 0, "Choose an age from the list."
		}
		before = new(now.Add(-d))
	}
	if q.Cursor != "" {
		var err error
		after, err = strconv.ParseInt(q.Cursor, 10, 64)
		if err != nil || after <= 0 {
			return nil, 0, "That page link is not valid: start again from the first page."
		}
	}
	return before, after, ""
}

// filter is q as the quarantine's store filter within p's scope, a page
// long (the review asks one row more, to know whether a next page exists).
func (q quarQuery) filter(p *auth.Principal, now time.Time) (ledger.QuarantineFilter, string) {
	f := quarantineScope(p, q.Status == "open")
	f.Resolved = q.Status == "resolved"
	f.Ref, f.Target, f.Reason, f.Limit = q.Ref, q.Target, q.Reason, reviewPageSize
	var problem string
	f.Before, f.After, problem = q.scope(p, now)
	if q.Tenant != "" {
		f.AllTenants, f.Tenants, f.Unattributed = false, []string{q.Tenant}, false
	}
	return f, problem
}

// findingKinds are the findings page's kind filter's choices.
var findingKinds = [][2]string{{"", "Any kind"}, {string(ledger.FindingDuplicate), "Duplicate"},
	{string(ledger.FindingLoss), "Loss"}, {string(ledger.FindingPhantom), "Phantom"}}

// findingFilter is q as the findings' store filter within p's scope, one
// row more than a page.
func (q quarQuery) findingFilter(p *auth.Principal, now time.Time) (ledger.FindingFilter, string) {
	all, tenants := p.Tenants(auth.ReviewInbox)
	f := ledger.FindingFilter{AllTenants: all, Tenants: tenants, Open: q.Status == "open", Resolved: q.Status == "resolved",
		Ref: q.Ref, Target: q.Target, Kind: ledger.FindingKind(q.Kind), Limit: reviewPageSize + 1}
	var problem string
	f.Before, f.After, problem = q.scope(p, now)
	if q.Tenant != "" {
		f.AllTenants, f.Tenants = false, []string{q.Tenant}
	}
	if problem == "" && q.Kind != "" {
		problem = "Choose a kind from the list."
		for _, k := range findingKinds {
			if k[0] == q.Kind {
				problem = ""
			}
		}
	}
	return f, problem
}
