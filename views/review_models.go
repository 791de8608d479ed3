package views

// ReviewFilter is one choice of a review page's status filter (open,
// resolved, all), kept in the URL.
type ReviewFilter struct {
	ID      string // "open", "resolved", "all"
	Label   string
	Href    string
	Current bool
}

// QuarantineRow is one quarantined inbound event as the list shows it:
// one line, linking the item's own page, where its actions are.
type QuarantineRow struct {
	ID     string // the item's number
	Href   string // the item's page
	Select string // the bulk form's value ("tenant/id"); "" when it cannot be selected
	At     Time   // when it was received
	Target string
	Tenant string // the tenant whose people review it, or "unattributed"
	Reason string // why it was quarantined, in words
	// The event's id and the target's object id, as its sender wrote
	// them ("—" if none).
	EventID, RemoteID Shown
	Status            string                // "Open", "Linked", "Dismissed"
	Resolved          *QuarantineResolution // what happened to it; nil while open
}

// QuarantineResolution says what a reviewer did with an item.
type QuarantineResolution struct {
	Kind          string // "linked" or "dismissed"
	Verb          string // "Linked" or "Dismissed"
	By            string // "Grace Owner (owner)"
	At            Time
	Operation     string // linked: the operation's intent reference (or id)
	OperationHref string // linked: its page; "" when the viewer may not open it
	Reason        string // the reviewer's reason
}

// QuarantinePage is the owners' review of quarantined inbound events: a
// compact list, filters in the URL, and the bulk dismissal's form.
type QuarantinePage struct {
	Layout
	Filters []ReviewFilter
	Rows    []QuarantineRow
	Empty   string // shown when Rows is empty
	Done    string // what the last action did, in words

	// The filters, kept in the URL of a GET form.
	Status                 string // "open", "resolved", "all" (the form keeps it)
	Ref, ReasonFilter      string
	Targets, Tenants, Ages []Option
	FilterProblem          string // why the filters could not be applied
	First, Next            string // the pager's links; "" for none

	// Bulk offers the bulk dismissal (a GET form to its confirmation
	// page); Filter is the list's filter, carried to it, BulkMax its cap
	// ("1,000").
	Bulk    bool
	Filter  []Hidden
	BulkMax string
	// BulkAll is the "all matching" button: "Dismiss all 7 matching this
	// filter…", or "… (more than 50)…" when the list has other pages.
	BulkAll string
}

// Hidden is one hidden input of a form.
type Hidden struct{ Name, Value string }

// QuarantineCandidate is an operation a quarantined event may belong to.
type QuarantineCandidate struct {
	ID     string
	Intent string
	Status string
	Href   string // its page; "" when the viewer may not open it
}

// QuarantineItemPage is one quarantined event: its facts, the operations
// it may belong to, and its two actions while open.
type QuarantineItemPage struct {
	Layout
	ID       string // the item's number
	Heading  string // "Quarantined event evt_1"
	Back     string // the list
	Status   string // "Open: waiting for review", "Linked", "Dismissed"
	Resolved *QuarantineResolution
	// Already says a colleague resolved it first: "Already dismissed by
	// Grace Owner (owner) at 2026-12-03 09:14 UTC."
	Already string
	Problem string // why it could not be done, for the whole form

	Reason            string // why it was quarantined
	Target            string
	EventID           Shown
	Reference         Shown // the settle reference it claims
	Claimed           Shown // the tenant it claims
	Tenant            string
	RemoteID          Shown
	Verified          string
	At                Time
	Operation         string // the operation it concerns; "" when none
	OperationHref     string
	Candidates        []QuarantineCandidate
	LinkAction        string // "" when linking is not offered
	DismissAction     string // "" when dismissing is not offered
	LinkOperation     Field
	LinkReason        Field
	DismissReason     Field
	LinkOperationHelp string // "Operation of tenant acme (its id or any of its references)"
}

// FindingRow is one audit finding.
type FindingRow struct {
	ID            string
	Kind          string // "duplicate", "loss", "phantom", for tests and styling
	Title         string // what was found, in words
	Meaning       string // what it means and what to do
	Tenant        string
	Target        string
	Operation     string  // the operation's id
	OperationHref string  // "" when the viewer may not open it
	RemoteIDs     []Shown // the target's object ids, as it wrote them
	Found         Time
	Open          bool
	Acknowledged  string // "Acknowledged by … · note", "" while open
	AckAction     string // the acknowledge form's action; "" when not offered
	Href          string // the finding's own read-only page; "" when the viewer may not open it
}

// FindingsPage is the owners' review of audit findings.
type FindingsPage struct {
	Layout
	Filters     []ReviewFilter
	Rows        []FindingRow
	Empty       string
	Done        string
	Problem     string
	ProblemItem string
	Note        string // the note typed, kept on a problem

	// The filters, kept in the URL of a GET form.
	Status                        string // "open", "resolved", "all" (the form keeps it)
	Ref                           string
	Targets, Tenants, Ages, Kinds []Option
	FilterProblem                 string // why the filters could not be applied
	First, Next                   string // the pager's links; "" for none
}

// OperationReview is what the review pages know about one operation, on
// its page: its open audit findings, shown as a banner. The review actions
// taken about it are in its timeline, with everyone else's.
type OperationReview struct {
	Findings   []FindingRow
	ReviewHref string // the findings page, for those who may act on them; "" for the others
}

// FindingPage is one audit finding, read-only: what support and managers
// see of a finding about an operation they may read. The actions stay on
// the findings page, for the target's owners.
type FindingPage struct {
	Layout
	Row        FindingRow
	ReviewHref string // the findings page, when the viewer may act; else ""
	Note       string // who acts on it, for those who may not
}
