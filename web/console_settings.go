package web

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"settle/ledger"
	"settle/views"
)

// commonZones are offered as suggestions beside the free-text field; any
// IANA name is accepted.
var commonZones = []string{"UTC", "Europe/London", "Europe/Berlin", "Europe/Paris", "America/New_York",
	"America/Chicago", "America/Los_Angeles", "America/Sao_Paulo", "Asia/Kolkata", "Asia/Singapore", "Asia/Tokyo",
	"Australia/Sydney"}

// settingsPage shows the person's console settings: the time zone the
// console prints times in.
func (o *operationPages) settingsPage(c echo.Context) error {
	return o.renderSettings(c, http.StatusOK, zoneOf(c).String(), "")
}

func (o *operationPages) renderSettings(c echo.Context, status int, typed, problem string) error {
	loc := zoneOf(c)
	v := views.SettingsPage{Layout: o.layout(c, "Settings", ""), Zone: typed, Zones: commonZones, Problem: problem,
		Current: "Times are shown in " + loc.String() + ": now is " + absoluteTime(o.now(), loc) + "."}
	if c.QueryParam("saved") == "zone" && problem == "" {
		v.Done = "Saved. Times are now shown in " + loc.String() + " for the rest of this browser session."
	}
	v.ServedIn = servedIn(c)
	return o.render(c, status, views.Settings(v))
}

// settingsZone keeps the time zone the person chose for this browser
// session. A name that is no IANA zone re-renders the form with the
// problem beside the field and what was typed kept.
func (o *operationPages) settingsZone(c echo.Context) error {
	typed := strings.TrimSpace(c.FormValue("zone"))
	loc, ok := loadZone(typed)
	if !ok {
		return o.renderSettings(c, http.StatusUnprocessableEntity, ledger.PlainText(typed, maxZoneName),
			"“"+ledger.PlainText(typed, maxZoneName)+"” is not a time zone settle knows. Use UTC or an IANA name such as Europe/Berlin.")
	}
	setZoneCookie(c, loc)
	return c.Redirect(http.StatusSeeOther, "/settings?saved=zone")
}
