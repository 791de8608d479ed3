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

// quarantinePageSize is how many items one page of the quarantine shows.
const quarantinePageSize = 50

// quarQuery is the quarantine page's state, all of it in the URL.
type quarQuery struct {
	Status         string // "open", "resolved", "all"
	Ref            string // any reference the event names
	Target, Tenant string
	Reason         string // words of the quarantine reason
	Age            string // "" any, or one of queueAges
	Cursor         string // the id of the previous page's last row
}

// quarQueryOf reads the page's state from the URL's query.
func quarQueryOf(qv url.Values) quarQuery {
	q := quarQuery{Status: "open", Ref: strings.TrimSpace(qv.Get("q")), Target: qv.Get("target"),
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
		"age": q.Age} {
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
		return "/quarantine"
	}
	return "/quarantine?" + v.Encode()
}

// tabs are the status links, each keeping the other filters.
func (q quarQuery) tabs() []views.ReviewFilter {
	out := make([]views.ReviewFilter, 0, 3)
	for _, f := range []struct{ id, label string }{{"open", "Open"}, {"resolved", "Resolved"}, {"all", "All"}} {
		t := q
		t.Status = f.id
		out = append(out, views.ReviewFilter{ID: f.id, Label: f.label, Href: t.href(""), Current: f.id == q.Status})
	}
	return out
}

// filter is q as the store's filter within p's scope, one row more than a
// page (to know whether a next page exists); a problem in words for a
// filter p may not use or that is not offered.
func (q quarQuery) filter(p *auth.Principal, now time.Time) (ledger.QuarantineFilter, string) {
	f := quarantineScope(p, q.Status == "open")
	f.Resolved = q.Status == "resolved"
	f.Ref, f.Target, f.Reason, f.Limit = q.Ref, q.Target, q.Reason, quarantinePageSize+1
	if q.Tenant != "" {
		if !ledger.ValidTenant(q.Tenant) || !p.Can(auth.ReviewInbox, q.Tenant, "") {
			return f, "You do not review events of tenant “" + ledger.PlainText(q.Tenant, 63) + "”."
		}
		f.AllTenants, f.Tenants, f.Unattributed = false, []string{q.Tenant}, false
	}
	if q.Age != "" {
		ok := false
		for _, a := range queueAges {
			ok = ok || a[0] == q.Age
		}
		d, err := time.ParseDuration(q.Age)
		if !ok || err != nil {
			return f, "Choose an age from the list."
		}
		f.Before = new(now.Add(-d))
	}
	if q.Cursor != "" {
		after, err := strconv.ParseInt(q.Cursor, 10, 64)
		if err != nil || after <= 0 {
			return f, "That page link is not valid: start again from the first page."
		}
		f.After = after
	}
	return f, ""
}
