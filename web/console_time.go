package web

import (
	"net/http"
	"strings"
	"time"
	_ "time/tzdata" // the IANA zones people pick, whatever the host has installed

	"github.com/labstack/echo/v4"

	"settle/ledger"
)

// zoneCookie holds the time zone a person chose for the console's times.
// It lasts as long as the browser's session (no Max-Age) and holds only
// an IANA name, checked on every read: a display preference, not a
// credential.
const zoneCookie = "settle_tz"

// maxZoneName bounds a zone name: the longest IANA name is 32 bytes.
const maxZoneName = 64

// loadZone checks a time zone name a person typed or a cookie carried:
// "UTC" or an IANA name ("Europe/Berlin"), never "Local" (the server's
// own zone, which means nothing to the reader) nor a path.
func loadZone(name string) (*time.Location, bool) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > maxZoneName || name == "Local" || strings.Contains(name, "..") ||
		strings.HasPrefix(name, "/") || strings.ContainsFunc(name, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("/_+-", r))
	}) {
		return nil, false
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, false
	}
	return loc, true
}

// zoneOf is the time zone the person chose for this browser session;
// UTC when none or when the cookie holds no valid zone.
func zoneOf(c echo.Context) *time.Location {
	ck, err := c.Cookie(zoneCookie)
	if err != nil {
		return time.UTC
	}
	if loc, ok := loadZone(ck.Value); ok {
		return loc
	}
	return time.UTC
}

// clock is now in the person's time zone: the handlers pass it to the
// views, and timeView prints absolute times in its location.
func (pg pages) clock(c echo.Context) time.Time {
	return pg.now().In(zoneOf(c))
}

// setZoneCookie keeps loc for the browser's session.
func setZoneCookie(c echo.Context, loc *time.Location) {
	c.SetCookie(&http.Cookie{Name: zoneCookie, Value: loc.String(), Path: "/", HttpOnly: true,
		Secure: c.Scheme() == "https", SameSite: http.SameSiteLaxMode})
}

// absoluteTime is t as a clock in the reader's zone shows it: "2026-12-02
// 10:42:05 CET". A zone without a common abbreviation (Go names it by its
// offset, "+0530") is written as one, "UTC+05:30".
func absoluteTime(t time.Time, loc *time.Location) string {
	lt := t.In(loc)
	abbr := lt.Format("MST")
	if abbr == "" || abbr[0] == '+' || abbr[0] == '-' {
		abbr = "UTC" + lt.Format("-07:00")
	}
	return lt.Format("2006-01-02 15:04:05") + " " + abbr
}

// timeText is a moment inside a sentence: "3 min ago (2026-12-02 10:42:05
// UTC)", in now's zone.
func timeText(t, now time.Time) string {
	return relative(t, now) + " (" + absoluteTime(t, now.Location()) + ")"
}

// clockTime is a moment of today or soon, as a sentence says it: "10:42
// CET" on the same day in the reader's zone, the whole date otherwise.
func clockTime(t, now time.Time) string {
	lt, ln := t.In(now.Location()), now
	if lt.Year() == ln.Year() && lt.YearDay() == ln.YearDay() {
		abs := absoluteTime(t, now.Location())
		return lt.Format("15:04") + abs[strings.LastIndexByte(abs, ' '):]
	}
	return absoluteTime(t, now.Location())
}

// deadlineText says what an operation's deadline does, where it still
// does something: the reconciler, asking the target about an UNKNOWN
// operation, escalates it to the owning team instead once the deadline has
// passed (reconciler.Reconciler). Before the send is in doubt the deadline
// only waits; once the operation is final or already with people it
// means nothing, and ok is false.
func deadlineText(op ledger.Operation, owner string, now time.Time) (text string, ok bool) {
	team := orTeam(owner)
	switch op.State {
	case ledger.Prepared, ledger.InFlight, ledger.Unknown:
	default:
		return "", false
	}
	if op.Deadline == nil {
		return "none: settle keeps asking " + op.Target + " until it answers, and never escalates for lateness", true
	}
	at := clockTime(*op.Deadline, now)
	if !now.Before(*op.Deadline) {
		if op.State == ledger.Unknown {
			return "passed at " + at + ": settle stops trying and escalates it to " + team + " at its next check", true
		}
		return "passed at " + at + ": if the outcome becomes unknown, settle escalates it to " + team + " at once", true
	}
	if op.State == ledger.Unknown {
		return "settle stops trying and escalates to " + team + " at " + at + " (" + relative(*op.Deadline, now) +
			") if the outcome is still unknown", true
	}
	return "if the outcome of the send becomes unknown, settle keeps asking " + op.Target + " until " + at +
		" (" + relative(*op.Deadline, now) + "), then stops trying and escalates to " + team, true
}
