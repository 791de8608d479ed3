package views

import "github.com/a-h/templ"

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
	// Warnings: how the evidence contradicts it; the approver must tick
	// that they weighed them.
	Warnings []string
	// Unverifiable: why settle cannot check its object id; the approver
	// must tick that they checked it at the target.
	Unverifiable string
	Form         DecideForm
}

// KindChoice is one kind of proposal the form offers.
type KindChoice struct {
	Value   string
	Label   string
	Help    string
	NeedRef bool // asks for the target's object id
	// Warnings: how the evidence contradicts this kind, shown beside it.
	Warnings []string
	Checked  bool // the kind the form shows chosen
}

// EvidenceRow is one piece of what the target said about the operation.
type EvidenceRow struct {
	What     string // "The webhook event evt_1"
	When     Time
	Object   string // the object it shows, or "none"
	Status   string // the object's own status, or "not given"
	Compared string // how it compared with the approved request, in words
	Verified string // whether its origin was authenticated, in words
	Note     string // why it was quarantined, and the review, if any
}

// Suggestion is a proposal the evidence supports: a link that fills the
// form in (a GET, so it works without JavaScript).
type Suggestion struct {
	Label string // "Confirm succeeded with ch_1 from the webhook event … of 10:42 UTC"
	Href  string
}

// Field is one input of a form as typed, with the refusal beside it.
type Field struct {
	Value string
	Error string // "" when the field is fine
}

// Attrs are the input's accessibility attributes: aria-invalid and
// aria-describedby naming the error's element id+"-error", when refused.
func (f Field) Attrs(id string) templ.Attributes {
	if f.Error == "" {
		return templ.Attributes{}
	}
	return templ.Attributes{"aria-invalid": "true", "aria-describedby": id + "-error"}
}

// ProposeForm is the proposal form as the person typed it.
type ProposeForm struct {
	Kind, RemoteRef, Reason, Despite Field
	// AskDespite shows the "I have weighed the contrary evidence" box.
	AskDespite bool
}

// DecideForm is the approval and rejection forms as typed.
type DecideForm struct {
	Despite, Checked, Reason Field
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
	// NotOffered say why each kind left out of Kinds is not offered.
	NotOffered  []string
	Evidence    []EvidenceRow // newest first
	Suggestions []Suggestion
	Form        ProposeForm
	// Unverifiable: why settle cannot check an object id here ("" when a
	// lookup checks it).
	Unverifiable string
	Problem      string // a refusal's summary, on a 422
}

// ProposalsPage lists open proposals awaiting the viewer and the viewer's
// own awaiting others.
type ProposalsPage struct {
	Layout
	Awaiting []ProposalView
	Mine     []ProposalView
	Note     string
}
