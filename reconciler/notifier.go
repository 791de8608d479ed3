package reconciler

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/prometheus/client_golang/prometheus"

	"settle/deliver"
	"settle/ledger"
)

// Callback request headers. The signature is target.Sign's scheme, the one
// settle also verifies on inbound webhooks.
const (
	CallbackSignatureHeader = deliver.SignatureHeader
	CallbackEventIDHeader   = deliver.EventIDHeader // the notification id; the same on every retry
)

// CallbackEvent is the "event" of every callback body.
const CallbackEvent = "operation.settled"

// Notifier delivers client callbacks. Record queues a notification in the
// transaction that moves an operation to SUCCEEDED, FAILED_TERMINAL or
// ESCALATED; the notifier claims due notifications, POSTs each to its
// tenant's endpoint, signed, and retries with jittered exponential backoff
// until the endpoint answers 2xx, or gives up after MaxAttempts: the
// notification is then kept, given up, for `settle callback show` and the
// console, until `settle callback retry` queues it again. Delivery is at least once: a
// receiver deduplicates by Settle-Event-Id. It is safe to run in every
// replica.
type Notifier struct {
	Store     ledger.Store
	Callbacks ledger.CallbackStore
	Contracts Contracts // optional; names the owning team in an ESCALATED status
	Log       *slog.Logger
	Metrics   prometheus.Registerer // nil: not exported
	// TenantLabels labels the counters by tenant (settle serve
	// --metrics-tenant-labels); off, they count all tenants together.
	TenantLabels bool
	Now          func() time.Time // nil: time.Now; must agree with the store's clock
	// Client posts the notifications. Nil means a client with a 10s
	// timeout. Redirects are never followed, whatever the client says: the
	// tenant's configured URL is the only place a signed body goes. Its
	// transport (an *http.Transport, or the default one) is cloned to
	// connect only where Policy allows and never through a proxy, which
	// would hide the destination from that check.
	Client *http.Client
	// Policy is where callbacks may go (settle serve's --callbacks-allow-*
	// flags): it is checked on the URL before each attempt and on every
	// address connected to, after DNS resolution.
	Policy ledger.CallbackPolicy

	Batch      int           // notifications claimed at once (default 50)
	Workers    int           // concurrent deliveries (default 8)
	Tick       time.Duration // pause when nothing is due (default 500ms)
	Lease      time.Duration // claim lease; a POST is cut off at half of it (default 60s)
	MinBackoff time.Duration // delay after the first failure (default 1s)
	MaxBackoff time.Duration // longest delay between attempts (default 10m)
	// PerEndpoint bounds the deliveries in progress to one tenant's
	// endpoint (default DefaultCallbackConcurrency), so that an endpoint
	// that hangs holds only its own slots and the others' notifications go on.
	PerEndpoint int
	// MaxAttempts bounds the attempts of one notification (default
	// DefaultCallbackMaxAttempts); the last failed one gives it up.
	MaxAttempts int

	once                      sync.Once
	client                    *http.Client
	delivered, failed, gaveUp *prometheus.CounterVec
}

// DefaultCallbackMaxAttempts is the default bound on a notification's
// attempts. With the default backoff (1s doubling to 10m) the first ten
// take about 17 minutes and the rest come every 10 minutes, so 150 span
// about 23½ hours: an endpoint down for a day loses nothing but is not
// called for ever.
const DefaultCallbackMaxAttempts = 150

// DefaultCallbackConcurrency is the default bound on the deliveries in
// progress to one tenant's endpoint (Notifier.PerEndpoint).
const DefaultCallbackConcurrency = 2

func (n *Notifier) init() {
	def(&n.Batch, 50)
	def(&n.Workers, 8)
	def(&n.PerEndpoint, DefaultCallbackConcurrency)
	def(&n.Tick, 500*time.Millisecond)
	def(&n.Lease, 60*time.Second)
	def(&n.MinBackoff, time.Second)
	def(&n.MaxBackoff, 10*time.Minute)
	def(&n.MaxAttempts, DefaultCallbackMaxAttempts)
	if n.Now == nil {
		n.Now = time.Now
	}
	n.client = deliver.Guarded(n.Client, n.Policy)
	var labels []string
	if n.TenantLabels {
		labels = []string{"tenant"}
	}
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	n.delivered = counter("settle_callbacks_delivered_total", "Client callback notifications acknowledged with a 2xx (by tenant with tenant labels).")
	n.failed = counter("settle_callbacks_failed_total", "Client callback delivery attempts that failed (by tenant with tenant labels).")
	n.gaveUp = counter("settle_callbacks_given_up_total", "Client callback notifications given up after the bound on attempts (by tenant with tenant labels).")
	if n.Metrics != nil {
		n.Metrics.MustRegister(n.delivered, n.failed, n.gaveUp)
	}
}

// tenant is the counters' label values: the tenant, with tenant labels.
func (n *Notifier) tenant(t string) []string {
	if n.TenantLabels {
		return []string{t}
	}
	return nil
}

// Run delivers notifications until ctx is cancelled. Then it claims no more
// and lets deliveries in progress finish and be recorded (each is bounded by
// half the lease of its claim).
//
// There is no batch to wait for: the loop claims as many notifications as
// it has free workers, and passes over the tenants whose endpoint has
// PerEndpoint deliveries in progress, so an endpoint that hangs holds only
// its own slots: its due notifications stay due for another replica or a
// later round, and the other tenants' are delivered. A claim never returns
// more of one tenant than its endpoint has free slots (slots.room), so
// every claimed notification starts at once, inside its claim's window.
func (n *Notifier) Run(ctx context.Context) error {
	n.once.Do(n.init)
	var wg sync.WaitGroup
	defer wg.Wait()
	s := newSlots(n.Workers, n.PerEndpoint, func(string) int { return n.PerEndpoint })
	p := newPause(n.Tick)
	for ctx.Err() == nil {
		room, full := s.room()
		if room = min(room, n.Batch); room == 0 {
			s.wait(ctx)
			continue
		}
		window := openClaimWindow(n.Lease)
		batch, err := n.Callbacks.ClaimNotifications(ctx, room, n.Lease, full...)
		if err != nil {
			if ctx.Err() == nil {
				n.Log.Error("claim failed", "err", err)
			}
			p.fail(ctx)
			continue
		}
		p.ok()
		for _, nt := range batch {
			s.take(nt.Tenant)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer s.release(nt.Tenant)
				n.deliver(ctx, window, nt)
			}()
		}
		if len(batch) < room {
			p.idleOr(ctx, s.woken())
		}
	}
	return nil
}

// deliver makes one attempt and records its result. A delivery in progress
// is not cut off by shutdown but by the claim's window, so no other replica
// delivers the same notification while this one still waits for an answer;
// one left too little of the window is not started.
func (n *Notifier) deliver(ctx context.Context, window claimWindow, nt ledger.Notification) {
	pctx, cancelPost, ok := window.post(ctx)
	if !ok {
		return // due again when its lease runs out
	}
	status, err := n.post(pctx, nt)
	cancelPost()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	log := n.Log.With("callback_id", nt.ID, "tenant", nt.Tenant, "operation_id", nt.OperationID,
		"state", nt.State, "attempt", nt.Attempts)
	if err == nil {
		n.delivered.WithLabelValues(n.tenant(nt.Tenant)...).Inc()
		if err := n.Callbacks.MarkDelivered(rctx, nt.ID, status, n.Now()); err != nil {
			log.Error("delivered, but not recorded; it will be delivered again", "err", err)
			return
		}
		log.Info("delivered", "status", status)
		return
	}
	n.failed.WithLabelValues(n.tenant(nt.Tenant)...).Inc()
	marks := failureMarks{failed: n.Callbacks.MarkFailed, giveUp: n.Callbacks.GiveUpNotification}
	if recordFailure(rctx, log, marks, nt, status, err, n.MaxAttempts, n.Now(), n.backoff(nt.Attempts),
		"delivery", "settle callback retry") {
		n.gaveUp.WithLabelValues(n.tenant(nt.Tenant)...).Inc()
	}
}

// failureMarks is where a failed attempt is recorded: the callback and the
// escalation-notice outboxes alike.
type failureMarks struct {
	failed func(ctx context.Context, id int64, status int, errText string, next time.Time) error
	giveUp func(ctx context.Context, id int64, status int, errText string, now time.Time) error
}

// recordFailure records nt's failed attempt by the one rule client
// callbacks and escalation notices share: the attempt that reaches max is
// the last, and the delivery is given up (kept, visible, until retry — the
// command logged — queues it again); before that it is due again after
// delay. It reports whether it gave up; what is logged names what (a
// "delivery", an "escalation notice").
func recordFailure(ctx context.Context, log *slog.Logger, m failureMarks, nt ledger.Notification, status int, err error,
	max int, now time.Time, delay time.Duration, what, retry string) (gaveUp bool) {
	if nt.Attempts >= max {
		if gerr := m.giveUp(ctx, nt.ID, status, err.Error(), now); gerr != nil {
			log.Error("giving up not recorded; retried when the claim expires", "err", gerr)
			return false
		}
		log.Warn(what+" given up; `"+retry+"` queues it again", "status", status, "err", err, "max_attempts", max)
		return true
	}
	next := now.Add(delay)
	if ferr := m.failed(ctx, nt.ID, status, err.Error(), next); ferr != nil {
		log.Error("failure not recorded; retried when the claim expires", "err", ferr)
	}
	log.Warn(what+" failed", "status", status, "err", err, "next_attempt_at", next)
	return false
}

// backoff is the delay after the given number of attempts: MinBackoff
// doubling per attempt, jittered, never above MaxBackoff.
func (n *Notifier) backoff(attempts int) time.Duration {
	return retryDelay(n.MinBackoff, n.MaxBackoff, attempts)
}

// retryDelay is the delay after the given number of attempts: lo doubling
// per attempt, jittered, never above hi. The escalation notifier shares it.
func retryDelay(lo, hi time.Duration, attempts int) time.Duration {
	b := &backoff.ExponentialBackOff{InitialInterval: lo, RandomizationFactor: 0.25,
		Multiplier: 2, MaxInterval: hi}
	d := b.NextBackOff()
	for i := 1; i < min(attempts, 64); i++ { // past the cap the interval stays put
		d = b.NextBackOff()
	}
	return min(d, hi)
}

// post sends one notification and returns the endpoint's status; err is
// nil only for a 2xx. Errors never quote the URL, which may carry a token.
func (n *Notifier) post(ctx context.Context, nt ledger.Notification) (int, error) {
	op, err := n.Store.Get(ctx, nt.Tenant, nt.OperationID)
	if err != nil {
		return 0, fmt.Errorf("load operation: %w", err)
	}
	cb, err := n.Callbacks.GetCallback(ctx, nt.Tenant)
	if err != nil {
		return 0, fmt.Errorf("load callback: %w", err)
	}
	// URLs set before the policy existed, or under a looser one, are
	// checked again: http:// and literal internal addresses never go out.
	if err := n.Policy.CheckURL(cb.URL); err != nil {
		return 0, fmt.Errorf("refused by the callback policy: %s", ledger.ErrorMessage(err))
	}
	now := n.Now()
	return deliver.Post(ctx, n.client, deliver.Message{Agent: "settle-callbacks/1", URL: cb.URL, Secret: cb.Secret,
		EventID: strconv.FormatInt(nt.ID, 10), Now: now, Body: n.message(nt, op, now)})
}

// callbackMessage is the JSON body of a callback. It carries what the
// client API shows about the operation, never the payload.
type callbackMessage struct {
	Event     string            `json:"event"`
	Operation callbackOperation `json:"operation"`
	SentAt    time.Time         `json:"sent_at"`
}

type callbackOperation struct {
	OperationID   string `json:"operation_id"`
	Tenant        string `json:"tenant"`
	Target        string `json:"target"`
	OperationType string `json:"operation_type"`
	IntentRef     string `json:"intent_ref"`
	// State and Status are those the notification announces, which the
	// operation may since have left (ESCALATED, later resolved).
	State     string    `json:"state"`
	Status    string    `json:"status"`
	RemoteRef string    `json:"remote_ref,omitempty"` // only for SUCCEEDED
	UpdatedAt time.Time `json:"updated_at"`           // when State was reached
}

func (n *Notifier) message(nt ledger.Notification, op ledger.Operation, now time.Time) callbackMessage {
	var owner string
	if n.Contracts != nil {
		if c, ok := n.Contracts.Get(op.Target); ok {
			owner = c.Owner.Team
		}
	}
	m := callbackMessage{Event: CallbackEvent, SentAt: now.UTC(), Operation: callbackOperation{
		OperationID: op.ID, Tenant: op.Tenant, Target: op.Target, OperationType: op.Type,
		IntentRef: op.IntentRef, State: string(nt.State), Status: nt.State.Plain(owner),
		UpdatedAt: nt.CreatedAt.UTC(),
	}}
	if nt.State == ledger.Succeeded {
		m.Operation.RemoteRef = op.RemoteRef
	}
	return m
}
