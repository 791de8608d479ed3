package views

// EscalationRow is one operation waiting for its owners.
type EscalationRow struct {
	ID       string
	Href     string // the escalation's detail page
	Tenant   string
	Target   string
	Intent   string
	State    string // ESCALATED, or UNKNOWN past its deadline
	Status   string // plain language
	Age      string // "3 h", since it was registered
	Since    Time   // when it was registered
	Deadline Time
	Reason   string // why it waits, in words
	Proposal string // "Awaiting approval: confirm succeeded" or ""
}

// EscalationsPage is the owners' queue.
type EscalationsPage struct {
	Layout
	Targets, Tenants, Shows, Sorts []Option
	Ages                           []Option
	Ref, Reason                    string   // the search box and the reason filter, as typed
	Mine                           bool     // "awaiting my approval" is ticked
	FilterQuery                    string   // the filter as a URL query, carried by the bulk form
	BulkKinds                      []Option // the resolutions a bulk proposal may make
	BulkMax                        string   // the most operations one bulk action takes
	Rows                           []EscalationRow
	Empty                          string
	Note                           string // e.g. that a listing was cut short
	Problem                        string
	First, Next                    string // the pager's links; "" for none
}

// Answer is one of the four runbook questions and what the evidence says.
type Answer struct {
	ID       string // for data-testid
	Question string
	Answer   string
	When     *Time
	Lines    []string
}

// ProposalView is an open proposal as the detail and proposals pages show it.
type ProposalView struct {
	ID         string
	Kind       string // the kind, for tests
	What       string // "Confirm succeeded (object ch_1)"
	Reason     string
	ProposedBy string
	ProposedAt Time
	Tenant     string
	Target     string
	Intent     string
	Href       string // the escalation's detail page
	// Mine: the viewer proposed it, so may only withdraw it.
	Mine bool
	// Decide: the viewer may approve or reject it.
	Decide bool
	Action string // the form action for approve and reject
}

// KindChoice is one kind of proposal the form offers.
type KindChoice struct {
	Value   string
	Label   string
	Help    string
	NeedRef bool // asks for the target's object id
}

// EscalationPage answers the runbook's four questions and offers the
// actions.
type EscalationPage struct {
	Layout
	ID, Tenant, Target, Intent string
	State, Status              string
	Story                      string // the operation's story page
	Answers                    []Answer
	Open                       *ProposalView // the open proposal, if any
	// Kinds are the proposals the viewer may make now; empty when none
	// (not ESCALATED, or a proposal is open).
	Kinds       []KindChoice
	ProposeHref string
	NoPropose   string // why nothing can be proposed, in words
	NoSupersede string // why supersede is not among Kinds, in words
}

// ProposalsPage lists open proposals awaiting the viewer and the viewer's
// own awaiting others.
type ProposalsPage struct {
	Layout
	Awaiting []ProposalView
	Mine     []ProposalView
	Note     string
}
