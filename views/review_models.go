package views

// ReviewFilter is one choice of a review page's status filter (open,
// resolved, all), kept in the URL.
type ReviewFilter struct {
	ID      string // "open", "resolved", "all"
	Label   string
	Href    string
	Current bool
}

// QuarantineRow is one quarantined inbound event.
type QuarantineRow struct {
	ID     string // the item's number
	Target string
	Reason string // why it was quarantined, in words
	// What the event claims, as its sender wrote it: its id, the settle
	// reference ("—" if none), the tenant ("none") and the target's
	// object id ("—").
	EventID, Reference, Claimed, RemoteID Shown
	Tenant                                string // the tenant whose people review it, or "unattributed"
	At                                    Time
	// Operation links the operation the item concerns; empty when none.
	Operation     string
	OperationHref string // "" when the viewer may not open it
	Status        string // "Open", "Linked by …", "Dismissed by …"
	Resolution    string // the reviewer's reason, "" while open
	Open          bool
	LinkAction    string // the link form's action; "" when linking is not offered
	DismissAction string // the dismiss form's action; "" when not offered
}

// QuarantinePage is the owners' review of quarantined inbound events.
type QuarantinePage struct {
	Layout
	Filters []ReviewFilter
	Rows    []QuarantineRow
	Empty   string // shown when Rows is empty
	Done    string // what the last action did, in words
	Problem string // why the last action could not be done, in words
	// ProblemItem is the item the problem is about, so its form keeps what
	// was typed.
	ProblemItem string
	Operation   string // the operation the person typed, kept on a problem
	Reason      string // the reason the person typed, kept on a problem

	// The filters, kept in the URL of a GET form.
	Status                 string // "open", "resolved", "all" (the form keeps it)
	Ref, ReasonFilter      string
	Targets, Tenants, Ages []Option
	FilterProblem          string // why the filters could not be applied
	First, Next            string // the pager's links; "" for none
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
