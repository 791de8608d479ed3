// Package views holds the console's templ components and the view models
// they display. Components compute nothing: every word a person reads,
// plain-language status included, is put into a view model by the web
// package, where it is unit-tested.
package views

// Layout is what every signed-in page shares.
type Layout struct {
	Title string
	User  *User  // nil on pages shown before sign-in
	CSRF  string // for the sign-out form
	Nav   []Link
	// ServedIn is how long the server took, for the footer ("12 ms").
	ServedIn string
	// ReadOnly shows that the server refuses every change.
	ReadOnly bool
	// Zone is the time zone the page prints times in ("UTC"), linked to
	// the settings page where the person changes it.
	Zone string
	// Live, on the pages that refresh while open, is the live region's
	// state; nil on every other page.
	Live *Live
}

// Live is a page that refreshes while open: the console's script asks the
// page's own URL for its live parts every Every milliseconds and puts
// them in place. Without JavaScript the page shows when it was read and
// a Reload link.
type Live struct {
	// Fragment renders only the live parts (the nav, the updated time and
	// the region), for the script; false renders the whole page.
	Fragment bool
	// Updated is when the page was read, as the reader's clock shows it
	// ("10:42:05"), and UpdatedISO the same moment in RFC 3339.
	Updated, UpdatedISO string
	Reload              string // the page's own URL
	Every               string // the polling interval, in milliseconds
}

// SettingsPage is a person's console settings: the time zone of every
// time the console prints.
type SettingsPage struct {
	Layout
	Zone    string   // the field's value: the current zone, or what was typed
	Zones   []string // suggestions
	Current string   // "Times are shown in UTC: now is …"
	Problem string   // why the typed name was refused, beside the field
	Done    string
}

// User is the signed-in person as the header shows them.
type User struct {
	Name  string
	Roles string // "support (acme, globex)"
	// Identity is the e-mail and the stable subject ("ada@example.com ·
	// oidc:CiQx…"): the subject is what the event log and `settle session
	// revoke` use.
	Identity string
}

// Link is a navigation entry.
type Link struct {
	Label   string
	Href    string
	Current bool
	// Count, when set, is shown beside the label ("3", "99+") and
	// CountText says it in words for screen readers ("3 awaiting your
	// approval").
	Count, CountText string
}

// Time is a moment shown relative ("3 min ago") with the exact UTC time in
// the title and datetime attributes. The zero Time shows Empty.
type Time struct {
	ISO      string // RFC 3339, UTC
	UTC      string // "2026-12-01 03:04:05 UTC"
	Relative string
	Absolute string // "2026-12-01 04:04:05 CET", in the reader's zone, shown beside Relative
	Empty    string // shown when ISO is ""
}

// Option is one choice of a select control.
type Option struct {
	Value    string
	Label    string
	Selected bool
}

// Tab is one state tab of the operations page.
type Tab struct {
	ID      string // "all" or the state, for tests and styling
	Label   string
	Count   string // "12", "10,000+"
	Href    string
	Current bool
}

// OperationRow is one operation in a listing.
type OperationRow struct {
	ID        string
	Href      string
	Tenant    string
	IntentRef string
	Type      string
	Target    string
	State     string // the ledger state, for styling
	Status    string // plain language
	Created   Time
	Updated   Time
}

// OperationsPage is the support search and listing.
type OperationsPage struct {
	Layout
	Query                          string
	States, Targets, Tenants, Ages []Option
	Tabs                           []Tab
	Heading                        string // "Search results for “…”" or "Operations"
	Rows                           []OperationRow
	Empty                          string // shown when Rows is empty
	Problem                        string // a filter that could not be used, in words
	Next                           string // href of the next page; "" on the last
	First                          string // href of the first page; "" on it
}

// Ref is an identifier shown with a copy button.
type Ref struct {
	ID    string // for data-testid
	Label string
	Shown
}

// Shown is text a tenant, a provider or an older row supplied (an id, a
// reference, a status), as ledger.ShowText shows it in the console and the
// CLI alike: Escaped marks a Text shown escaped, because the original held
// control, format or invalid characters, such as an ESC, a newline, a NUL
// or a right-to-left override.
type Shown struct {
	Text    string
	Escaped bool
}

// Fact is one labelled line of the detail page.
type Fact struct {
	ID    string
	Label string
	Value string
	Time  *Time // shown instead of Value when set
}

// Event is one step of an operation's story.
type Event struct {
	Kind  string // "created", "claimed", "answer", "lookup", … for tests and styling
	Title string
	When  Time
	By    string
	Lines []string // the evidence, in words
	// Detail is the engineering evidence (reasons, absence checks,
	// documentation), folded away under the lines.
	Detail []string
	// Repeats counts the events this one stands for, when identical ones
	// in a row were told once (lookups of a lagging target); From is the
	// first of them. 0 for one event.
	Repeats int
	From    Time
}

// OperationPage is one operation's story.
type OperationPage struct {
	Layout
	ID      string
	Intent  string // the intent reference, shown as plain text: the page's name
	State   string
	Status  string // plain language
	Meaning string // what it means for the customer
	Tone    string // "ok", "warn", "bad", "info"
	Refs    []Ref
	Facts   []Fact
	Events  []Event
	// Payload is the approved payload, indented; shown only when
	// PayloadShown, which the server decides from the viewer's permission.
	PayloadShown bool
	Payload      string
	PayloadNote  string // why it is not shown, or its fingerprint
	Back         string
	// EscalationHref is the operation's decision page, for an owner who
	// may decide it; "" for everyone else.
	EscalationHref string
	// Review is the operation's open audit findings and review actions,
	// for the people who review them (empty for the others).
	Review OperationReview
}

// ErrorPage explains a refused or failed request.
type ErrorPage struct {
	Layout
	Status    int
	Heading   string
	Message   string
	RequestID string // only for server errors, to quote to an operator
	SignIn    bool   // offer a link to sign in again
}

// DemoUser is one of the demo sign-in's users.
type DemoUser struct {
	ID          string
	Name        string
	Description string // what this person may do: "owner of every target, acme and globex"
}

// SignInPage is the sign-in page. The auth package fills it. The demo
// sign-in posts the form fields "user" (a DemoUser ID), "return" and
// "_csrf" to /login/demo; StartURL, when set, is where a real sign-in
// starts (the OIDC provider's redirect).
type SignInPage struct {
	Demo     bool
	Users    []DemoUser
	Return   string
	Error    string
	CSRF     string
	StartURL string
	Notice   string // e.g. "You have signed out."
}
