package web

import (
	"context"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"settle/auth"
	"settle/ledger"
	"settle/resolve"
	"settle/views"
)

// Live pages refresh while open by polling, not server-sent events: each
// poll is an ordinary GET of the page's own URL, through the same route,
// authorisation and queries as the page, that every proxy passes and
// that holds no connection open between polls (static/files/console.js).

// LiveHeader is the request header with which the console's script asks a
// live page for its live parts only (value "1"); the answer carries it
// back with the value "fragment".
const LiveHeader = "X-Settle-Live"

// DefaultLiveEvery is how often an open live page asks for its live
// parts, jittered by the script.
const DefaultLiveEvery = 15 * time.Second

// livePaths are the console's pages that refresh while open: the lists
// and the operation's story. Pages with forms a person fills (a decision,
// the admin pages) are not live, so that nothing is replaced under them.
var livePaths = map[string]bool{
	"/operations": true, "/operations/:tenant/:id": true, "/escalations": true, "/escalations/proposals": true,
	"/quarantine": true, "/findings": true,
}

// liveKey marks a live page's request: its value is whether only the live
// parts are asked for.
const liveKey = "settle.live"

// live marks the requests of a live route for the layout (pages.layout)
// and the render path.
func live(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		fragment := c.Request().Header.Get(LiveHeader) == "1"
		c.Set(liveKey, fragment)
		c.Response().Header().Add(echo.HeaderVary, LiveHeader)
		if fragment {
			c.Response().Header().Set(LiveHeader, "fragment")
		}
		return next(c)
	}
}

// liveView is the layout's live state for c, nil on a page that is not
// live.
func (pg pages) liveView(c echo.Context) *views.Live {
	fragment, ok := c.Get(liveKey).(bool)
	if !ok {
		return nil
	}
	now := pg.clock(c)
	return &views.Live{Fragment: fragment, Updated: now.Format("15:04:05"), UpdatedISO: now.UTC().Format(time.RFC3339),
		Reload: c.Request().URL.RequestURI(), Every: strconv.FormatInt(pg.liveEvery.Milliseconds(), 10)}
}

// countCap is the largest count the nav shows; past it, "99+".
const countCap = 99

// awaiting counts what awaits a person in the nav: proposals they may
// approve (the escalation queue's "awaiting my approval", one rule in
// package resolve) and the quarantine's open items they may review (the
// quarantine page's own scope).
type awaiting struct {
	resolve    *resolve.Service
	quarantine interface {
		ListQuarantine(ctx context.Context, f ledger.QuarantineFilter) ([]ledger.QuarantineItem, error)
	}
}

// count is what awaits p at the nav entry key ("" with nothing to say),
// and the same in words. A count that cannot be read is logged and left
// out: the page itself still works.
func (pg pages) count(c echo.Context, p *auth.Principal, key string) (n, words string) {
	if pg.awaits == nil {
		return "", ""
	}
	var (
		got  int
		more bool
		err  error
		what string
	)
	ctx := c.Request().Context()
	switch key {
	case "escalations":
		got, more, err = pg.awaits.resolve.AwaitingCount(actingAs(c, p, auth.Resolve, "", ""), resolverScope{p}, countCap)
		what = "awaiting your approval"
	case "quarantine":
		got, more, err = pg.awaits.openQuarantine(ctx, p)
		what = "open for review"
	default:
		return "", ""
	}
	if err != nil {
		pg.log.Warn("console: nav count unavailable", "count", key, "err", err,
			"request_id", c.Response().Header().Get(echo.HeaderXRequestID))
		return "", ""
	}
	return navCount(got, more, what)
}

// navCount is a count as the nav shows it ("3", "99+") and in words ("3
// awaiting your approval"); nothing for zero.
func navCount(n int, more bool, what string) (badge, words string) {
	switch {
	case more:
		return countText(n, true), "more than " + countText(n, false) + " " + what
	case n == 0:
		return "", ""
	}
	return countText(n, false), countText(n, false) + " " + what
}

// openQuarantine counts the open quarantined items p may review, up to
// countCap, as the quarantine page selects them.
func (a *awaiting) openQuarantine(ctx context.Context, p *auth.Principal) (int, bool, error) {
	f := quarantineScope(p, true)
	f.Limit = countCap + 1
	items, err := a.quarantine.ListQuarantine(ctx, f)
	if err != nil {
		return 0, false, err
	}
	more := len(items) > countCap
	if more {
		items = items[:countCap]
	}
	n := len(resolve.Visible(reviewerScope{p}, items))
	return n, more, nil
}
