package sim

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"time"

	"settle/target"
)

// Webhook delivery tuning: small enough that tests exercising retries and
// reordering stay fast.
const (
	webhookAttempts   = 5
	webhookBackoff    = 100 * time.Millisecond // doubled after each failed attempt
	webhookReorderMax = 250 * time.Millisecond
)

// SignatureHeader is the request header carrying a webhook's signature.
const SignatureHeader = "Settle-Signature"

// Sign returns the Settle-Signature header value for a webhook body sent at
// t: "t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" keyed by secret>".
// Receivers verify it with target.Verify; the scheme is target.Sign's.
func Sign(secret []byte, t time.Time, body []byte) string { return target.Sign(secret, t, body) }

// event is the JSON body of a webhook delivery.
type event struct {
	ID      string       `json:"id"`
	Type    string       `json:"type"`
	Created int64        `json:"created"`
	Data    publicObject `json:"data"`
}

// emitLocked schedules the charge.succeeded event for obj. s.mu must be
// held. Deliveries run in the background, as a provider's do, so they can
// arrive before, after or without the client's own answer.
func (s *Sim) emitLocked(obj Object) {
	if s.cfg.WebhookURL == "" {
		return
	}
	body := mustJSON(event{
		ID:      newID("evt_"),
		Type:    "charge.succeeded",
		Created: s.cfg.Now().Unix(),
		Data:    obj.clone().public(),
	})
	copies := 1
	if s.cfg.WebhookDuplicates > 0 && s.rng.Float64() < s.cfg.WebhookDuplicates {
		copies = 2
	}
	for range copies {
		var delay time.Duration
		if s.cfg.WebhookReorder {
			delay = time.Duration(s.rng.Int64N(int64(webhookReorderMax)))
		}
		s.goLocked(func() { s.deliver(body, delay) })
	}
}

// deliver posts body after delay, retrying non-2xx answers and transport
// errors with doubling backoff until it succeeds, runs out of attempts or
// the simulator closes.
func (s *Sim) deliver(body []byte, delay time.Duration) {
	s.sleep(delay)
	backoff := webhookBackoff
	for attempt := 1; s.ctx.Err() == nil; attempt++ {
		if s.post(body) == nil || attempt == webhookAttempts {
			return
		}
		s.sleep(backoff)
		backoff *= 2
	}
}

func (s *Sim) post(body []byte) error {
	req, err := http.NewRequestWithContext(s.ctx, http.MethodPost, s.cfg.WebhookURL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("webhook: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	// Signed per attempt, like real providers, so a retry carries a fresh t.
	req.Header.Set(SignatureHeader, Sign([]byte(s.cfg.WebhookSecret), s.cfg.Now(), body))
	resp, err := s.hooks.Do(req)
	if err != nil {
		return fmt.Errorf("webhook: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("webhook: status %d", resp.StatusCode)
	}
	return nil
}
