package reconciler

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"settle/ledger"
	"settle/target"
)

// ActorWebhook marks transitions made on the evidence of an inbound event.
const ActorWebhook = "webhook"

// Inbox processes stored webhook deliveries as evidence, never authority
// (paper, "Inbound signals are evidence, not authority"): an event moves an
// operation only when its object carries the operation's reference and
// tenant and every contract match field agrees; anything unattributable or
// contradicting a final state goes to quarantine for explicit review.
type Inbox struct {
	Store     ledger.Store
	Inbox     ledger.InboxStore
	Contracts Contracts
	Log       *slog.Logger
	Metrics   prometheus.Registerer // nil: not exported
	Now       func() time.Time

	Batch int           // deliveries claimed at once (default 50)
	Tick  time.Duration // pause when idle (default 250ms)
	Lease time.Duration // delivery and operation lease (default 30s)
	Defer time.Duration // wait before retrying a delivery about an operation in flight (default 2s)
	// MaxAttempts bounds the failed attempts at processing one delivery
	// (default 10); past it the delivery is quarantined with its last
	// error. Failed attempts are retried after Defer, doubled for each
	// failure, at most maxRetryWait.
	MaxAttempts int

	quarantined *prometheus.CounterVec
	processed   *prometheus.CounterVec
}

func (in *Inbox) init() {
	def(&in.Batch, 50)
	def(&in.Tick, 250*time.Millisecond)
	def(&in.Lease, 30*time.Second)
	def(&in.Defer, 2*time.Second)
	def(&in.MaxAttempts, 10)
	if in.Now == nil {
		in.Now = time.Now
	}
	if in.quarantined != nil {
		return
	}
	in.quarantined = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "settle_quarantined_events_total",
		Help: "Inbound events put in quarantine for review, by target.",
	}, []string{"target"})
	in.processed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "settle_webhook_events_processed_total",
		Help: "Inbound events processed, by target and outcome.",
	}, []string{"target", "outcome"})
	if in.Metrics != nil {
		in.Metrics.MustRegister(in.quarantined, in.processed)
	}
}

// Run processes deliveries until ctx is cancelled.
func (in *Inbox) Run(ctx context.Context) error {
	in.init()
	p := newPause(in.Tick)
	for ctx.Err() == nil {
		ds, err := in.Inbox.ClaimDeliveries(ctx, in.Batch, in.Lease)
		if err != nil {
			if ctx.Err() == nil {
				in.Log.Error("claim failed", "err", err)
			}
			p.fail(ctx)
			continue
		}
		p.ok()
		for _, d := range ds {
			if d.Failures > in.MaxAttempts {
				// The last attempt never reported back: the processor died
				// or hung on this delivery.
				err := in.giveUp(ctx, d, fmt.Sprintf("processing did not finish in %d attempts (the processor stopped or hung on it); last error: %s",
					in.MaxAttempts, or(d.LastError, "none recorded")))
				if err != nil && ctx.Err() == nil {
					in.Log.Error("quarantine failed; the delivery is retried", "delivery_id", d.ID, "err", err)
				}
				continue
			}
			if err := in.Process(ctx, d); err != nil && ctx.Err() == nil {
				in.failed(ctx, d, err)
			}
		}
		if len(ds) < in.Batch {
			p.idle(ctx)
		}
	}
	return nil
}

// Process handles one claimed delivery to the end: finished with an
// outcome, quarantined, or deferred. An error leaves it to its lease.
func (in *Inbox) Process(ctx context.Context, d ledger.Delivery) error {
	in.init()
	c, ok := in.Contracts.Get(d.Target)
	if !ok || c.Webhook == nil {
		return in.quarantine(ctx, d, ledger.QuarantineItem{Reason: "the target is no longer configured for webhooks"})
	}
	eventID, object := c.EventParts(d.Body)
	ref, tenant := c.References(object)
	remoteID, _ := c.RemoteID(object)
	item := ledger.QuarantineItem{EventID: eventID, Reference: ref, Tenant: tenant, RemoteID: remoteID}
	if object == nil {
		item.Reason = "the event carries no object"
		return in.quarantine(ctx, d, item)
	}
	if bad := notPlain(item); bad != "" {
		// Matching would put these values in queries and the event log,
		// where a database refuses some (PostgreSQL: NUL in text) and a
		// reader could be misled by others; they are no settle reference.
		item.Reason = "the event's " + bad + " is not plain text (a NUL or other control character, invalid UTF-8, or over " +
			fmt.Sprint(maxEventField) + " bytes); quarantined unmatched, shown escaped"
		return in.quarantine(ctx, d, item)
	}
	ev, err := MatchEvidence(ctx, in.Store, c, object)
	if err != nil {
		return err
	}
	if ev.Match == Unmatched {
		item.Reason = ev.Why
		return in.quarantine(ctx, d, item)
	}
	op := ev.Operation
	item.OperationID, item.OpTenant = op.ID, op.Tenant
	evidence := map[string]any{"via": "webhook", "event_id": eventID, "delivery_id": d.ID, "remote_id": remoteID}
	status, _ := c.ObjectStatus(object)

	switch op.State {
	case ledger.Prepared:
		item.Reason = "evidence of a remote object for an operation settle never sent"
		return in.quarantine(ctx, d, item)
	case ledger.InFlight:
		// The sender holds the fence and will record soon; look again then.
		return in.Inbox.DeferDelivery(ctx, d.ID, in.Now().Add(in.Defer), "operation in flight; retried")
	case ledger.Unknown:
		return in.resolve(ctx, d, c, op, ev, status, evidence)
	case ledger.Succeeded:
		if ev.Match == Matched && remoteID == op.RemoteRef {
			return in.finish(ctx, d, "consistent with SUCCEEDED")
		}
		item.Reason = "contradicts a SUCCEEDED operation (another or a mismatched remote object): possible duplicate"
	case ledger.FailedTerminal:
		// A failure settle recorded with the object it created (Stripe's
		// declined PaymentIntent) and an event showing that very object
		// failed say the same thing: consistent evidence, not a conflict.
		if ev.Match == Matched && op.RemoteRef != "" && remoteID == op.RemoteRef && status.Outcome == target.ObjectFailed {
			return in.finish(ctx, d, "consistent with FAILED_TERMINAL")
		}
		item.Reason = "contradicts a FAILED_TERMINAL operation: the target reports an object for it"
	case ledger.Escalated:
		item.Reason = "evidence about an operation under review; attach it to the review"
	}
	in.Log.Warn("event contradicts or concerns a settled operation", "target", d.Target,
		"operation_id", op.ID, "tenant", op.Tenant, "state", op.State)
	return in.quarantine(ctx, d, item)
}

// resolve records the evidence against an UNKNOWN operation under a fresh
// fence, exactly as the reconciler would.
func (in *Inbox) resolve(ctx context.Context, d ledger.Delivery, c *target.Contract, op ledger.Operation,
	ev Evidence, status target.ObjectState, evidence map[string]any) error {
	held, err := in.Inbox.LeaseOperation(ctx, op.Tenant, op.ID, in.Lease)
	if ledger.ErrorCode(err) == ledger.EStaleFence {
		return in.Inbox.DeferDelivery(ctx, d.ID, in.Now().Add(in.Defer), "operation held by a reconciler; retried")
	}
	if err != nil {
		return err
	}
	v := verdict{to: ledger.Succeeded, remoteRef: evidence["remote_id"].(string), reason: "confirmed by a verified webhook event", evidence: evidence}
	switch {
	case ev.Match == Mismatched:
		mismatchEvidence(evidence, ev.Mismatched)
		v = verdict{to: ledger.Escalated, remoteRef: v.remoteRef, evidence: evidence,
			reason: "a webhook event's object does not match the approved payload"}
	case status.Outcome == target.ObjectFailed && v.remoteRef != "":
		// An event is evidence, not authority: the reconciler confirms a
		// failure by its own lookup before anything becomes final.
		v = verdict{to: ledger.Unknown, evidence: evidence,
			reason: fmt.Sprintf("a webhook event shows the object with status %q, documented as failed; the reconciler confirms it", status.Status)}
	case status.Outcome != target.ObjectSucceeded || v.remoteRef == "":
		v = verdict{to: ledger.Unknown, evidence: evidence, reason: "a webhook event shows the object, not yet complete"}
	}
	out := v.outcome(held, ledger.Unknown, ActorWebhook)
	if out.To == ledger.Unknown {
		now := in.Now()
		out.NextAt = &now // hand it back to the reconciler at once
	}
	if _, err := in.Store.Record(ctx, out); err != nil {
		return err
	}
	in.Log.Info("evidence recorded", "target", d.Target, "operation_id", op.ID, "tenant", op.Tenant, "state", out.To)
	return in.finish(ctx, d, fmt.Sprintf("operation %s → %s", op.ID, out.To))
}

func (in *Inbox) finish(ctx context.Context, d ledger.Delivery, outcome string) error {
	in.processed.WithLabelValues(d.Target, "finished").Inc()
	return in.Inbox.FinishDelivery(ctx, d.ID, outcome)
}

func (in *Inbox) quarantine(ctx context.Context, d ledger.Delivery, item ledger.QuarantineItem) error {
	item.Target, item.DeliveryID = d.Target, d.ID
	// What a sender wrote is stored and shown escaped unless plain, so that
	// the store can always hold it and a reviewer can always read it.
	for _, f := range []*string{&item.EventID, &item.Reference, &item.Tenant, &item.RemoteID} {
		*f = ledger.PlainText(*f, maxEventField)
	}
	item.Reason = ledger.PlainText(item.Reason, 1000)
	id, err := in.Inbox.Quarantine(ctx, item)
	if err != nil {
		return err
	}
	in.quarantined.WithLabelValues(d.Target).Inc()
	in.processed.WithLabelValues(d.Target, "quarantined").Inc()
	// The alert: identifiers only, never the event body.
	in.Log.Warn("event quarantined for review", "quarantine_id", id, "target", d.Target,
		"reason", item.Reason, "event_id", item.EventID)
	return in.Inbox.FinishDelivery(ctx, d.ID, fmt.Sprintf("quarantined as %d: %s", id, item.Reason))
}

// maxEventField bounds an event's id, reference, tenant and remote id:
// settle's own are UUIDs and short names, providers' ids are short. It is
// the bound of ledger.CheckProviderText, the rule notPlain applies.
const maxEventField = ledger.MaxProviderText

// maxRetryWait bounds the wait before a failed delivery is tried again.
const maxRetryWait = 5 * time.Minute

// notPlain names the first of the event's identifying values that is not
// plain text, or "".
func notPlain(item ledger.QuarantineItem) string {
	for _, f := range []struct{ name, v string }{
		{"settle reference", item.Reference}, {"tenant", item.Tenant},
		{"event id", item.EventID}, {"remote object id", item.RemoteID},
	} {
		if f.v != "" && ledger.CheckProviderText(f.name, f.v) != nil {
			return f.name
		}
	}
	return ""
}

// failed handles an attempt that returned err. The claim has counted it
// already; past MaxAttempts the delivery is quarantined with err, else it
// is tried again after a backoff. When the store itself does not answer,
// nothing is written: the delivery is not at fault, and its lease hands
// it on.
func (in *Inbox) failed(ctx context.Context, d ledger.Delivery, err error) {
	in.processed.WithLabelValues(d.Target, "failed").Inc()
	if perr := in.Store.Ping(ctx); perr != nil {
		in.Log.Error("processing failed with the store unreachable; the delivery is retried after its lease",
			"delivery_id", d.ID, "err", err)
		return
	}
	if d.Failures >= in.MaxAttempts {
		reason := fmt.Sprintf("processing failed %d times; last error: %s", d.Failures, err)
		if qerr := in.giveUp(ctx, d, reason); qerr != nil && ctx.Err() == nil {
			in.Log.Error("quarantine failed; the delivery is retried", "delivery_id", d.ID, "err", qerr)
		}
		return
	}
	wait := min(in.Defer<<min(d.Failures-1, 20), maxRetryWait)
	in.Log.Warn("processing failed; the delivery is retried", "delivery_id", d.ID, "attempt", d.Failures,
		"max_attempts", in.MaxAttempts, "retry_in", wait, "err", err)
	if ferr := in.Inbox.FailDelivery(ctx, d.ID, in.Now().Add(wait), err.Error()); ferr != nil && ctx.Err() == nil {
		in.Log.Error("recording the failure failed; the delivery is retried after its lease", "delivery_id", d.ID, "err", ferr)
	}
}

// giveUp quarantines a delivery that processing cannot finish, with what
// the event claims to be, so that a reviewer can find its operation.
func (in *Inbox) giveUp(ctx context.Context, d ledger.Delivery, reason string) error {
	item := ledger.QuarantineItem{Reason: reason}
	if c, ok := in.Contracts.Get(d.Target); ok && c.Webhook != nil {
		var object []byte
		item.EventID, object = c.EventParts(d.Body)
		item.Reference, item.Tenant = c.References(object)
		item.RemoteID, _ = c.RemoteID(object)
	}
	in.Log.Warn("delivery quarantined after failed attempts", "delivery_id", d.ID, "target", d.Target,
		"attempts", d.Failures)
	return in.quarantine(ctx, d, item)
}

func or(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}
