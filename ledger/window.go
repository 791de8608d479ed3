package ledger

import "time"

// MaxWindowDays bounds a figures window: a year of days is what a page,
// its charts and the rollups are sized for.
const MaxWindowDays = 366

// endOfTime is the upper bound of an open window: far beyond any event,
// and still within both stores' timestamp ranges.
var endOfTime = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// Window is the span the figures count: from Since (inclusive) to Until
// (exclusive), so that adjacent windows never count an event twice.
type Window struct {
	Since, Until time.Time
}

// Since is the open window from t onwards, for counts that have no end.
func Since(t time.Time) Window { return Window{Since: t, Until: endOfTime} }

// DaysEnding is the window of days whole UTC days ending with now's day:
// the console's 7, 30 and 90 days and `settle figures --days`.
func DaysEnding(now time.Time, days int) Window {
	return Window{Since: WindowStart(now, days), Until: now.UTC().Truncate(24*time.Hour).AddDate(0, 0, 1)}
}

// DateRange is the window of whole UTC days from the day from to the day
// to, both included, as a person names them ("2026-11-01" to
// "2026-11-30"); EInvalid unless it is a valid window.
func DateRange(from, to string) (Window, error) {
	since, err := time.Parse(time.DateOnly, from)
	if err != nil {
		return Window{}, Errorf(EInvalid, "the from date must be a day (YYYY-MM-DD)")
	}
	last, err := time.Parse(time.DateOnly, to)
	if err != nil {
		return Window{}, Errorf(EInvalid, "the to date must be a day (YYYY-MM-DD)")
	}
	w := Window{Since: since, Until: last.AddDate(0, 0, 1)}
	return w, w.Validate()
}

// DatesEnding is the window a person asks for by dates, as the console's
// from/to fields and `settle figures --from --to` take them: to defaults
// to now's day, from to 29 days before to (30 days), and the window must
// be valid and end no later than now's day; EInvalid otherwise.
func DatesEnding(from, to string, now time.Time) (Window, error) {
	today := now.UTC().Truncate(24 * time.Hour)
	if to == "" {
		to = today.Format(time.DateOnly)
	}
	if last, err := time.Parse(time.DateOnly, to); from == "" && err == nil {
		from = last.AddDate(0, 0, -29).Format(time.DateOnly)
	}
	w, err := DateRange(from, to)
	if err == nil && w.Until.After(today.AddDate(0, 0, 1)) {
		err = Errorf(EInvalid, "the window ends after today")
	}
	return w, err
}

// Validate reports EInvalid unless Until is after Since and the window
// spans at most MaxWindowDays.
func (w Window) Validate() error {
	if !w.Until.After(w.Since) {
		return Errorf(EInvalid, "the window must end after it begins")
	}
	if w.Until.Sub(w.Since) > MaxWindowDays*24*time.Hour {
		return Errorf(EInvalid, "the window spans more than %d days", MaxWindowDays)
	}
	return nil
}

// WholeDays reports whether the window starts and ends at UTC midnights:
// only such windows do the daily rollups answer.
func (w Window) WholeDays() bool { return IsMidnightUTC(w.Since) && IsMidnightUTC(w.Until) }

// Days is the number of UTC days the window touches, at least one.
func (w Window) Days() int {
	first := w.Since.UTC().Truncate(24 * time.Hour)
	n := int((w.Until.Sub(first) + 24*time.Hour - 1) / (24 * time.Hour))
	return max(n, 1)
}

// Contains reports whether t is in the window.
func (w Window) Contains(t time.Time) bool { return !t.Before(w.Since) && t.Before(w.Until) }

// DayList lists the UTC days ("2006-01-02") the window touches, oldest
// first, at most MaxWindowDays+1 of them (an open window lists the days
// from its start): the rows of the figures' tables and CSV, zero days
// included.
func (w Window) DayList() []string {
	first := w.Since.UTC().Truncate(24 * time.Hour)
	n := min(w.Days(), MaxWindowDays+1)
	out := make([]string, n)
	for i := range out {
		out[i] = first.AddDate(0, 0, i).Format(time.DateOnly)
	}
	return out
}
