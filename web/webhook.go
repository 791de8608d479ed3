package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"settle/target"
)

// WebhookBodyLimit bounds an inbound webhook body; a contract's
// webhook.max_body_bytes may lower it per target.
const WebhookBodyLimit = target.MaxWebhookBody

// DefaultMaxWebhookReads caps webhook bodies read (and held) at once, and
// DefaultWebhookReadBytes their bytes; one more sheds the oldest bodies
// still arriving, or waits up to DefaultWebhookWait for bodies being
// stored, then is refused with 503.
const (
	DefaultMaxWebhookReads = 64
	DefaultWebhookWait     = time.Second
)

// webhooks counts deliveries by target and result.
func newWebhookCounter(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "settle_webhook_deliveries_total",
		Help: "Inbound webhook deliveries by target and result (accepted, duplicate, bad_signature, expired_signature, unknown_target, too_large, overloaded, shed, slow_body).",
	}, []string{"target", "result"})
	reg.MustRegister(c)
	return c
}

// webhooks is the webhook receiver: it verifies deliveries with the
// targets' contracts and secrets and stores them in the inbox, within the
// replica's webhook budget.
type webhooks struct {
	contracts Contracts
	secrets   map[string][]byte
	store     interface {
		Receive(ctx context.Context, target string, body []byte) (id int64, duplicate bool, err error)
	}
	now   func() time.Time
	count *prometheus.CounterVec
	reads *webhookBudget
	// bodyTimeout bounds the time a webhook body takes to arrive.
	bodyTimeout time.Duration
	shed        *sheddingLog // refusals a flood drives, rate-limited
}

// receiveWebhook verifies a delivery's signature and stores it durably
// before answering 2xx; matching it as evidence happens afterwards, in the
// inbox processor, so a crash between the two loses nothing. A delivery
// with a bad or missing signature stores nothing but a counter.
func (wh *webhooks) receiveWebhook(c echo.Context) error {
	name := c.Param("target")
	contract, ok := wh.contracts.Get(name)
	secret := wh.secrets[name]
	if !ok || contract.Webhook == nil || len(secret) == 0 {
		wh.count.WithLabelValues("-", "unknown_target").Inc()
		return echo.NewHTTPError(http.StatusNotFound, "no webhook is configured for this target")
	}
	limit := int64(WebhookBodyLimit)
	if n := contract.Webhook.MaxBodyBytes; n > 0 && n < WebhookBodyLimit {
		limit = int64(n)
	}
	// Everything that needs no body is checked before reading one: an
	// unsigned flood costs a header each, not a megabyte each.
	sig := c.Request().Header.Get(contract.Webhook.SignatureHeader)
	if err := target.CheckSignatureHeader(sig); err != nil {
		wh.count.WithLabelValues(name, "bad_signature").Inc()
		wh.shed.warn("webhook refused", "target", name, "reason", err.Error(),
			"request_id", c.Response().Header().Get(echo.HeaderXRequestID))
		return unread(c, echo.NewHTTPError(http.StatusUnauthorized, "invalid signature: "+err.Error()))
	}
	if c.Request().ContentLength > limit {
		wh.count.WithLabelValues(name, "too_large").Inc()
		return unread(c, echo.NewHTTPError(http.StatusRequestEntityTooLarge, fmt.Sprintf("body exceeds %d bytes", limit)))
	}
	body, release, err := wh.readWebhookBody(c, name, limit)
	if err != nil {
		return err
	}
	defer release() // the body is held until it is stored
	if int64(len(body)) > limit {
		wh.count.WithLabelValues(name, "too_large").Inc()
		return echo.NewHTTPError(http.StatusRequestEntityTooLarge, fmt.Sprintf("body exceeds %d bytes", limit))
	}
	if err := target.Verify(sig, body, secret, contract.Webhook.Tolerance, wh.now()); err != nil {
		result := "bad_signature"
		if errors.Is(err, target.ErrSignatureExpired) {
			result = "expired_signature"
		}
		wh.count.WithLabelValues(name, result).Inc()
		wh.shed.warn("webhook refused", "target", name, "reason", err.Error(),
			"request_id", c.Response().Header().Get(echo.HeaderXRequestID))
		return echo.NewHTTPError(http.StatusUnauthorized, "invalid signature: "+err.Error())
	}
	// The write must finish even if the sender hangs up: it is the receipt.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request().Context()), 30*time.Second)
	defer cancel()
	id, dup, err := wh.store.Receive(ctx, name, body)
	if err != nil {
		return err // 500: the sender retries, nothing was acknowledged
	}
	result := "accepted"
	if dup {
		result = "duplicate"
	}
	wh.count.WithLabelValues(name, result).Inc()
	return c.JSON(http.StatusOK, map[string]any{"received": true, "delivery_id": id, "duplicate": dup})
}

// unread marks err as a refusal made without reading the body: the
// connection closes after the answer, so net/http answers at once instead
// of first waiting for (and discarding) a body that may never come.
func unread(c echo.Context, err error) error {
	c.Response().Header().Set(echo.HeaderConnection, "close")
	return err
}

// readWebhookBody reads a delivery's body within the replica's webhook
// budget and the webhook body timeout. A body that does not come whole in
// time is refused with 408, one shed to admit a newer delivery with 503
// and Retry-After, both on a closed connection; so is a delivery that
// finds the budget held by bodies being stored. release gives the
// budget's place back.
func (wh *webhooks) readWebhookBody(c echo.Context, name string, limit int64) (body []byte, release func(), err error) {
	req := c.Request()
	size := limit
	if req.ContentLength >= 0 {
		size = req.ContentLength
	}
	cb := &cutBody{body: req.Body, rc: http.NewResponseController(c.Response().Writer)}
	place, ok := wh.reads.acquire(req.Context(), size, cb.stop)
	if !ok {
		wh.count.WithLabelValues(name, "overloaded").Inc()
		c.Response().Header().Set("Retry-After", "1")
		return nil, nil, unread(c, echo.NewHTTPError(http.StatusServiceUnavailable,
			"too many webhook deliveries in progress on this replica; retry after the Retry-After header's seconds"))
	}
	var timedOut atomic.Bool
	timer := time.AfterFunc(wh.bodyTimeout, func() { timedOut.Store(true); cb.stop() })
	body, err = io.ReadAll(io.LimitReader(cb, limit+1))
	timer.Stop()
	wh.reads.read(place)
	release = func() { wh.reads.release(place) }
	if err == nil {
		return body, release, nil
	}
	release()
	switch {
	case wh.reads.wasShed(place):
		wh.count.WithLabelValues(name, "shed").Inc()
		c.Response().Header().Set("Retry-After", "1")
		return nil, nil, unread(c, echo.NewHTTPError(http.StatusServiceUnavailable,
			"the body came too slowly while other deliveries waited; retry after the Retry-After header's seconds"))
	case timedOut.Load():
		wh.count.WithLabelValues(name, "slow_body").Inc()
		return nil, nil, unread(c, echo.NewHTTPError(http.StatusRequestTimeout,
			fmt.Sprintf("the body did not arrive whole within %s", wh.bodyTimeout)))
	}
	return nil, nil, echo.NewHTTPError(http.StatusBadRequest, "cannot read the request body")
}
