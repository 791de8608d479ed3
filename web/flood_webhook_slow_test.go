package web_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"settle/ledger"
	"settle/target"
	"settle/web"
)

// hookHead is the head of a delivery of body to /webhooks/payments signed
// with secret (a forgery when it is not hookSecret).
func hookHead(secret []byte, body string) string {
	return fmt.Sprintf("POST /webhooks/payments HTTP/1.1\r\nHost: settle\r\nContent-Type: application/json\r\n"+
		"Settle-Signature: %s\r\nContent-Length: %d\r\n\r\n", target.Sign(secret, time.Now(), []byte(body)), len(body))
}

// While 16 senders trickle bodies with well-formed but forged signatures
// into a replica that reads 8 webhook bodies at once, redialling as soon
// as one is cut, each real delivery is stored and answered 200: it sheds
// the oldest trickle instead of waiting behind them. No trickle ends by
// itself during the test (the body and read timeouts are a minute), so without the
// shedding every real delivery would wait out WebhookWait and get 503;
// the wait is seconds, not a fraction of one, so that a loaded machine's
// slowness in letting a shed trickle go is not mistaken for that.
func TestWebhook_RealDeliveryDuringSlowForgedFlood(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		s := open(t)
		limits := testLimits
		limits.ReadTimeout, limits.BodyTimeout, limits.WriteTimeout = time.Minute, time.Minute, 2*time.Minute
		e := serveHooks(t, s, web.Config{Limits: web.Limits{MaxWebhookReads: 8,
			WebhookWait: 3 * time.Second, WebhookBodyTimeout: time.Minute}}, limits)
		ctx, stop := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		forged := `{"id":"evt_forged","pad":"` + strings.Repeat("f", 900) + `"}`
		for range 16 {
			wg.Go(func() {
				for ctx.Err() == nil {
					c, err := net.DialTimeout("tcp", e.addr(), time.Second)
					if err != nil {
						continue
					}
					_, err = io.WriteString(c, hookHead([]byte("forged"), forged))
					for i := 0; err == nil && i < len(forged) && ctx.Err() == nil; i++ {
						_, err = io.WriteString(c, forged[i:i+1])
						time.Sleep(20 * time.Millisecond)
					}
					c.Close()
				}
			})
		}
		defer func() { stop(); wg.Wait() }()
		time.Sleep(300 * time.Millisecond) // every place is held by a trickle
		var want []string
		for i := range 5 {
			body := fmt.Sprintf(`{"id":"evt_real_%d","type":"charge.succeeded","data":{"id":"ch_1","amount":5}}`, i)
			want = append(want, body)
			c := e.dial()
			start := time.Now()
			io.WriteString(c, hookHead(hookSecret, body)+body)
			resp, b := rawResponse(t, c, 10*time.Second)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("real delivery %d during the flood: %d after %s: %s", i, resp.StatusCode, time.Since(start), b)
			}
			time.Sleep(100 * time.Millisecond)
		}
		ds, err := s.(ledger.InboxStore).ClaimDeliveries(context.Background(), 100, time.Minute)
		if err != nil || len(ds) != len(want) {
			t.Fatalf("stored %d deliveries, want %d: %v", len(ds), len(want), err)
		}
		for i, d := range ds {
			if string(d.Body) != want[i] {
				t.Errorf("delivery %d: %s", i, d.Body)
			}
		}
	})
}

// A webhook body that does not arrive whole within WebhookBodyTimeout is
// cut with 408, well before the API's pace would cut it.
func TestWebhook_SlowBodyTimesOut(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		e := serveHooks(t, open(t), web.Config{Limits: web.Limits{WebhookBodyTimeout: 300 * time.Millisecond}}, testLimits)
		body := `{"id":"evt_slow","type":"charge.succeeded","data":{"id":"ch_1","amount":5}}`
		c := e.dial()
		start := time.Now()
		io.WriteString(c, hookHead(hookSecret, body)+body[:5])
		resp, b := rawResponse(t, c, 5*time.Second)
		if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(b, "300ms") {
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
		// Not before the timeout; the upper bound leaves a loaded machine
		// room and is still far below the API's pace cut.
		if d := time.Since(start); d < 250*time.Millisecond || d > 4*time.Second {
			t.Errorf("cut after %s, want about 300ms", d)
		}
	})
}
