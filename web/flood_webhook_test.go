package web_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"settle/target"
	"settle/web"
)

// floodContract is hookContract with a target whose contract lowers the
// webhook body limit.
const floodContract = hookContract + `  - name: small
    owner: {team: Small team, escalation_contact: s@example.invalid}
    documentation: {url: "https://docs.example.invalid/s", checked: 2026-11-01}
    base_url: http://127.0.0.1:1
    deadline: 1h
    create: {method: POST, path: /v1/x}
    response: {id_field: id, match: [amount]}
    webhook: {secret_env: SETTLE_TEST_SECRET, max_body_bytes: 100}
`

func serveHooks(t *testing.T, s store, cfg web.Config, limits web.ServerLimits) *env {
	t.Helper()
	set, err := target.Parse("hooks.yaml", []byte(floodContract))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Contracts = set
	cfg.WebhookSecrets = map[string][]byte{"payments": hookSecret, "small": hookSecret}
	e, _ := serveHTTP(t, s, cfg, limits)
	return e
}

// rawResponse reads one response from c within d.
func rawResponse(t *testing.T, c net.Conn, d time.Duration) (*http.Response, string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(d))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no response within %s: %v", d, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// A delivery is refused from its header alone, over a raw connection that
// announces a body and never sends it: a missing or malformed signature
// (401), a Content-Length above the target's own limit or the server's
// (413), and a huge body announced with Expect: 100-continue (413, with no
// 100 Continue first). Each answer comes at once, not at a timeout.
func TestWebhook_RefusedBeforeTheBody(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		e := serveHooks(t, open(t), web.Config{}, testLimits)
		valid := target.Sign(hookSecret, time.Now(), []byte("{}"))
		for _, c := range []struct {
			name, path, extra string
			length, status    int
		}{
			{"no signature", "/webhooks/payments", "", 1 << 20, 401},
			{"malformed signature", "/webhooks/payments", "Settle-Signature: t=abc,v1=zz\r\n", 1 << 20, 401},
			{"above the target's limit", "/webhooks/small", "Settle-Signature: " + valid + "\r\n", 101, 413},
			{"above the server's limit", "/webhooks/payments", "Settle-Signature: " + valid + "\r\n", web.WebhookBodyLimit + 1, 413},
			{"100-continue, 100 MB", "/webhooks/payments", "Settle-Signature: " + valid + "\r\nExpect: 100-continue\r\n", 100 << 20, 413},
			{"100-continue, no signature", "/webhooks/payments", "Expect: 100-continue\r\n", 100 << 20, 401},
		} {
			t.Run(c.name, func(t *testing.T) {
				conn := e.dial()
				fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: settle\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n",
					c.path, c.extra, c.length)
				start := time.Now()
				resp, body := rawResponse(t, conn, 500*time.Millisecond)
				if resp.StatusCode != c.status {
					t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, body)
				}
				if d := time.Since(start); d > 300*time.Millisecond {
					t.Errorf("answered after %s", d)
				}
			})
		}
	})
}

// A contract's max_body_bytes holds for a body sent without a length.
func TestWebhook_TargetBodyLimitChunked(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		e := serveHooks(t, open(t), web.Config{}, testLimits)
		body := `{"id":"evt_1","data":{"id":"x","pad":"` + strings.Repeat("p", 100) + `"}}`
		conn := e.dial()
		fmt.Fprintf(conn, "POST /webhooks/small HTTP/1.1\r\nHost: settle\r\nContent-Type: application/json\r\n"+
			"Settle-Signature: %s\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n",
			target.Sign(hookSecret, time.Now(), []byte(body)), len(body), body)
		if resp, b := rawResponse(t, conn, 2*time.Second); resp.StatusCode != 413 || !strings.Contains(b, "100 bytes") {
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
	})
}

// At most MaxWebhookReads bodies are read at once: with both places held
// by deliveries whose bodies have not all arrived, a third one sheds the
// oldest (503 with Retry-After, so its sender retries) and is accepted;
// the other held delivery, once its body arrives, is accepted too.
func TestWebhook_BodiesReadAtOnceAreBounded(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		e := serveHooks(t, open(t), web.Config{Limits: web.Limits{MaxWebhookReads: 2, WebhookWait: 200 * time.Millisecond}}, testLimits)
		body := []byte(`{"id":"evt_%d","type":"charge.succeeded","data":{"id":"ch_1","amount":5}}`)
		bodyOf := func(i int) string { return fmt.Sprintf(string(body), i) }
		var held []net.Conn
		for i := range 2 {
			c := e.dial()
			io.WriteString(c, hookHead(hookSecret, bodyOf(i))+bodyOf(i)[:5]) // the rest later
			held = append(held, c)
			time.Sleep(50 * time.Millisecond) // held[0] is the oldest
		}
		third := e.dial()
		start := time.Now()
		io.WriteString(third, hookHead(hookSecret, bodyOf(2))+bodyOf(2))
		if resp, b := rawResponse(t, third, 2*time.Second); resp.StatusCode != 200 {
			t.Fatalf("third delivery: %d %s", resp.StatusCode, b)
		}
		// Shedding answers it at once; waiting would mean the 2 s body
		// deadline of the oldest. A second tells the two apart on a loaded
		// machine.
		if d := time.Since(start); d > time.Second {
			t.Errorf("third delivery answered after %s", d)
		}
		resp, b := rawResponse(t, held[0], time.Second)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" ||
			!strings.Contains(b, `"overloaded"`) {
			t.Fatalf("oldest held delivery: %d %v %s", resp.StatusCode, resp.Header, b)
		}
		io.WriteString(held[1], bodyOf(1)[5:])
		if resp, b := rawResponse(t, held[1], 2*time.Second); resp.StatusCode != 200 {
			t.Fatalf("newer held delivery: %d %s", resp.StatusCode, b)
		}
	})
}
