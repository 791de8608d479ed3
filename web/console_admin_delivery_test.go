package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"settle/deliver"
	"settle/ledger"
	"settle/target"
	"settle/web"
)

// receiver is a tenant's callback endpoint on loopback: it answers with
// the status it is told and keeps what it was sent.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	status int
	got    []*http.Request
	bodies [][]byte
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{status: http.StatusNoContent}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.got, r.bodies = append(r.got, req), append(r.bodies, b)
		w.WriteHeader(r.status)
	}))
	t.Cleanup(r.Close)
	return r
}

// within reports whether the element with the data-testid holds text
// before its end (the next closing tag of a paragraph, definition or cell).
func within(body []byte, id, text string) bool {
	s := string(body)
	i := strings.Index(s, `data-testid="`+id+`"`)
	if i < 0 {
		return false
	}
	s = s[i:]
	for _, end := range []string{"</dd>", "</p>", "</td>"} {
		if j := strings.Index(s, end); j >= 0 {
			s = s[:j]
		}
	}
	return strings.Contains(s, text)
}

func (r *receiver) answer(status int) { r.mu.Lock(); r.status = status; r.mu.Unlock() }

func (r *receiver) last(t *testing.T) (*http.Request, []byte) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.got) == 0 {
		t.Fatal("the endpoint received nothing")
	}
	return r.got[len(r.got)-1], r.bodies[len(r.bodies)-1]
}

// The tenant's admin page says how its endpoint has been answering — the
// last attempt and its answer, the last success, the failures since, what
// waits — and offers a test delivery: one signed message the endpoint
// can verify with its secret, reported on the page, queueing nothing and
// leaving the delivery status alone. Refused without CSRF; an endpoint
// answering 500 or not at all is said so.
func TestConsoleAdmin_CallbackDelivery(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		policy := ledger.CallbackPolicy{AllowHTTP: true, Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
		c := newConsole(t, open(t), web.Config{CallbackPolicy: policy})
		rcv := newReceiver(t)
		secret, _ := ledger.NewCallbackSecret()
		cs := c.callbacks()
		if err := cs.SetCallback(adminCtx, "acme", rcv.URL+"/settle", []byte(secret), time.Now()); err != nil {
			t.Fatal(err)
		}
		b := c.as("admin")
		page := b.get("/admin/tenants/acme")
		if !within(page.body, "callback-last-attempt", "not yet, since the endpoint was set") ||
			!within(page.body, "callback-last-success", "none yet") || !within(page.body, "callback-pending", "none") {
			t.Fatalf("fresh endpoint's status: %s", page.body)
		}

		if r := b.do(http.MethodPost, "/admin/tenants/acme/callback/test", url.Values{}); r.status != http.StatusForbidden {
			t.Fatalf("test without CSRF: %d", r.status)
		}
		r := b.do(http.MethodPost, "/admin/tenants/acme/callback/test", url.Values{"_csrf": {b.token()}})
		if r.status != http.StatusOK || !within(r.body, "callback-test-result", "Test delivery: the endpoint answered 204 in ") {
			t.Fatalf("test delivery: %d %s", r.status, r.body)
		}
		req, body := rcv.last(t)
		if err := target.Verify(req.Header.Get(deliver.SignatureHeader), body, []byte(secret), time.Minute, time.Now()); err != nil {
			t.Fatalf("the test message does not verify with the tenant's secret: %v", err)
		}
		var msg struct{ Event, Tenant string }
		if err := json.Unmarshal(body, &msg); err != nil || msg.Event != "callback.test" || msg.Tenant != "acme" ||
			!strings.HasPrefix(req.Header.Get(deliver.EventIDHeader), "test-") || req.URL.Path != "/settle" {
			t.Fatalf("test message %s %s (%v), event id %q", req.URL.Path, body, err, req.Header.Get(deliver.EventIDHeader))
		}
		if d, err := cs.CallbackDelivery(context.Background(), "acme"); err != nil || d.LastAttemptAt != nil {
			t.Fatalf("a test changed the delivery status: %+v, %v", d, err)
		}

		rcv.answer(http.StatusInternalServerError)
		r = b.do(http.MethodPost, "/admin/tenants/acme/callback/test", url.Values{"_csrf": {b.token()}})
		if !within(r.body, "callback-test-problem", "the endpoint answered 500") {
			t.Fatalf("test answered 500: %s", r.body)
		}
		rcv.Close()
		r = b.do(http.MethodPost, "/admin/tenants/acme/callback/test", url.Values{"_csrf": {b.token()}})
		if !within(r.body, "callback-test-problem", "Test delivery: no answer (") {
			t.Fatalf("test with the endpoint down: %s", r.body)
		}

		// Real attempts, as the notifier records them.
		op := c.escalated("acme")
		ns, err := cs.Notifications(context.Background(), "acme", op.ID)
		if err != nil || len(ns) != 1 {
			t.Fatalf("notifications %+v, %v", ns, err)
		}
		if err := cs.MarkFailed(context.Background(), ns[0].ID, 0, "no answer: connection refused", time.Now().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		page = b.get("/admin/tenants/acme")
		if !within(page.body, "callback-last-attempt", "no answer (no answer: connection refused)") ||
			!within(page.body, "callback-failures", "1 failed attempt since the endpoint was set") ||
			!within(page.body, "callback-pending", "1 waiting to be delivered") {
			t.Fatalf("after a failed attempt: %s", page.body)
		}
		if err := cs.MarkDelivered(context.Background(), ns[0].ID, 200, time.Now()); err != nil {
			t.Fatal(err)
		}
		page = b.get("/admin/tenants/acme")
		if !within(page.body, "callback-last-attempt", "answered 200: delivered") ||
			within(page.body, "callback-last-success", "none yet") || strings.Contains(string(page.body), `data-testid="callback-failures"`) ||
			!within(page.body, "callback-pending", "none") {
			t.Fatalf("after a delivery: %s", page.body)
		}
	})
}
