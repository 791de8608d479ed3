// Package deliver sends settle's signed outbound messages — client
// callbacks, escalation notices and digests, and an administrator's test
// delivery — over one HTTP client shape: redirects never followed, no
// proxy, and connections only to addresses the callback policy allows.
// The notifiers in package reconciler and the console's test delivery
// both send through it, so a message is signed and guarded the same way
// whoever sends it.
package deliver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"

	"settle/ledger"
	"settle/target"
)

// Request headers of every signed message. The signature is target.Sign's
// scheme, the one settle also verifies on inbound webhooks.
const (
	SignatureHeader = "Settle-Signature"
	EventIDHeader   = "Settle-Event-Id" // stable per message: the same on every retry
)

// NoRedirects returns a copy of c (nil: a client with a 10 s timeout) that
// never follows a redirect: the configured URL is the only place a signed
// body goes.
func NoRedirects(c *http.Client) *http.Client {
	out := http.Client{Timeout: 10 * time.Second}
	if c != nil {
		out = *c
	}
	out.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &out
}

// Guarded returns NoRedirects(c) whose connections go only where policy
// allows (Transport).
func Guarded(c *http.Client, policy ledger.CallbackPolicy) *http.Client {
	out := NoRedirects(c)
	out.Transport = Transport(out.Transport, policy)
	return out
}

// Transport returns a copy of rt (an *http.Transport; nil or any other
// kind means the default transport's settings) whose connections go only
// to addresses policy allows. The check runs in the dialer's Control hook,
// on the address actually connected to after DNS resolution, so a host
// name that resolves (or re-resolves) to an internal address is refused
// too. Proxies are off: through one, the dialer would see only the
// proxy's address.
func Transport(rt http.RoundTripper, policy ledger.CallbackPolicy) http.RoundTripper {
	base, ok := rt.(*http.Transport)
	if !ok {
		base = http.DefaultTransport.(*http.Transport)
	}
	t := base.Clone()
	t.Proxy = nil
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("callback destination %q is not an address", address)
			}
			return policy.CheckAddr(ap.Addr())
		}}
	t.DialContext = d.DialContext
	return t
}

// Message is one signed POST.
type Message struct {
	Agent   string // User-Agent
	URL     string
	Secret  []byte // the HMAC-SHA256 key of SignatureHeader
	EventID string // EventIDHeader
	Now     time.Time
	Body    any // encoded as JSON
}

// Post sends m and returns the endpoint's status; err is nil only for a
// 2xx. Errors never quote the URL, which may carry a token.
func Post(ctx context.Context, client *http.Client, m Message) (int, error) {
	if len(m.Secret) == 0 {
		return 0, errors.New("no signing secret loaded")
	}
	b, err := json.Marshal(m.Body)
	if err != nil {
		return 0, fmt.Errorf("encode: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.URL, bytes.NewReader(b))
	if err != nil {
		return 0, errors.New("the endpoint URL is not usable")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", m.Agent)
	req.Header.Set(EventIDHeader, m.EventID)
	req.Header.Set(SignatureHeader, target.Sign(m.Secret, m.Now, b))
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, fmt.Errorf("no answer: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, fmt.Errorf("endpoint answered %d", resp.StatusCode)
	}
	return resp.StatusCode, nil
}
