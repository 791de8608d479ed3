package web_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"settle/auth/oidctest"
	"settle/ledger/storetest"
	"settle/web"
	"settle/web/browsertest"
)

// eventually waits up to five seconds for cond, failing with what.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after 5 s: %s", what)
		}
	}
}

// polls counts the live requests the page makes from now on.
func polls(b *browsertest.Browser) func() int {
	b.Eval(`(() => { window.livePolls = 0; const f = window.fetch;
		window.fetch = function () { window.livePolls++; return f.apply(this, arguments); }; return true; })()`)
	return func() int { n, _ := strconv.Atoi(b.Eval("window.livePolls")); return n }
}

// An owner keeps the escalation queue open in Chromium while a colleague
// and the reconciler change the ledger: new rows and the nav's count
// appear without a reload and the status says so politely; a field being
// typed in is never replaced; pausing stops the polling (and stays paused
// on the next page of the tab), as does a hidden tab; without JavaScript
// the Reload link shows the same. axe checks each state.
func TestConsole_LiveBrowser(t *testing.T) {
	t.Parallel()
	s := storetest.Postgres().New(t, time.Now).(store)
	c, prov := oidcConsole(t, s, web.Config{LiveEvery: 300 * time.Millisecond}, `  - group: payments-acme
    role: owner
    tenants: [acme]
    targets: [payments]
`,
		oidctest.User{Subject: "olu-live", Name: "Olu Owner", Email: "olu@example.test", Groups: []string{"payments-acme"}})
	first := c.escalatedUnanswered("acme")
	rows := `[data-testid="escalation-row"]`

	b, check := visit(t)
	prov.SignInAs(t, "olu-live")
	if st := b.Navigate(c.base + "/escalations"); st != http.StatusOK {
		t.Fatalf("escalations: %d", st)
	}
	if got := b.TextByTestID("live-toggle"); got != "Pause live updates" || b.Count(`[data-testid="live-toggle"]:not([hidden])`) != 1 {
		t.Fatalf("the pause button: %q", got)
	}
	check("live-escalations")
	b.Eval("window.sameDocument = true")
	count := polls(b)

	// A colleague proposes on the first; the reconciler escalates another.
	c.propose("owner-b", first)
	c.escalatedUnanswered("acme")
	eventually(t, "the new row and the nav count", func() bool {
		return b.Count(rows) == 2 && b.Text(`[data-testid="nav-Escalations"] [data-testid="nav-count"]`) == "1"
	})
	if got := b.Text(`[data-testid="nav-Escalations"]`); !strings.Contains(got, "1 awaiting your approval") {
		t.Errorf("the nav entry reads %q", got)
	}
	eventually(t, "the status", func() bool { return strings.Contains(b.TextByTestID("live-status"), "1 new item") })
	if got := b.TextByTestID("live-status"); !strings.HasPrefix(got, "Updated ") || b.Eval("window.sameDocument") != "true" {
		t.Fatalf("status %q, or the page was reloaded", got)
	}
	if b.Attr(`[data-testid="live-status"]`, "aria-live") != "polite" || b.Attr(`[data-testid="live-region"]`, "aria-live") != "" {
		t.Error("the status, and only it, is announced politely")
	}
	check("live-escalations-updated")

	// Typing in the filter: the region waits.
	b.Fill("#reason", "timeout")
	c.escalatedUnanswered("acme")
	at := count()
	eventually(t, "two more polls", func() bool { return count() >= at+2 })
	if b.Count(rows) != 2 || b.Eval("document.activeElement.id") != "reason" || b.Eval("document.getElementById('reason').value") != "timeout" {
		t.Fatalf("the region was replaced under the person's typing: %d rows, focus on %s", b.Count(rows), b.Eval("document.activeElement.id"))
	}
	eventually(t, "the waiting note", func() bool { return strings.Contains(b.TextByTestID("live-status"), "waiting") })
	b.Eval("(() => { const f = document.getElementById('reason'); f.value = ''; f.blur(); return true; })()")
	eventually(t, "the held row once the field is left", func() bool { return b.Count(rows) == 3 })

	// Paused: no more requests, and the next page of the tab stays paused.
	b.Click(`[data-testid="live-toggle"]`)
	if got := b.TextByTestID("live-toggle"); got != "Resume live updates" || b.TextByTestID("live-status") != "Live updates paused." {
		t.Fatalf("after pausing: %q, status %q", got, b.TextByTestID("live-status"))
	}
	at = count()
	c.escalatedUnanswered("acme")
	time.Sleep(1500 * time.Millisecond) // five intervals
	if count() != at || b.Count(rows) != 3 {
		t.Fatalf("paused, the page still polled: %d requests, %d rows", count()-at, b.Count(rows))
	}
	check("live-escalations-paused")
	if st := b.Navigate(c.base + "/escalations"); st != http.StatusOK || b.TextByTestID("live-toggle") != "Resume live updates" {
		t.Fatalf("the next page of the tab: %d, %q", st, b.TextByTestID("live-toggle"))
	}
	count = polls(b)
	b.Click(`[data-testid="live-toggle"]`)
	eventually(t, "polling again after resuming", func() bool { return count() > 0 })

	// A hidden tab stops polling, and polls again when shown.
	b.Eval(`(() => { window.tabHidden = true;
		Object.defineProperty(document, "hidden", {configurable: true, get: () => window.tabHidden});
		Object.defineProperty(document, "visibilityState", {configurable: true, get: () => window.tabHidden ? "hidden" : "visible"});
		document.dispatchEvent(new Event("visibilitychange")); return true; })()`)
	time.Sleep(100 * time.Millisecond) // a request already under way ends
	at = count()
	time.Sleep(1500 * time.Millisecond)
	if count() != at {
		t.Fatalf("a hidden tab polled %d times", count()-at)
	}
	c.escalatedUnanswered("acme")
	b.Eval(`(() => { window.tabHidden = false; document.dispatchEvent(new Event("visibilitychange")); return true; })()`)
	eventually(t, "the row after the tab is shown again", func() bool { return count() > at && b.Count(rows) == 5 })

	// The operation's story follows its decision, made by two colleagues.
	op := c.escalatedUnanswered("acme")
	if st := b.Navigate(c.base + c.opPath(op)); st != http.StatusOK || !strings.HasPrefix(b.TextByTestID("status"), "Under review") {
		t.Fatalf("the operation page: %d, %q", st, b.TextByTestID("status"))
	}
	events := b.Count(`[data-testid="event"]`)
	c.approve("owner", c.propose("owner-b", op))
	eventually(t, "the decision on the open operation page", func() bool {
		return b.TextByTestID("status") == "Not applied" && b.Count(`[data-testid="event"]`) > events
	})
	check("live-operation-decided")

	// Without JavaScript: the time read and the Reload link, no button.
	nojs := browsertest.New(t)
	nojs.DisableJavaScript()
	prov.SignInAs(t, "olu-live")
	if st := nojs.Navigate(c.base + "/escalations"); st != http.StatusOK {
		t.Fatalf("without JavaScript: %d", st)
	}
	if nojs.Count(`[data-testid="live-toggle"]:not([hidden])`) != 0 || nojs.TextByTestID("live-updated") == "" {
		t.Fatal("without JavaScript the pause button shows, or the time read does not")
	}
	c.escalatedUnanswered("acme")
	if st := nojs.Submit(`[data-testid="live-reload"]`); st != http.StatusOK || nojs.Count(rows) != 6 {
		t.Fatalf("Reload: %d, %d rows", st, nojs.Count(rows))
	}
	nojs.Screenshot("live-escalations-nojs")
	nojs.RequireAccessible()
}
