package views

// BulkItem is one operation (or proposal) of a bulk action as its
// confirmation and result pages show it.
type BulkItem struct {
	Value  string // the form value naming it: "tenant/operation id" or "tenant/proposal id"
	Href   string // its escalation page
	Intent string
	Tenant string
	Target string
	What   string // the proposal, on a bulk approval: "Confirm not applied — by Ada (owner)"
	Reason string // the proposal's reason, on a bulk approval
	// Result, on the result page: "Proposed", "Approved", or why it was
	// refused; Done says which.
	Result string
	Done   bool
}

// BulkConfirmPage lists every item of a bulk action before it is done.
type BulkConfirmPage struct {
	Layout
	Heading string // "Propose “Confirm not applied” for 3 operations"
	Action  string // where the confirmation posts
	Kind    string // the proposal's kind, carried to the action (propose only)
	Reason  string // the proposal's reason, shown and carried (propose only)
	Items   []BulkItem
	Skipped []BulkItem // named but not among what the person may act on, with why
	Button  string
	Back    string // the page to return to without acting
	Problem string // why nothing can be done ("" when the items can)

	// ItemHeading is the items' column heading; "" is "Intent reference".
	ItemHeading string
	// Summary is a line above the list ("37 open events match …").
	Summary string
	// More are the values of items the action covers beyond those listed.
	More []string
	// Ask, when set, asks the reason on this page (posted as "why"), with
	// AskLabel as its label.
	Ask      *Field
	AskLabel string
}

// BulkResultPage says, item by item, what a bulk action did.
type BulkResultPage struct {
	Layout
	Heading string // "2 of 3 proposed"
	Items   []BulkItem
	Back    string
}
