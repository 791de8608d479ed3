package views

// TargetRow is one target in the targets listing.
type TargetRow struct {
	Name    string
	Href    string
	Classes string // "A, B"
	Owner   string
	Checked string // "2026-11-01 (30 days ago)", with the warning when stale
	Stale   bool   // documentation checked more than 180 days ago
	// GoNoGo is the gate's verdict ("GO", "NO-GO: 3 of 11 controls
	// failed"); empty when the server cannot evaluate it.
	GoNoGo string
	Go     bool
}

// TargetsPage lists the configured target contracts.
type TargetsPage struct {
	Layout
	Rows  []TargetRow
	Empty string
}

// ClassText is one capability class and what it lets settle do.
type ClassText struct {
	Class string // "A".."D"
	Text  string
}

// FactSection is a titled group of facts.
type FactSection struct {
	ID      string
	Heading string
	Facts   []Fact
}

// OutcomeRow is one row of a contract's status table.
type OutcomeRow struct {
	Status        string // "201", "4xx"
	Outcome       string
	Meaning       string
	Documentation string // URL citing the row; "" when none
}

// TargetPage is one target's contract in plain words.
type TargetPage struct {
	Layout
	Name     string
	Classes  []ClassText
	Sections []FactSection
	Outcomes []OutcomeRow
	DocURL   string
	Checked  string
	Stale    bool
	Back     string
	// GoNoGo is the go/no-go gate for this target, the same result
	// `settle gonogo` prints; nil when the server cannot evaluate it.
	GoNoGo *GoNoGo
}

// GoNoGo is the go/no-go gate's result for one target.
type GoNoGo struct {
	Verdict  string // "GO", or "NO-GO: 3 of 11 controls failed"
	Go       bool
	Controls []ControlRow
	Note     string // how the result was reached (drill age, retention flags)
}

// ControlRow is one go/no-go control.
type ControlRow struct {
	Number   int
	Name     string
	Pass     bool
	Verdict  string // PASS or FAIL
	Evidence string
}

// AdminPage is the administration overview: the read-only switch and the
// tenants the administrator manages.
type AdminPage struct {
	Layout
	ReadOnlyText string
	// Tenants are the known tenants the administrator manages, to pick
	// from; TenantsEmpty says why there are none.
	Tenants      []Link
	TenantsEmpty string
	// AllTenants offers the form that creates a tenant: only an
	// administrator of every tenant may add one.
	AllTenants bool
	NewTenant  string // the create form's action (GET: the confirmation page)
	Problem    string
}

// ConfirmPage asks a person to confirm a change before it is made: GET
// shows what will happen, the form POSTs it with CSRF. It works without
// JavaScript.
type ConfirmPage struct {
	Layout
	Heading string
	// Facts name what is acted on ("Token", "billing (tok_…)").
	Facts []Fact
	// Consequences say in plain words what will happen.
	Consequences []string
	Action       string        // the form's action
	Hidden       []HiddenField // carried as is (the tenant to create)
	Button       string        // "Revoke the token"
	Danger       bool          // the button is styled as destructive
	Cancel       string        // where "Cancel" goes
	TestID       string        // data-testid of the confirm button
}

// HiddenField is a hidden form field.
type HiddenField struct {
	Name, Value string
}

// TokenRow is one API token; its secret is never shown again.
type TokenRow struct {
	ID       string
	Name     string
	Created  Time
	LastUsed Time   // "never" until it authenticates; to within a minute
	Revoked  Time   // zero while active
	Rate     string // "default", or its own, e.g. "200/s, burst 400"
	Active   bool
	Revoke   string // link to the confirmation page; "" when revoked
}

// CallbackView is a tenant's callback endpoint, without its secret.
type CallbackView struct {
	URL     string
	Updated Time
	// GivenUp counts the notifications the notifier stopped retrying;
	// GivenUpRows are the latest of them.
	GivenUp     int
	GivenUpRows []GivenUpRow
	Delivery    DeliveryView
}

// DeliveryView is how a tenant's endpoint has been answering.
type DeliveryView struct {
	LastAttempt Time
	LastAnswer  string // "answered 204: delivered", "no answer (…)"; "" before any attempt
	Failing     bool   // the last attempt failed
	LastSuccess Time
	Failures    string // "3 failed attempts since the last success"; "" when none
	Pending     string // "12 waiting to be delivered", "none"
}

// GivenUpRow is one given-up notification: what it announced and why it
// failed, never a payload.
type GivenUpRow struct {
	OperationID string
	State       string
	Attempts    int
	LastStatus  int // 0: no answer came back
	LastError   string
	At          Time
}

// ParamRow is one of a tenant's request parameters. Values are not
// secrets (a connected account's id, say): the admin checks them here.
type ParamRow struct {
	Name    string
	Value   string
	Updated Time
}

// ActionRow is one recorded administrative action.
type ActionRow struct {
	When      Time
	Who       string
	Role      string
	What      string
	Object    string
	RequestID string
}

// AdminTenantPage is one tenant's API tokens and callback endpoint.
type AdminTenantPage struct {
	Layout
	Tenant string
	// Unknown says the tenant is not one settle knows (a typo, say): no
	// token can be made for it until it is created.
	Unknown     string
	Tokens      []TokenRow
	CreateToken string // form action; "" for an unknown tenant
	TokenName   string // the value a refused form keeps
	NameProblem string // why the token's name was refused, beside the field
	// Callbacks is shown only to those who may manage them.
	Callbacks      bool
	Callback       *CallbackView // nil when none is set
	SetCallback    string        // form action
	RemoveCallback string        // form action
	RetryCallbacks string        // form action: send the given-up notifications again
	TestCallback   string        // form action: send one signed test message now
	// TestResult / TestProblem say how the endpoint answered a test
	// delivery, on the response to it.
	TestResult, TestProblem string
	CallbackURL             string // the value a refused form keeps
	// CallbackProblem is why the URL was refused, beside the field.
	CallbackProblem string
	Problem         string // why the last change was refused
	// ShowParams is false when the store keeps no request parameters.
	ShowParams bool
	Params     []ParamRow
	Actions    []ActionRow
	Back       string
}

// SecretPage shows a new secret once, on the response to the request
// that created it.
type SecretPage struct {
	Layout
	Heading string
	Tenant  string
	Label   string // "API token", "Signing secret"
	ID      string // the token id, or the callback URL
	Secret  string
	Note    string // how to use it
	Back    string
}
