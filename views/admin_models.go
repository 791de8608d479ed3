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
	Tenants      []Link
	// AllTenants offers a tenant field instead of a list: the binding
	// covers every tenant, which settle cannot enumerate.
	AllTenants bool
	Problem    string
}

// TokenRow is one API token; its secret is never shown again.
type TokenRow struct {
	ID      string
	Created Time
	Revoked Time // zero while active
	Active  bool
	Revoke  string // form action; "" when revoked
}

// CallbackView is a tenant's callback endpoint, without its secret.
type CallbackView struct {
	URL     string
	Updated Time
	// GivenUp counts the notifications the notifier stopped retrying;
	// GivenUpRows are the latest of them.
	GivenUp     int
	GivenUpRows []GivenUpRow
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
	Tenant      string
	Tokens      []TokenRow
	CreateToken string // form action
	// Callbacks is shown only to those who may manage them.
	Callbacks      bool
	Callback       *CallbackView // nil when none is set
	SetCallback    string        // form action
	RemoveCallback string        // form action
	RetryCallbacks string        // form action: send the given-up notifications again
	CallbackURL    string        // the value a refused form keeps
	Problem        string        // why the last change was refused
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
