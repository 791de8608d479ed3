package target

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"
)

// MaxResponseBytes bounds how much of a response settle reads. Bodies are
// used for matching and never logged.
const MaxResponseBytes = 1 << 20

// Client sends each request to a target exactly once. Nothing on its path
// retries:
//   - keep-alives are off, because Go's transport silently re-sends a request
//     that carries an Idempotency-Key header when a reused connection fails;
//   - the request body cannot be rewound (GetBody is nil), so no layer can
//     replay it;
//   - HTTP/2 is not negotiated (its transport retries refused streams);
//   - redirects are not followed (a 307/308 would re-send the body).
type Client struct {
	http *http.Client
}

// NewClient returns a Client. Per-request timeouts come from each contract.
func NewClient() *Client {
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		DisableKeepAlives:   true,
		ForceAttemptHTTP2:   false,
		TLSNextProto:        map[string]func(string, *tls.Conn) http.RoundTripper{},
		TLSHandshakeTimeout: 10 * time.Second,
	}
	return &Client{http: &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Attempt is what one request showed: a status and body, or no response at
// all and why.
type Attempt struct {
	Status  int    // 0 when no response arrived
	Failure string // when Status is 0: "timeout", "connection reset", …
	Body    []byte // at most MaxResponseBytes
}

// Answered reports whether a response arrived.
func (a Attempt) Answered() bool { return a.Status != 0 }

// Create sends the approved bytes to the contract's create endpoint with
// key as the idempotency key (when the contract has one) and ifMatch as the
// precondition (when non-empty and the contract has one).
func (cl *Client) Create(ctx context.Context, c *Contract, payload []byte, key, ifMatch string) Attempt {
	method, u := c.CreateURL()
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}
	if c.Idempotency != nil && key != "" {
		h.Set(c.Idempotency.Header, key)
	}
	if c.ConditionalUpdate != nil && ifMatch != "" {
		h.Set(c.ConditionalUpdate.Header, ifMatch)
	}
	return cl.do(ctx, c, method, u, h, payload)
}

// Lookup asks the target for objects carrying settle's reference.
func (cl *Client) Lookup(ctx context.Context, c *Contract, reference, remoteRef string) Attempt {
	method, u := c.LookupURL(reference, remoteRef)
	return cl.do(ctx, c, method, u, http.Header{"Accept": {"application/json"}}, nil)
}

func (cl *Client) do(ctx context.Context, c *Contract, method, u string, h http.Header, body []byte) Attempt {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return Attempt{Failure: "request could not be built"}
	}
	req.GetBody = nil
	req.Header = h
	resp, err := cl.http.Do(req)
	if err != nil {
		return Attempt{Failure: failure(err)}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes))
	if err != nil {
		// The status arrived but the body did not: the answer is incomplete
		// and cannot be verified, which is the same as no answer.
		return Attempt{Failure: "response body lost: " + failure(err)}
	}
	return Attempt{Status: resp.StatusCode, Body: b}
}

// failure names a transport error without its text, which quotes URLs.
func failure(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed without a response"
	}
	return "transport error"
}
