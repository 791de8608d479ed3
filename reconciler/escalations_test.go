package reconciler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/reconciler"
	"settle/target"
	"settle/target/sim"
)

// teamSecrets is a NotifySecrets of one key for every target.
type teamSecrets []byte

func (s teamSecrets) NotifySecret(string) []byte { return s }

// countingNotices counts an escalation notifier's claim passes.
type countingNotices struct {
	ledger.EscalationStore
	claims atomic.Int64
}

func (c *countingNotices) ClaimEscalationNotices(ctx context.Context, n int, lease time.Duration) ([]ledger.Notification, error) {
	ns, err := c.EscalationStore.ClaimEscalationNotices(ctx, n, lease)
	if err == nil {
		c.claims.Add(1)
	}
	return ns, err
}

// notifyRig is a rig whose target's owner has a notify endpoint at rc.
func notifyRig(t *testing.T, h ledgertest.Harness, rc *cbReceiver, format string) *rig {
	return newRig(t, h, sim.Config{Class: "A"}, func(c *target.Contract) {
		c.Owner.Notify = &target.Notify{URL: rc.url(), SecretEnv: "TEAM_NOTIFY_SECRET", Format: format}
	})
}

func (r *rig) escalationNotifier(s ledger.Store, secret []byte, logs io.Writer) *reconciler.EscalationNotifier {
	log := r.log
	if logs != nil {
		log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return &reconciler.EscalationNotifier{Store: s, Notices: &countingNotices{EscalationStore: s.(ledger.EscalationStore)},
		Contracts: r.set, Secrets: teamSecrets(secret), ConsoleURL: "https://settle.example/console/", Log: log,
		Batch: 5, Tick: 20 * time.Millisecond, Lease: 10 * time.Second, // never expires under a loaded -race run: no test here waits for a lease
		MinBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond}
}

// escalate moves a fresh operation to ESCALATED, as the executor does on
// a NotSent verdict, and returns it.
func (r *rig) escalate(tenant, intent, reason string) ledger.Operation {
	r.t.Helper()
	op := r.create(tenant, intent, 7391426)
	claimed, err := r.store.Claim(r.ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute)
	if err != nil {
		r.t.Fatal(err)
	}
	got, err := r.store.Record(r.ctx, ledger.Outcome{Tenant: tenant, OperationID: op.ID, Fence: claimed.Fence,
		From: ledger.InFlight, To: ledger.Escalated, Reason: reason, Actor: ledger.ActorExecutor})
	if err != nil {
		r.t.Fatal(err)
	}
	return got
}

// quietNotices holds once each notifier has claimed three more times.
func quietNotices(nts ...*reconciler.EscalationNotifier) func() bool {
	from := make([]int64, len(nts))
	for i, nt := range nts {
		from[i] = nt.Notices.(*countingNotices).claims.Load()
	}
	return func() bool {
		for i, nt := range nts {
			if nt.Notices.(*countingNotices).claims.Load() < from[i]+3 {
				return false
			}
		}
		return true
	}
}

// An escalation is queued in its transaction, without any tenant
// callback, and reaches the owning team once, signed, with the facts and a
// console link and without the payload, even with two notifiers racing
// and the endpoint failing first with a 500.
func TestEscalationNotifier_OnceSignedAfterA500(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		rc := newCBReceiver(t)
		rc.set(func(rc *cbReceiver) { rc.fail = 1 })
		r := notifyRig(t, h, rc, target.NotifySettle)
		op := r.escalate("acme", "order-esc-1", "the target said the charge was not sent")
		notices, err := r.store.(ledger.EscalationStore).EscalationNotices(r.ctx, "acme", op.ID)
		if err != nil || len(notices) != 1 || notices[0].State != ledger.Escalated || notices[0].Fence != op.Fence {
			t.Fatalf("queued notices: %+v, %v", notices, err)
		}
		if cbs, _ := r.store.(ledger.CallbackStore).Notifications(r.ctx, "acme", op.ID); len(cbs) != 0 {
			t.Fatalf("a callback was queued without a tenant callback: %+v", cbs)
		}

		var logs syncBuffer
		a := r.escalationNotifier(r.store, rc.secret, &logs)
		b := r.escalationNotifier(h.Sibling(t, r.store, time.Now), rc.secret, &logs)
		r.runUntil("acknowledgement", rc.ackedAll(1), a, b)
		r.runUntil("a quiet while", quietNotices(a, b), a, b)

		reqs := rc.requests()
		if len(reqs) != 2 || reqs[0].status != http.StatusInternalServerError || reqs[1].status != http.StatusNoContent {
			t.Fatalf("%d requests (%+v), want one 500 then one 204", len(reqs), reqs)
		}
		want := strconv.FormatInt(notices[0].ID, 10)
		for _, req := range reqs {
			if req.sigErr != nil || req.eventID != want {
				t.Fatalf("signature %v, event id %q want %q", req.sigErr, req.eventID, want)
			}
			if target.Verify(req.sig, req.body, []byte("scs_wrong-secret-of-32-bytes-at-least"), time.Minute, time.Now()) == nil {
				t.Fatal("the signature verifies with another secret")
			}
			for _, leak := range []string{"amount", "7391426", "EUR", "payload", "metadata"} {
				if bytes.Contains(req.body, []byte(leak)) {
					t.Fatalf("body carries %q: %s", leak, req.body)
				}
			}
		}
		var m struct {
			Event      string                     `json:"event"`
			Escalation reconciler.EscalationFacts `json:"escalation"`
			SentAt     time.Time                  `json:"sent_at"`
		}
		dec := json.NewDecoder(bytes.NewReader(reqs[1].body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&m); err != nil || m.Event != reconciler.EscalationEvent || m.SentAt.IsZero() {
			t.Fatalf("body %s: %v", reqs[1].body, err)
		}
		f := m.Escalation
		if f.Target != "payments" || f.Tenant != "acme" || f.OperationID != op.ID || f.IntentRef != "order-esc-1" ||
			f.Team != r.c.Owner.Team || f.Contact != r.c.Owner.EscalationContact || f.StateNow != "ESCALATED" ||
			f.Reason != "the target said the charge was not sent" || !f.EscalatedAt.Equal(op.UpdatedAt) ||
			f.Deadline == nil || !f.Deadline.Equal(*op.Deadline) ||
			f.ConsoleURL != "https://settle.example/console/escalations/acme/"+op.ID {
			t.Fatalf("facts %+v\nop %+v", f, op)
		}
		notices, _ = r.store.(ledger.EscalationStore).EscalationNotices(r.ctx, "acme", op.ID)
		if n := notices[0]; n.DeliveredAt == nil || n.LastStatus != http.StatusNoContent || n.Attempts != 2 {
			t.Fatalf("after delivery: %+v", n)
		}
		for _, leak := range []string{"sekrit-query-token", string(rc.secret)} {
			if strings.Contains(logs.String(), leak) {
				t.Fatalf("logs carry %q:\n%s", leak, logs.String())
			}
		}
	})
}

// format: slack sends a Slack incoming-webhook body with the same facts.
func TestEscalationNotifier_SlackBody(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		rc := newCBReceiver(t)
		r := notifyRig(t, h, rc, target.NotifySlack)
		op := r.escalate("acme", "order-<esc>", "deadline passed")
		nt := r.escalationNotifier(r.store, rc.secret, nil)
		r.runUntil("acknowledgement", rc.ackedAll(1), nt)
		req := rc.requests()[0]
		if req.sigErr != nil {
			t.Fatal(req.sigErr)
		}
		var body struct {
			Text   string `json:"text"`
			Blocks []struct {
				Type string `json:"type"`
				Text struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"text"`
			} `json:"blocks"`
		}
		dec := json.NewDecoder(bytes.NewReader(req.body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&body); err != nil {
			t.Fatalf("body %s: %v", req.body, err)
		}
		if !strings.Contains(body.Text, op.ID) || !strings.Contains(body.Text, "payments") || len(body.Blocks) != 3 {
			t.Fatalf("slack body %s", req.body)
		}
		facts := body.Blocks[1].Text.Text
		for _, want := range []string{"acme", op.ID, "order-&lt;esc&gt;", "deadline passed", op.UpdatedAt.UTC().Format(time.RFC3339),
			op.Deadline.UTC().Format(time.RFC3339)} {
			if !strings.Contains(facts, want) {
				t.Fatalf("facts block lacks %q: %s", want, facts)
			}
		}
		for _, b := range body.Blocks {
			if b.Type != "section" || b.Text.Type != "mrkdwn" {
				t.Fatalf("block %+v", b)
			}
		}
		if link := body.Blocks[2].Text.Text; link != "<https://settle.example/console/escalations/acme/"+op.ID+"|Open in the settle console>" {
			t.Fatalf("link block %q", link)
		}
		if bytes.Contains(req.body, []byte("7391426")) || bytes.Contains(req.body, []byte("amount")) {
			t.Fatalf("payload in body %s", req.body)
		}
	})
}

// A target whose owner has no notify block: the notice is settled unsent.
func TestEscalationNotifier_NoEndpoint(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		r := newRig(t, h, sim.Config{Class: "A"}, nil)
		op := r.escalate("acme", "order-esc-quiet", "deadline passed")
		nt := r.escalationNotifier(r.store, []byte("unused"), nil)
		es := r.store.(ledger.EscalationStore)
		r.runUntil("the notice settled", func() bool {
			ns, err := es.EscalationNotices(r.ctx, "acme", op.ID)
			return err == nil && len(ns) == 1 && ns[0].DeliveredAt != nil
		}, nt)
	})
}

// The digest lists a team's overdue escalations and UNKNOWN operations
// past their deadline, once per day across replicas, retried after a 500,
// and nothing before the day's send time.
func TestDigest_OncePerDay(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		rc := newCBReceiver(t)
		rc.set(func(rc *cbReceiver) { rc.fail = 1 })
		r := notifyRig(t, h, rc, target.NotifySettle)
		esc := r.escalate("acme", "order-old-esc", "deadline passed")
		r.escalate("globex", "order-other-esc", "deadline passed")
		unk := r.create("globex", "order-unknown", 9182735)
		claimed, err := r.store.Claim(r.ctx, unk.Tenant, unk.ID, unk.PayloadHash, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if unk, err = r.store.Record(r.ctx, ledger.Outcome{Tenant: "globex", OperationID: unk.ID, Fence: claimed.Fence,
			From: ledger.InFlight, To: ledger.Unknown, Reason: "timeout", Actor: ledger.ActorExecutor}); err != nil {
			t.Fatal(err)
		}
		// The digest's clock: days after the deadline, before and then
		// after the send time.
		day := unk.Deadline.UTC().Truncate(24 * time.Hour).Add(48 * time.Hour)
		clock := day.Add(7 * time.Hour)
		var logs syncBuffer
		digest := func(s ledger.Store) *reconciler.Digest {
			return &reconciler.Digest{Store: s, Digests: s.(ledger.EscalationStore), Contracts: r.set,
				Secrets: teamSecrets(rc.secret), Log: slog.New(slog.NewTextHandler(&logs, nil)), ConsoleURL: "https://settle.example/",
				Now: func() time.Time { return clock }, Overdue: 24 * time.Hour, SendAt: 8 * time.Hour}
		}
		a, b := digest(r.store), digest(h.Sibling(t, r.store, time.Now))
		if err := a.SendDue(r.ctx); err != nil || len(rc.requests()) != 0 {
			t.Fatalf("before the send time: %v, %d requests", err, len(rc.requests()))
		}
		clock = day.Add(9 * time.Hour)
		if err := a.SendDue(r.ctx); err == nil {
			t.Fatal("a 500 was taken for delivery")
		}
		team := r.c.Owner.Team
		es := r.store.(ledger.EscalationStore)
		if sent, err := es.DigestSent(r.ctx, team, day.Format(time.DateOnly)); err != nil || sent {
			t.Fatalf("recorded after a 500: %v %v", sent, err)
		}
		if err := b.SendDue(r.ctx); err != nil {
			t.Fatal(err)
		}
		if err := a.SendDue(r.ctx); err != nil {
			t.Fatal(err)
		}
		if err := b.SendDue(r.ctx); err != nil {
			t.Fatal(err)
		}
		reqs := rc.requests()
		if len(reqs) != 2 || reqs[1].status != http.StatusNoContent {
			t.Fatalf("%d requests, want a 500 then one acknowledged digest", len(reqs))
		}
		// Signed at the digest's clock, days ahead of the receiver's.
		if err := target.Verify(reqs[1].sig, reqs[1].body, rc.secret, time.Minute, clock); err != nil {
			t.Fatalf("signature: %v", err)
		}
		var m reconciler.DigestMessage
		dec := json.NewDecoder(bytes.NewReader(reqs[1].body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("digest %s: %v", reqs[1].body, err)
		}
		if m.Event != reconciler.DigestEvent || m.Team != team || m.Day != day.Format(time.DateOnly) ||
			m.UnknownOverdue != 1 || m.Capped {
			t.Fatalf("digest %+v", m)
		}
		if m.Escalated != 2 || len(m.OldestItems) != 3 || m.OldestItems[0].OperationID != esc.ID ||
			m.OldestItems[0].State != "ESCALATED" || m.OldestItems[2].OperationID != unk.ID ||
			m.OldestItems[2].State != "UNKNOWN" || m.OldestItems[2].Deadline == nil || !m.OldestItems[2].Deadline.Equal(*unk.Deadline) ||
			m.OldestItems[0].ConsoleURL != "https://settle.example/operations/acme/"+esc.ID {
			t.Fatalf("digest items %+v", m)
		}
		for _, leak := range []string{"amount", "7391426", "9182735", "payload"} {
			if bytes.Contains(reqs[1].body, []byte(leak)) {
				t.Fatalf("digest carries %q: %s", leak, reqs[1].body)
			}
		}
		if sent, err := es.DigestSent(r.ctx, team, day.Format(time.DateOnly)); err != nil || !sent {
			t.Fatalf("not recorded: %v %v", sent, err)
		}
		// The next day's digest is due again.
		clock = clock.Add(24 * time.Hour)
		if err := a.SendDue(r.ctx); err != nil || len(rc.requests()) != 3 {
			t.Fatalf("next day: %v, %d requests", err, len(rc.requests()))
		}
		if strings.Contains(logs.String(), "sekrit-query-token") {
			t.Fatalf("logs carry the URL token:\n%s", logs.String())
		}
	})
}
