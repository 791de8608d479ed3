package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"settle/target"
)

// WebhookBodyLimit bounds an inbound webhook body.
const WebhookBodyLimit = 1 << 20

// webhooks counts deliveries by target and result.
func newWebhookCounter(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "settle_webhook_deliveries_total",
		Help: "Inbound webhook deliveries by target and result (accepted, duplicate, bad_signature, expired_signature, unknown_target, too_large).",
	}, []string{"target", "result"})
	reg.MustRegister(c)
	return c
}

// receiveWebhook verifies a delivery's signature and stores it durably
// before answering 2xx; matching it as evidence happens afterwards, in the
// inbox processor, so a crash between the two loses nothing. A delivery
// with a bad or missing signature stores nothing but a counter.
func (s *server) receiveWebhook(c echo.Context) error {
	name := c.Param("target")
	contract, ok := s.contracts.Get(name)
	secret := s.webhookSecrets[name]
	if !ok || contract.Webhook == nil || len(secret) == 0 {
		s.webhookCount.WithLabelValues("-", "unknown_target").Inc()
		return echo.NewHTTPError(http.StatusNotFound, "no webhook is configured for this target")
	}
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, WebhookBodyLimit+1))
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "cannot read the request body")
	}
	if len(body) > WebhookBodyLimit {
		s.webhookCount.WithLabelValues(name, "too_large").Inc()
		return echo.NewHTTPError(http.StatusRequestEntityTooLarge, fmt.Sprintf("body exceeds %d bytes", WebhookBodyLimit))
	}
	sig := c.Request().Header.Get(contract.Webhook.SignatureHeader)
	if err := target.Verify(sig, body, secret, contract.Webhook.Tolerance, s.now()); err != nil {
		result := "bad_signature"
		if errors.Is(err, target.ErrSignatureExpired) {
			result = "expired_signature"
		}
		s.webhookCount.WithLabelValues(name, result).Inc()
		s.log.Warn("webhook refused", "target", name, "reason", err.Error(),
			"request_id", c.Response().Header().Get(echo.HeaderXRequestID))
		return echo.NewHTTPError(http.StatusUnauthorized, "invalid signature: "+err.Error())
	}
	// The write must finish even if the sender hangs up: it is the receipt.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request().Context()), 30*time.Second)
	defer cancel()
	id, dup, err := s.inbox.Receive(ctx, name, body)
	if err != nil {
		return err // 500: the sender retries, nothing was acknowledged
	}
	result := "accepted"
	if dup {
		result = "duplicate"
	}
	s.webhookCount.WithLabelValues(name, result).Inc()
	return c.JSON(http.StatusOK, map[string]any{"received": true, "delivery_id": id, "duplicate": dup})
}
