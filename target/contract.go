package target

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Outcome is what one HTTP status from a create call means, per the
// target's documentation. It is a fact about the response only: settle
// records SUCCEEDED only after RemoteID and Mismatches also agree.
type Outcome string

// The five outcomes of the paper's observation table.
const (
	// Succeeded: the target reports it completed the operation.
	Succeeded Outcome = "succeeded"
	// AcceptedPending: the target accepted work; completion is not confirmed.
	AcceptedPending Outcome = "accepted_pending"
	// RejectedWithoutSideEffect: the target documents that this response
	// happens before any side effect. Only such rows may end FAILED_TERMINAL.
	RejectedWithoutSideEffect Outcome = "rejected_without_side_effect"
	// InProgress: another attempt with the same key is still executing.
	InProgress Outcome = "in_progress"
	// Unknown: nothing reliable; the operation must be reconciled.
	Unknown Outcome = "unknown"
)

var outcomeNames = []string{string(Succeeded), string(AcceptedPending), string(RejectedWithoutSideEffect), string(InProgress), string(Unknown)}

// Class is one of the paper's reconciliation capability classes.
type Class string

// Capability classes; a target may have several, or only D.
const (
	ClassA Class = "A" // same-key replay inside a documented retention window
	ClassB Class = "B" // lookup by settle's own reference
	ClassC Class = "C" // target-side conditional update (e.g. If-Match)
	ClassD Class = "D" // none of the above: unresolved operations escalate
)

// Idempotency mismatch and concurrency behaviours a contract can record.
const (
	MismatchRejected        = "rejected"         // same key, different payload: an error
	MismatchReplaysOriginal = "replays_original" // same key, different payload: the original's response
	ConcurrentConflict      = "conflict"         // same key while executing: an error status
	ConcurrentWaits         = "waits"            // same key while executing: waits for the first
	Undocumented            = "undocumented"     // the vendor does not say; the default
)

// Contract is one target's validated contract. Durations are parsed, the
// status table is compiled and every default is already applied, so callers
// read facts, never YAML.
type Contract struct {
	Name          string
	Owner         Owner
	Documentation Documentation
	BaseURL       string        // absolute http(s) URL without a trailing slash
	Timeout       time.Duration // client timeout per request
	Deadline      time.Duration // default operation deadline; past it, unresolved operations escalate
	Create        Endpoint

	ReferenceField string // dotted JSON path where settle writes the operation's remote key; "" = none
	TenantField    string // dotted JSON path where settle writes the tenant; "" = none

	Idempotency       *Idempotency       // nil: the target documents no idempotency key
	Lookup            *Lookup            // nil: no lookup; unresolved operations escalate
	ConditionalUpdate *ConditionalUpdate // nil: no target-side preconditions

	// LateRequestsRejected: the target documents that a request arriving
	// after the operation's deadline is rejected (absence rule 2).
	LateRequestsRejected bool

	Outcomes []OutcomeRule // in file order; Status normalised ("409", "4xx")
	Response Response
	Webhook  *Webhook // nil: no webhooks from this target

	// Auth names the credential sent with every request; nil: none. It
	// holds the environment variable's name, never the secret (see Secrets).
	Auth *Auth
	// Encoding is how a create body goes on the wire: EncodingJSON (the
	// default) sends the approved canonical bytes, EncodingForm derives
	// application/x-www-form-urlencoded bytes from them.
	Encoding Encoding
	// Headers are sent with every request (create, replay, resend and
	// lookup), in file order; values may name tenant parameters.
	Headers []Header
	// BodyFields are written into the create body at send time, after the
	// payload was approved and hashed; values may name tenant parameters.
	BodyFields []BodyField
	// Reconcile is how the reconciler treats the target; its zero value
	// is the defaults.
	Reconcile Reconcile
}

// Reconcile is a contract's reconcile block.
type Reconcile struct {
	// Concurrency bounds the target's lookups and replays in progress at
	// once in one reconciler, so that a target that hangs holds only its
	// own slots; 0 = DefaultReconcileConcurrency.
	Concurrency int
}

// DefaultReconcileConcurrency is the reconcile concurrency of a contract
// that states none.
const DefaultReconcileConcurrency = 4

// ReconcileConcurrency is the contract's reconcile concurrency, or
// DefaultReconcileConcurrency.
func (c *Contract) ReconcileConcurrency() int {
	if c.Reconcile.Concurrency <= 0 {
		return DefaultReconcileConcurrency
	}
	return c.Reconcile.Concurrency
}

// Owner is the team that owns the target's contract and its escalations.
type Owner struct {
	Team              string
	EscalationContact string
	// Notify, when set, is where the team is told of each escalation of
	// an operation on this target, and of the daily digest of overdue
	// ones (reconciler.EscalationNotifier, reconciler.Digest).
	Notify *Notify
}

// Notify is an owning team's notification endpoint.
type Notify struct {
	URL string // absolute http(s) URL; it may carry a token, so it is never logged
	// SecretEnv names the environment variable holding the HMAC-SHA256
	// key of the Settle-Signature header, read at start-up by ReadSecrets.
	SecretEnv string
	Format    string // NotifySettle or NotifySlack
}

// The notification body formats.
const (
	NotifySettle = "settle" // settle's own JSON body
	NotifySlack  = "slack"  // a Slack incoming-webhook body: {"text", "blocks"}
)

// Documentation is where the contract's facts come from (go/no-go control 1).
type Documentation struct {
	URL     string
	Checked time.Time // the date someone last checked the documentation
}

// Endpoint is an HTTP method and a path below the base URL.
type Endpoint struct {
	Method string
	Path   string
}

// Idempotency is the target's documented idempotency-key behaviour.
type Idempotency struct {
	Header     string        // request header carrying the key
	Scope      string        // what the vendor says keys are unique within; "" = undocumented
	Retention  time.Duration // documented key retention; 0 = window zero
	Mismatch   string        // MismatchRejected, MismatchReplaysOriginal or Undocumented
	Concurrent string        // ConcurrentConflict, ConcurrentWaits or Undocumented
	// ReplayMargin is kept free at the end of the window for clock skew
	// between settle and the target and for time a request spends in the
	// target's queues; 0 = DefaultReplayMargin.
	ReplayMargin time.Duration
	// ReplayedHeader is the response header whose value "true" marks an
	// answer the target replayed from its saved response to the key's first
	// use; "" = the target documents none.
	ReplayedHeader string
}

// DefaultReplayMargin is the replay margin of a contract that states none.
const DefaultReplayMargin = 5 * time.Second

// Lookup is how to ask the target for an operation's real state.
type Lookup struct {
	Method           string        // always GET: the reconciler repeats lookups freely
	Path             string        // may contain {reference} and {remote_ref}
	ResultsField     string        // dotted path to the array of results; "" = the body is one object
	ReadAfterWrite   bool          // documented read-after-write consistency
	PropagationLimit time.Duration // documented propagation limit; 0 = none documented
}

// NeedsRemoteRef reports whether the lookup path needs the target's own
// object id, which settle knows only after a response carried it.
func (l *Lookup) NeedsRemoteRef() bool { return strings.Contains(l.Path, "{remote_ref}") }

// ConditionalUpdate is the target's precondition header (class C).
type ConditionalUpdate struct {
	Header string
	// VersionField is the dotted path in the approved payload holding the
	// version the update expects to replace; "" = none. Sent in Header, it
	// makes a resend fail safely (e.g. 412) once the first attempt applied.
	VersionField string
}

// OutcomeRule is one row of the status → outcome table.
type OutcomeRule struct {
	Status        string // an exact code ("409") or a class ("4xx")
	Outcome       Outcome
	Documentation string // URL that documents the row; required for some rows
}

// Response says how to read a remote object.
type Response struct {
	IDField string       // dotted path of the remote object id
	Match   []MatchField // fields that must agree in the approved payload and the remote object
	// StatusField is the dotted path of the object's status; "" = the target
	// documents none, so an object that exists counts as completed.
	StatusField string
	// Statuses maps StatusField values to what they mean; a value not
	// listed means pending. Non-empty exactly when StatusField is set, and
	// holds at least one ObjectSucceeded row.
	Statuses []StatusRule
	// ErrorObjectField is the dotted path, in the body of an answer whose
	// status is rejected_without_side_effect, of the object that request
	// created all the same (Stripe's declined PaymentIntent sits at
	// error.payment_intent); IDField and StatusField are read inside it.
	// "" = such answers carry none.
	ErrorObjectField string
}

// MatchRule is how one match field compares.
type MatchRule string

// The match rules. A Contract built in code may leave Rule empty: it
// compares as MatchExact.
const (
	// MatchExact: equal JSON values; numbers by exact value (10 equals 10.0).
	MatchExact MatchRule = "exact"
	// MatchCaseInsensitive: strings equal ignoring case (strings.EqualFold),
	// for codes a target rewrites such as "EUR" → "eur"; other values exact.
	MatchCaseInsensitive MatchRule = "case_insensitive"
	// MatchNumeric: the same decimal value, whether written as a JSON number
	// or as a numeric string (1, 1.0 and "1.00" agree), compared exactly.
	MatchNumeric MatchRule = "numeric"
)

var matchRuleNames = []string{string(MatchExact), string(MatchCaseInsensitive), string(MatchNumeric)}

// MatchField is one response.match entry.
type MatchField struct {
	Field string // dotted path
	Rule  MatchRule
}

// MatchFields returns the match entries' paths, in contract order.
func (r Response) MatchFields() []string {
	out := make([]string, len(r.Match))
	for i, m := range r.Match {
		out[i] = m.Field
	}
	return out
}

// ObjectOutcome is what a remote object's own status says about it.
type ObjectOutcome string

// The object outcomes of response.statuses.
const (
	// ObjectSucceeded: the object is complete; SUCCEEDED once it matches.
	ObjectSucceeded ObjectOutcome = "succeeded"
	// ObjectPending: not complete yet; the operation stays UNKNOWN and is
	// reconciled later. Every unlisted status reads as pending.
	ObjectPending ObjectOutcome = "pending"
	// ObjectFailed: the object exists and documents that nothing was
	// applied (a declined charge): FAILED_TERMINAL with it as evidence.
	ObjectFailed ObjectOutcome = "failed"
)

var objectOutcomeNames = []string{string(ObjectSucceeded), string(ObjectPending), string(ObjectFailed)}

// StatusRule is one response.statuses row.
type StatusRule struct {
	Value         string // the status text, compared exactly
	Outcome       ObjectOutcome
	Documentation string // required unless Outcome is ObjectSucceeded
}

// Auth is the credential settle sends with every request to the target.
type Auth struct {
	Header string // e.g. Authorization
	// Scheme is AuthBearer, AuthBasic or "" (the secret is the whole
	// header value).
	Scheme string
	// SecretEnv names the environment variable holding the secret, read
	// once at start-up by ReadSecrets. For AuthBasic it holds
	// "user:password", which settle base64-encodes.
	SecretEnv string
}

// The auth schemes.
const (
	AuthBearer = "Bearer"
	AuthBasic  = "Basic"
)

// Encoding is the wire form of a create body.
type Encoding string

// The encodings.
const (
	// EncodingJSON sends the approved canonical JSON (body_fields written in).
	EncodingJSON Encoding = "json"
	// EncodingForm sends application/x-www-form-urlencoded pairs derived
	// from the canonical JSON in bracket notation (see FormEncode).
	EncodingForm Encoding = "form"
)

// Header is one extra request header.
type Header struct {
	Name  string
	Value Template
}

// BodyField is one field settle writes into a create body at send time.
type BodyField struct {
	Path  string // dotted path
	Value Template
}

// Webhook describes inbound events. It holds the name of the environment
// variable with the secret, never the secret.
//
// Deliveries are signed as settle's simulator and its client callbacks sign:
// header SignatureHeader = "t=<unix seconds>,v1=<hex HMAC-SHA256 of
// "<t>.<body>">"; the event's remote object sits at ObjectField.
type Webhook struct {
	SecretEnv       string
	Tolerance       time.Duration // accepted clock difference of signed timestamps
	SignatureHeader string        // default "Settle-Signature"
	ObjectField     string        // dotted path of the object in the event; default "data"
	EventIDField    string        // dotted path of the event id; default "id"
	// MaxBodyBytes bounds a delivery's body (413 beyond it); Parse sets
	// it to MaxWebhookBody unless the contract asks for less. 0, in a
	// Webhook built in code, means MaxWebhookBody.
	MaxBodyBytes int
}

// rule finds the row for status. It scans the rows rather than a compiled
// index so that a Contract built in code behaves exactly like its Outcomes;
// tables are a handful of rows. Parse has normalised every Status.
func (c *Contract) rule(status int) (OutcomeRule, bool) {
	exact, class := strconv.Itoa(status), strconv.Itoa(status/100)+"xx"
	var byClass *OutcomeRule
	for i, r := range c.Outcomes {
		switch {
		case r.Status == exact:
			return r, true
		case r.Status == class && status >= 200 && status <= 599 && byClass == nil:
			byClass = &c.Outcomes[i]
		}
	}
	if byClass != nil {
		return *byClass, true
	}
	return OutcomeRule{}, false
}

// Classify maps a create response's status to an outcome: an exact row
// beats a class row, and an unmapped status is Unknown (the safe default,
// which covers every 5xx and 2xx the contract does not mention).
func (c *Contract) Classify(status int) Outcome {
	if r, ok := c.rule(status); ok {
		return r.Outcome
	}
	return Unknown
}

// Cites returns the documentation URL of the row Classify used for status,
// or "" when the row cites none or no row applies. It belongs in evidence.
func (c *Contract) Cites(status int) string {
	r, _ := c.rule(status)
	return r.Documentation
}

// replay reports class A: a documented key, a retention window and a
// documented rejection of changed payloads under the same key.
func (c *Contract) replay() bool {
	i := c.Idempotency
	return i != nil && i.Retention > 0 && i.Mismatch == MismatchRejected
}

// HasLookup reports class B: the target can be asked for an operation by
// settle's own reference alone, which is all settle has after a timeout.
func (c *Contract) HasLookup() bool { return c.Lookup != nil && !c.Lookup.NeedsRemoteRef() }

// HasConditional reports class C.
func (c *Contract) HasConditional() bool { return c.ConditionalUpdate != nil }

// Classes returns the target's capability classes in order; ClassD alone
// when it has none of A, B and C.
func (c *Contract) Classes() []Class {
	var cs []Class
	if c.replay() {
		cs = append(cs, ClassA)
	}
	if c.HasLookup() {
		cs = append(cs, ClassB)
	}
	if c.HasConditional() {
		cs = append(cs, ClassC)
	}
	if len(cs) == 0 {
		cs = append(cs, ClassD)
	}
	return cs
}

// RetryWindow is the same-key replay window to store with a new operation:
// the documented retention for a class A target, zero otherwise.
func (c *Contract) RetryWindow() time.Duration {
	if !c.replay() {
		return 0
	}
	return c.Idempotency.Retention
}

// LeaseMargin is what a claim lease adds to the target's timeout: time for
// the executor to record its verdict once the answer (or the timeout) came.
const LeaseMargin = 5 * time.Second

// Lease is how long the executor's claim of one of the target's operations
// holds it: the timeout plus LeaseMargin. A send cut off by a crash becomes
// UNKNOWN, and can be replayed, soon after its answer could last have come.
func (c *Contract) Lease() time.Duration { return c.Timeout + LeaseMargin }

// CheckReplayRoom reports an error when a class A target's retention leaves
// no time for a same-key replay after a crash: a send cut off by a crash is
// UNKNOWN only once its claim lease expires, and a replay must then leave
// the timeout and the replay margin before the window ends.
func (c *Contract) CheckReplayRoom() error {
	if !c.replay() {
		return nil
	}
	need := c.Lease() + c.Timeout + c.ReplayMargin()
	if need < c.Idempotency.Retention {
		return nil
	}
	return fmt.Errorf("target %s: claim lease %s + timeout %s + replay margin %s = %s leaves no time for a same-key replay inside its %s retention; shorten timeout or idempotency.replay_margin, or set retention to 0 to do without replays",
		c.Name, c.Lease(), c.Timeout, c.ReplayMargin(), need, c.Idempotency.Retention)
}

// ReplayMargin is the contract's replay margin (see Idempotency), or
// DefaultReplayMargin.
func (c *Contract) ReplayMargin() time.Duration {
	if c.Idempotency == nil || c.Idempotency.ReplayMargin <= 0 {
		return DefaultReplayMargin
	}
	return c.Idempotency.ReplayMargin
}

// ReplayBy is the last moment a same-key replay may be sent for a window
// ending at windowEnd: the replay may reach the target as late as the
// client's timeout after it was sent, and the replay margin covers the
// clocks' disagreement and the target's queues. A replay sent later could
// land after the target forgot the key and be executed as a new request.
func (c *Contract) ReplayBy(windowEnd time.Time) time.Time {
	return windowEnd.Add(-c.Timeout - c.ReplayMargin())
}

// CanReplay reports whether a same-key replay with the identical payload is
// safe at now, given the operation's window end (its first claim +
// RetryWindow): the target is class A and now is before ReplayBy. Measuring
// the window from the claim, which precedes the send, rather than from the
// target's receipt ends it early, which is the safe side.
func (c *Contract) CanReplay(now, windowEnd time.Time) bool {
	return c.replay() && now.Before(c.ReplayBy(windowEnd))
}

// CreateURL returns the method and absolute URL of the create call.
func (c *Contract) CreateURL() (method, u string) {
	return c.Create.Method, c.BaseURL + c.Create.Path
}

// pathEscape also escapes a value of "." or "..", which PathEscape leaves
// alone and a server or proxy would read as a step up the path.
func pathEscape(s string) string {
	if s == "." || s == ".." {
		return strings.ReplaceAll(s, ".", "%2E")
	}
	return url.PathEscape(s)
}

// WebhookSecret reads the webhook secret from the environment variable the
// contract names, through getenv (os.Getenv in production). The error names
// the variable, never a value.
func (c *Contract) WebhookSecret(getenv func(string) string) ([]byte, error) {
	if c.Webhook == nil {
		return nil, fmt.Errorf("target %s: no webhook in its contract", c.Name)
	}
	if getenv == nil {
		return nil, errors.New("target: WebhookSecret needs a getenv function")
	}
	v := getenv(c.Webhook.SecretEnv)
	if strings.TrimSpace(v) == "" {
		return nil, fmt.Errorf("target %s: webhook secret environment variable %s is not set", c.Name, c.Webhook.SecretEnv)
	}
	return []byte(v), nil
}

// String names the target, its classes and its owner. A contract never
// holds secret values, so nothing here can leak one.
func (c *Contract) String() string {
	cs := make([]string, 0, 4)
	for _, k := range c.Classes() {
		cs = append(cs, string(k))
	}
	return fmt.Sprintf("target %s (class %s; owner %s)", c.Name, strings.Join(cs, ","), c.Owner.Team)
}
