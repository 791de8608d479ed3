package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"

	"settle/ledger"
)

// seededSample is what settle bench console asks for: the ledger's
// tenants and, for the look-ups, one operation with a remote reference
// per request, spread over tenants and creation times.
type seededSample struct {
	tenants []string
	ops     []ledger.Operation
}

// sampleSeeded picks n+1 operations (the warm-up's and the runs') through
// the store's list, one tenant after another at random creation times.
func sampleSeeded(ctx context.Context, st store, runs int) (seededSample, error) {
	var s seededSample
	var err error
	if s.tenants, err = st.Tenants(ctx); err != nil {
		return s, err
	}
	if len(s.tenants) == 0 {
		return s, fmt.Errorf("the ledger holds no operations: load some with settle bench seed first")
	}
	r := rand.New(rand.NewPCG(27, 27))
	now := time.Now()
	for k := 0; len(s.ops) < runs+1; k++ {
		if k > 50*(runs+1) {
			return s, fmt.Errorf("found only %d operations with a remote reference, want %d", len(s.ops), runs+1)
		}
		f := ledger.ListFilter{Tenant: s.tenants[k%len(s.tenants)]}
		if k%3 != 2 { // a third of them among the newest
			cut := now.Add(-time.Duration(r.Float64() * float64(seedSpan/4)))
			f.CreatedBefore = &cut
		}
		page, err := st.List(ctx, f)
		if err != nil {
			return s, err
		}
		var refs []ledger.Operation
		for _, op := range page.Operations {
			if op.RemoteRef != "" {
				refs = append(refs, op)
			}
		}
		if len(refs) > 0 {
			s.ops = append(s.ops, refs[r.IntN(len(refs))])
		}
	}
	return s, nil
}

// The targets of issue 27, by the p95 of the server's time.
const (
	lookupTarget   = 20 * time.Millisecond
	listTarget     = 100 * time.Millisecond
	tenantFigures  = 200 * time.Millisecond
	allFigures     = 500 * time.Millisecond
	opsRow         = `data-testid="operation-row"`
	escalationRow  = `data-testid="escalation-row"`
	emptyNote      = `data-testid="empty"`
	figuresSection = `data-testid="tenant-figures"`
	overviewRow    = `data-testid="overview-row"`
)

// consoleMeasures are the rows of settle bench console over s.
func consoleMeasures(s seededSample) []consoleMeasure {
	largest, smallest := s.tenants[0], s.tenants[len(s.tenants)-1]
	var ms []consoleMeasure
	for _, l := range []struct {
		by  string
		ref func(ledger.Operation) string
	}{
		{"operation id", func(op ledger.Operation) string { return op.ID }},
		{"intent ref", func(op ledger.Operation) string { return op.IntentRef }},
		{"remote ref", func(op ledger.Operation) string { return op.RemoteRef }},
		{"remote key", func(op ledger.Operation) string { return op.RemoteKey }},
	} {
		ms = append(ms, consoleMeasure{name: "look-up by " + l.by, target: lookupTarget,
			path: func(k int) string { return "/operations?q=" + url.QueryEscape(l.ref(s.ops[k])) },
			check: func(k int, resp *http.Response, _ string) error {
				want := operationPath(s.ops[k])
				if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != want {
					return fmt.Errorf("%w %d to %q, want 303 to %s", errStatus, resp.StatusCode, resp.Header.Get("Location"), want)
				}
				return nil
			}})
	}
	ms = append(ms, consoleMeasure{name: "operation page", target: lookupTarget,
		path: func(k int) string { return operationPath(s.ops[k]) },
		check: func(k int, resp *http.Response, body string) error {
			return page(resp, body, `data-testid="timeline"`, s.ops[k].ID)
		}})

	list := func(name, query string, want ...string) {
		ms = append(ms, consoleMeasure{name: name, target: listTarget,
			path: func(int) string { return "/operations" + query },
			check: func(_ int, resp *http.Response, body string) error {
				return page(resp, body, want...)
			}})
	}
	list("operations, unfiltered", "", opsRow)
	for _, state := range ledger.States {
		list("operations, state "+string(state), "?state="+string(state), opsRow)
	}
	for _, t := range []string{"cards", "legacy-billing"} {
		list("operations, target "+t, "?target="+t, opsRow)
	}
	for _, a := range []string{"1h", "24h", "7d", "older1d", "older7d"} { // the console's age filter
		// The newest operations were created a minute before the seed:
		// a seed a day old has none in the last hour or day.
		want := opsRow
		if !strings.HasPrefix(a, "older") {
			want = opsRow + "|" + emptyNote
		}
		list("operations, age "+a, "?age="+a, want)
	}
	list("operations, tenant "+largest, "?tenant="+url.QueryEscape(largest), opsRow)
	list("operations, tenant "+smallest, "?tenant="+url.QueryEscape(smallest), opsRow)
	list("operations, tenant "+largest+" UNKNOWN", "?state=UNKNOWN&tenant="+url.QueryEscape(largest), opsRow+"|"+emptyNote)

	for _, q := range []struct{ name, query string }{
		{"escalation queue", ""}, {"escalation queue, tenant " + largest, "?tenant=" + url.QueryEscape(largest)},
		{"escalation queue, target cards", "?target=cards"},
	} {
		ms = append(ms, consoleMeasure{name: q.name, target: listTarget, owner: true,
			path:  func(int) string { return "/escalations" + q.query },
			check: func(_ int, resp *http.Response, body string) error { return page(resp, body, escalationRow) }})
	}
	for _, t := range []string{largest, smallest} {
		ms = append(ms, consoleMeasure{name: "figures, 30 days of " + t, target: tenantFigures,
			path:  func(int) string { return "/figures?window=30d&tenant=" + url.QueryEscape(t) },
			check: func(_ int, resp *http.Response, body string) error { return page(resp, body, figuresSection) }})
	}
	ms = append(ms, consoleMeasure{name: fmt.Sprintf("figures, 30 days of all %d tenants", len(s.tenants)), target: allFigures,
		path:  func(int) string { return "/figures/overview?window=30d" },
		check: func(_ int, resp *http.Response, body string) error { return page(resp, body, overviewRow) }})
	return ms
}

func operationPath(op ledger.Operation) string {
	return "/operations/" + url.PathEscape(op.Tenant) + "/" + url.PathEscape(op.ID)
}

// page checks a 200 whose body holds each of want; a want of the form
// "a|b" holds a or b.
func page(resp *http.Response, body string, want ...string) error {
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w %d, want 200", errStatus, resp.StatusCode)
	}
	for _, w := range want {
		found := false
		for _, alt := range strings.Split(w, "|") {
			found = found || strings.Contains(body, alt)
		}
		if !found {
			return fmt.Errorf("the page holds no %s", w)
		}
	}
	return nil
}
