package ledger

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Callback is a tenant's notification endpoint. settle POSTs a signed
// notification to URL when one of the tenant's operations reaches a state
// that CallbackState reports.
type Callback struct {
	Tenant string
	URL    string
	// Secret is the HMAC-SHA256 key of the Settle-Signature header: the
	// text printed once by `settle callback set`, as bytes. It is stored in
	// the clear because settle must sign with it; it is never shown again.
	Secret    []byte
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Notification is one queued callback delivery: the news that an operation
// reached State. It is written in the same transaction as the transition,
// so a committed final state always has its notification, and it is retried
// until the tenant's endpoint acknowledges it with a 2xx.
type Notification struct {
	ID            int64 // also sent as Settle-Event-Id, for idempotent receivers
	Tenant        string
	OperationID   string
	State         State     // the state reached, not necessarily the current one
	Fence         int64     // the operation's fence at that transition
	Attempts      int       // deliveries started, counted when claimed
	CreatedAt     time.Time // when the state was reached
	NextAttemptAt time.Time
	DeliveredAt   *time.Time // set once acknowledged
	LastStatus    int        // HTTP status of the last attempt; 0 when none came back
	LastError     string     // short, payload-free reason of the last failure
	GaveUpAt      *time.Time // set when the notifier stopped retrying (GiveUpNotification)
}

// GivenUp is a tenant's notifications that the notifier stopped retrying:
// how many, and the latest few.
type GivenUp struct {
	Count  int
	Latest []Notification // latest given up first
}

// CallbackStore keeps tenants' callback endpoints and the durable queue of
// notifications. Both stores implement it; the queue is filled by Record and
// RecordBatch themselves, in the transaction that applies the transition.
type CallbackStore interface {
	// SetCallback creates or replaces the tenant's endpoint and signing
	// secret, and records the callback.set action by the context's actor.
	// Notifications still pending go to the new endpoint, signed with the
	// new secret. EInvalid for a bad tenant, URL or secret, or no actor.
	SetCallback(ctx context.Context, tenant, url string, secret []byte, now time.Time) error
	// RemoveCallback deletes the tenant's endpoint and discards its
	// undelivered notifications (the tenant asked not to be called), and
	// records the callback.remove action by the context's actor; ENotFound
	// when none is configured, EInvalid without an actor.
	RemoveCallback(ctx context.Context, tenant string) error
	// GetCallback returns the tenant's endpoint, or ENotFound.
	GetCallback(ctx context.Context, tenant string) (Callback, error)

	// ClaimNotifications returns up to n undelivered notifications that are
	// due, fairly across tenants, and pushes each one's next attempt lease
	// into the future, so that notifiers in other replicas skip it while
	// this one delivers. A notifier that dies simply lets it fall due again.
	// The skipTenants' notifications are left alone, due and untouched: the
	// notifier names the tenants whose endpoint has all its deliveries in
	// progress, so a hung endpoint's backlog waits for a free slot instead
	// of a worker.
	ClaimNotifications(ctx context.Context, n int, lease time.Duration, skipTenants ...string) ([]Notification, error)
	// MarkDelivered records the acknowledgement of a notification; it is
	// never claimed again. Marking twice keeps the first time. ENotFound
	// for an unknown id.
	MarkDelivered(ctx context.Context, id int64, status int, now time.Time) error
	// MarkFailed records a failed attempt and when to try again. It does
	// nothing to a notification already delivered. ENotFound for an
	// unknown id.
	MarkFailed(ctx context.Context, id int64, status int, errText string, next time.Time) error
	// GiveUpNotification records a last failed attempt and stops the
	// retries: the notification stays undelivered, is never claimed again
	// and is listed by GivenUpNotifications until RetryGivenUp. It does
	// nothing to a notification already delivered. ENotFound for an
	// unknown id.
	GiveUpNotification(ctx context.Context, id int64, status int, errText string, now time.Time) error
	// GivenUpNotifications counts the tenant's given-up notifications and
	// returns the latest limit of them.
	GivenUpNotifications(ctx context.Context, tenant string, limit int) (GivenUp, error)
	// RetryGivenUp makes the tenant's given-up notifications due at now
	// with their attempts counted from zero again, returns how many, and
	// records the callback.retry action by the context's actor (EInvalid
	// without one, nothing changed).
	RetryGivenUp(ctx context.Context, tenant string, now time.Time) (int, error)
	// Notifications returns the notifications of one operation, oldest
	// first, for the operation's timeline and for tests.
	Notifications(ctx context.Context, tenant, operationID string) ([]Notification, error)
	// CallbackDelivery returns how the tenant's endpoint has been
	// answering; ENotFound when it has none.
	CallbackDelivery(ctx context.Context, tenant string) (CallbackDelivery, error)
}

// CallbackState reports whether reaching s notifies the tenant's callback:
// the two final states, and ESCALATED, which needs a person and may take
// long to resolve.
func CallbackState(s State) bool {
	return s == Succeeded || s == FailedTerminal || s == Escalated
}

// CallbackStates lists the states CallbackState accepts, for stores that
// filter in SQL.
func CallbackStates() []State { return []State{Succeeded, FailedTerminal, Escalated} }

// MaxCallbackError bounds a stored delivery error.
const MaxCallbackError = 500

// TrimCallbackError cuts a delivery error to at most MaxCallbackError bytes, on
// a character boundary, for MarkFailed.
func TrimCallbackError(s string) string {
	n := MaxCallbackError
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ValidateCallback checks what SetCallback stores: a valid tenant, an
// absolute http or https URL without user information (credentials in a
// URL end up in logs and proxies) or fragment, and a secret of at least 32
// bytes.
func ValidateCallback(tenant, rawURL string, secret []byte) error {
	if !ValidTenant(tenant) {
		return Errorf(EInvalid, "tenant must be 1-63 characters of a-z, 0-9, '.', '_' or '-'")
	}
	if err := ValidateCallbackURL(rawURL); err != nil {
		return err
	}
	if len(secret) < 32 {
		return Errorf(EInvalid, "callback secret must be at least 32 bytes")
	}
	return nil
}

// ValidateCallbackURL accepts an absolute http or https URL with a host, no
// user information and no fragment, of at most 2048 bytes, with no white
// space, control, non-ASCII or markup characters (they belong
// percent-encoded); EInvalid otherwise. The message never quotes the URL,
// which may carry a token. Entry points check CallbackPolicy.CheckURL,
// which calls it; Ledger.SetCallback calls it to keep the table clean.
func ValidateCallbackURL(rawURL string) error {
	if rawURL == "" || len(rawURL) > 2048 {
		return Errorf(EInvalid, "callback URL must be 1-2048 characters")
	}
	if strings.ContainsFunc(rawURL, urlUnsafe) {
		return Errorf(EInvalid, "callback URL must not contain spaces, control characters, non-ASCII or any of < > \" ' \\ { } | ^ ` (percent-encode them)")
	}
	u, err := url.Parse(rawURL)
	switch {
	case err != nil:
		return Errorf(EInvalid, "callback URL is not a valid URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return Errorf(EInvalid, "callback URL must be an absolute http:// or https:// URL")
	case u.Host == "" || u.Hostname() == "" || u.Opaque != "":
		return Errorf(EInvalid, "callback URL must name a host")
	case u.User != nil:
		return Errorf(EInvalid, "callback URL must not carry a user name or password")
	case strings.ContainsRune(rawURL, '#'):
		return Errorf(EInvalid, "callback URL must not have a #fragment")
	}
	return nil
}

// callbackSecretPrefix marks callback signing secrets so that secret
// scanners and people can recognise one.
const callbackSecretPrefix = "scs_"

// NewCallbackSecret returns a fresh signing secret: 32 random bytes, encoded
// as printable text. The text itself, as bytes, is the HMAC key, so a
// receiver uses exactly what `settle callback set` printed.
func NewCallbackSecret() (string, error) {
	var key [32]byte
	if _, err := rand.Read(key[:]); err != nil {
		return "", err
	}
	return callbackSecretPrefix + base64.RawURLEncoding.EncodeToString(key[:]), nil
}

// CallbackActionURL is how a callback.set or callback.remove action records
// the endpoint (its Reason): scheme, host and path only. The query is
// dropped (marked "?…"), since receivers put tokens there; the signing
// secret is never part of a URL.
func CallbackActionURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	s := u.Scheme + "://" + u.Host + u.EscapedPath()
	if u.RawQuery != "" {
		s += "?…"
	}
	if len(s) > maxActionReason {
		n := maxActionReason - len("…")
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		return s[:n] + "…"
	}
	return s
}

// CallbackDelivery is how a tenant's endpoint has been answering, for its
// administrators: the last attempt, the last success and the failed
// attempts since, and what waits to be delivered. Setting an endpoint
// starts it afresh.
type CallbackDelivery struct {
	LastAttemptAt        *time.Time // nil: never tried since the endpoint was set
	LastStatus           int        // HTTP status of the last attempt; 0 when none came back
	LastError            string     // short, payload-free reason the last attempt failed; "" when it succeeded
	LastSuccessAt        *time.Time
	FailuresSinceSuccess int // failed attempts since LastSuccessAt (or since the endpoint was set)
	// Pending counts the notifications waiting for delivery (not given
	// up), up to MaxPendingCounted.
	Pending int
}

// LastAnswer says how the endpoint answered the last attempt:
// "answered 204: delivered", "answered 503: not delivered", "no answer
// (…)"; "" before any attempt. The console and the CLI say it so.
func (d CallbackDelivery) LastAnswer() string {
	switch {
	case d.LastAttemptAt == nil:
		return ""
	case d.LastError == "":
		return "answered " + strconv.Itoa(d.LastStatus) + ": delivered"
	case d.LastStatus == 0:
		return "no answer (" + PlainText(d.LastError, MaxCallbackError) + ")"
	}
	return "answered " + strconv.Itoa(d.LastStatus) + ": not delivered"
}

// MaxPendingCounted bounds CallbackDelivery.Pending: an endpoint down for
// long may have a large backlog, and its exact size is not worth a scan.
const MaxPendingCounted = 10000

// CallbackDelivery returns the tenant's delivery status; ENotFound when it
// has no endpoint.
func (l *Ledger) CallbackDelivery(ctx context.Context, tenant string) (CallbackDelivery, error) {
	d, found, err := l.d.CallbackDeliveryGet(ctx, tenant, MaxPendingCounted)
	if err != nil {
		return d, fmt.Errorf("callback delivery status: %w", err)
	}
	if !found {
		return d, Errorf(ENotFound, "no callback configured for tenant %s", tenant)
	}
	return d, nil
}

// NoteCallbackAttempt records an attempt of a client notification, already
// marked delivered, failed or given up in the outbox, in its tenant's
// delivery status. The outbox row is the truth about the notification; the
// status is what the admin reads, written right after it (a crash between
// the two leaves the status one attempt behind, until the next).
func (l *Ledger) NoteCallbackAttempt(ctx context.Context, a CallbackAttempt) error {
	a.At = a.At.UTC().Truncate(time.Microsecond)
	if err := l.d.CallbackAttemptRecord(ctx, a); err != nil {
		return fmt.Errorf("note callback attempt: %w", err)
	}
	return nil
}
