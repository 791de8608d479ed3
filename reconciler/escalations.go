package reconciler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"settle/deliver"
	"settle/ledger"
	"settle/target"
)

// Escalation notice events: the "event" of a settle-format body.
const (
	EscalationEvent = "operation.escalated"
	DigestEvent     = "escalations.digest"
)

// NotifySecrets gives the signing key of a target's owner notifications
// (*target.Secrets is one); nil means none is configured.
type NotifySecrets interface {
	NotifySecret(target string) []byte
}

// EscalationNotifier tells the team that owns a target (its contract's
// owner.notify block) of every escalation of an operation on it. The store
// queues one notice in the transaction that moves an operation to
// ESCALATED, whatever the path (deadline, mismatch, NotSent, inconclusive
// replay…); the notifier claims due notices, POSTs each to the owner's
// endpoint signed like client callbacks (Settle-Signature: t=…,v1=…
// HMAC-SHA256), and retries with jittered exponential backoff until a 2xx
// or, like a client callback, gives up after MaxAttempts: the notice is
// then kept, given up, for `settle escalation notices` until its --retry.
// A notice of a target without owner.notify is marked done unsent. Claims
// divide the work, so it is safe to run in every replica; delivery is at
// least once and receivers deduplicate by Settle-Event-Id.
type EscalationNotifier struct {
	Store     ledger.Store
	Notices   ledger.EscalationStore
	Contracts Contracts
	Secrets   NotifySecrets
	// ConsoleURL is the console's base URL (no trailing slash), for the
	// link in each notice; "" leaves the link out.
	ConsoleURL string
	Log        *slog.Logger
	Now        func() time.Time // nil: time.Now
	// Client posts the notices; nil means a 10s timeout. Redirects are
	// never followed.
	Client *http.Client

	Batch      int           // notices claimed at once (default 20)
	Tick       time.Duration // pause when nothing is due (default 1s)
	Lease      time.Duration // claim lease; a POST is cut off at half of it (default 60s)
	MinBackoff time.Duration // delay after the first failure (default 1s)
	MaxBackoff time.Duration // longest delay between attempts (default 10m)
	// MaxAttempts bounds the attempts of one notice (default
	// DefaultCallbackMaxAttempts, the bound of client callbacks); the last
	// failed one gives it up.
	MaxAttempts int
	Metrics     prometheus.Registerer // nil: not exported

	once   sync.Once
	client *http.Client
	gaveUp prometheus.Counter
}

func (n *EscalationNotifier) init() {
	def(&n.Batch, 20)
	def(&n.Tick, time.Second)
	def(&n.Lease, 60*time.Second)
	def(&n.MinBackoff, time.Second)
	def(&n.MaxBackoff, 10*time.Minute)
	def(&n.MaxAttempts, DefaultCallbackMaxAttempts)
	if n.Now == nil {
		n.Now = time.Now
	}
	n.client = deliver.NoRedirects(n.Client)
	n.gaveUp = prometheus.NewCounter(prometheus.CounterOpts{Name: "settle_escalation_notices_given_up_total",
		Help: "Escalation notices to owning teams given up after the bound on attempts."})
	if n.Metrics != nil {
		n.Metrics.MustRegister(n.gaveUp)
	}
}

// Run delivers notices until ctx is cancelled, one at a time: escalations
// are rare, and a slow endpoint should not be hit in parallel.
func (n *EscalationNotifier) Run(ctx context.Context) error {
	n.once.Do(n.init)
	p := newPause(n.Tick)
	for ctx.Err() == nil {
		window := openClaimWindow(n.Lease)
		batch, err := n.Notices.ClaimEscalationNotices(ctx, n.Batch, n.Lease)
		if err != nil {
			if ctx.Err() == nil {
				n.Log.Error("claim failed", "err", err)
			}
			p.fail(ctx)
			continue
		}
		p.ok()
		for _, nt := range batch {
			if ctx.Err() != nil {
				break // the rest fall due again when their lease runs out
			}
			n.deliver(ctx, window, nt)
		}
		if len(batch) < n.Batch {
			p.idle(ctx)
		}
	}
	return nil
}

// errNoEndpoint marks a notice whose target's owner has no notify block.
var errNoEndpoint = errors.New("no owner notify endpoint")

// deliver makes one attempt and records its result; like callbacks, a POST
// in progress is bounded by the claim's window, not by shutdown.
func (n *EscalationNotifier) deliver(ctx context.Context, window claimWindow, nt ledger.Notification) {
	pctx, cancelPost, ok := window.post(ctx)
	if !ok {
		return // due again when its lease runs out
	}
	status, err := n.post(pctx, nt)
	cancelPost()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	log := n.Log.With("notice_id", nt.ID, "tenant", nt.Tenant, "operation_id", nt.OperationID, "attempt", nt.Attempts)
	if err == nil || errors.Is(err, errNoEndpoint) {
		if err := n.Notices.MarkEscalationNoticeDelivered(rctx, nt.ID, status, n.Now()); err != nil {
			log.Error("delivered, but not recorded; it will be delivered again", "err", err)
			return
		}
		if err != nil {
			log.Info("escalation not notified: the target's owner has no notify endpoint")
			return
		}
		log.Info("escalation notified", "status", status)
		return
	}
	marks := failureMarks{failed: n.Notices.MarkEscalationNoticeFailed, giveUp: n.Notices.GiveUpEscalationNotice}
	if recordFailure(rctx, log, marks, nt, status, err, n.MaxAttempts, n.Now(),
		retryDelay(n.MinBackoff, n.MaxBackoff, nt.Attempts), "escalation notice", "settle escalation notices --retry") {
		n.gaveUp.Inc()
	}
}

// post sends one notice; err is nil only for a 2xx.
func (n *EscalationNotifier) post(ctx context.Context, nt ledger.Notification) (int, error) {
	op, err := n.Store.Get(ctx, nt.Tenant, nt.OperationID)
	if err != nil {
		return 0, fmt.Errorf("load operation: %w", err)
	}
	c, ok := n.Contracts.Get(op.Target)
	if !ok || c.Owner.Notify == nil {
		return 0, errNoEndpoint
	}
	now := n.Now()
	f := EscalationFacts{Target: op.Target, Team: c.Owner.Team, Contact: c.Owner.EscalationContact,
		Tenant: op.Tenant, OperationID: op.ID, OperationType: op.Type, IntentRef: op.IntentRef,
		Reason: op.Reason, EscalatedAt: nt.CreatedAt.UTC(), Deadline: op.Deadline, StateNow: string(op.State),
		ConsoleURL: n.consoleLink(op)}
	if f.Deadline != nil {
		d := f.Deadline.UTC()
		f.Deadline = &d
	}
	if op.Fence != nt.Fence || op.State != ledger.Escalated {
		// Resolved (or re-escalated) since: the reason on the row is no
		// longer this escalation's.
		f.Reason = ""
	}
	var body any = escalationMessage{Event: EscalationEvent, Escalation: f, SentAt: now.UTC()}
	if c.Owner.Notify.Format == target.NotifySlack {
		body = f.slack()
	}
	return deliver.Post(ctx, n.client, deliver.Message{Agent: "settle-escalations/1", URL: c.Owner.Notify.URL,
		Secret: n.secret(op.Target), EventID: strconv.FormatInt(nt.ID, 10), Now: now, Body: body})
}

func (n *EscalationNotifier) secret(target string) []byte {
	if n.Secrets == nil {
		return nil
	}
	return n.Secrets.NotifySecret(target)
}

func (n *EscalationNotifier) consoleLink(op ledger.Operation) string {
	if n.ConsoleURL == "" {
		return ""
	}
	return strings.TrimRight(n.ConsoleURL, "/") + "/escalations/" + url.PathEscape(op.Tenant) + "/" + url.PathEscape(op.ID)
}

// EscalationFacts is what a notice says about one escalation: never the
// payload, nor anything the target answered.
type EscalationFacts struct {
	Target        string     `json:"target"`
	Team          string     `json:"team"`
	Contact       string     `json:"escalation_contact"`
	Tenant        string     `json:"tenant"`
	OperationID   string     `json:"operation_id"`
	OperationType string     `json:"operation_type"`
	IntentRef     string     `json:"intent_ref"`
	Reason        string     `json:"reason,omitempty"` // "" once the operation has left this escalation
	EscalatedAt   time.Time  `json:"escalated_at"`
	Deadline      *time.Time `json:"deadline,omitempty"`
	StateNow      string     `json:"state_now"` // the operation's state when the notice was sent
	ConsoleURL    string     `json:"console_url,omitempty"`
}

// escalationMessage is the settle-format body of a notice.
type escalationMessage struct {
	Event      string          `json:"event"`
	Escalation EscalationFacts `json:"escalation"`
	SentAt     time.Time       `json:"sent_at"`
}

// slackBody is a Slack incoming-webhook message.
type slackBody struct {
	Text   string       `json:"text"`
	Blocks []slackBlock `json:"blocks"`
}

type slackBlock struct {
	Type string     `json:"type"`
	Text *slackText `json:"text,omitempty"`
}

type slackText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func section(md string) slackBlock {
	return slackBlock{Type: "section", Text: &slackText{Type: "mrkdwn", Text: md}}
}

// slackEscape escapes what Slack's mrkdwn treats as markup.
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func (f EscalationFacts) slack() slackBody {
	text := fmt.Sprintf("Escalated: %s operation %s (tenant %s) needs a person", f.Target, f.OperationID, f.Tenant)
	var b strings.Builder
	fmt.Fprintf(&b, "*Target:* %s\n*Tenant:* %s\n*Operation:* `%s` (%s)\n*Intent reference:* %s\n",
		slackEscape(f.Target), slackEscape(f.Tenant), slackEscape(f.OperationID), slackEscape(f.OperationType),
		slackEscape(f.IntentRef))
	if f.Reason != "" {
		fmt.Fprintf(&b, "*Reason:* %s\n", slackEscape(f.Reason))
	}
	fmt.Fprintf(&b, "*Escalated at:* %s\n", f.EscalatedAt.Format(time.RFC3339))
	if f.Deadline != nil {
		fmt.Fprintf(&b, "*Deadline:* %s\n", f.Deadline.Format(time.RFC3339))
	}
	fmt.Fprintf(&b, "*State now:* %s", f.StateNow)
	blocks := []slackBlock{section("*" + slackEscape(text) + "*"), section(b.String())}
	if f.ConsoleURL != "" {
		blocks = append(blocks, section("<"+f.ConsoleURL+"|Open in the settle console>"))
	}
	return slackBody{Text: text, Blocks: blocks}
}
