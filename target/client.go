package target

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// MaxResponseBytes bounds how much of a response settle reads. Bodies are
// used for matching and never logged.
const MaxResponseBytes = 1 << 20

// Client sends each request to a target exactly once. Nothing on its path
// re-sends a create:
//   - connections are reused only for requests Go's transport never
//     re-sends after a byte of them left the process: a create with a body
//     that cannot be rewound (GetBody is nil), or a lookup (a GET, which
//     Go may re-send on a failed reused connection, and which reads
//     nothing but the target's state). A create Go would treat as
//     replayable — no body, with an Idempotency-Key header — gets a fresh
//     connection, which Go never retries on (see onceTransport);
//   - the request body cannot be rewound (GetBody is nil), so no layer can
//     replay it;
//   - HTTP/2 is not negotiated (its transport retries refused streams);
//   - redirects are not followed (a 307/308 would re-send the body).
//
// Every request carries the contract's credential (auth) and headers, with
// the tenant's parameters filled in. What cannot be filled in is never
// guessed: the request is not sent at all, and the Attempt says why.
type Client struct {
	http    *http.Client
	secrets *Secrets
	params  ParamSource
}

// ParamSource reads a tenant's named request parameters (the ledger's
// stores implement it as ledger.TenantParamStore). A tenant without any is
// an empty map, not an error.
type ParamSource interface {
	TenantParams(ctx context.Context, tenant string) (map[string]string, error)
}

// ClientOptions configure a Client.
type ClientOptions struct {
	// Secrets are the targets' credentials (ReadSecrets); nil: none, so
	// nothing is sent to a target whose contract has an auth block.
	Secrets *Secrets
	// Params reads tenant parameters; nil: none, so nothing is sent to a
	// target whose contract names one.
	Params ParamSource
	// WrapTransport, when set, wraps the client's own transport, for `settle
	// drill`, which injects faults on settle's side of the connection (a
	// response read in full, then discarded). The wrapper receives the
	// transport that keeps the exactly-once properties above (connections
	// reused only for requests Go never re-sends, no HTTP/2) and must not
	// retry, rewind a body or follow redirects itself: it may only pass a
	// request on once, or not at all.
	WrapTransport func(http.RoundTripper) http.RoundTripper
}

// NewClient returns a Client. Per-request timeouts come from each contract.
func NewClient(o ClientOptions) *Client {
	tr := newOnceTransport((&net.Dialer{Timeout: 10 * time.Second}).DialContext)
	var rt http.RoundTripper = tr
	if o.WrapTransport != nil {
		rt = o.WrapTransport(tr)
	}
	return &Client{
		http: &http.Client{
			Transport:     rt,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		secrets: o.Secrets,
		params:  o.Params,
	}
}

// Attempt is what one request showed: a status and body, no response at
// all and why, or that nothing was sent and why.
type Attempt struct {
	Status  int    // 0 when no response arrived
	Failure string // when Status is 0 and a request was sent: "timeout", "connection reset", …
	Body    []byte // at most MaxResponseBytes
	// NotSent, when set, says why no request was made at all: a tenant
	// parameter is missing, a credential was not loaded, a parameter read
	// failed, the body or URL cannot be built. It names parameters,
	// variables and fields, never their values. Nothing reached the target.
	NotSent string
	// Missing lists the tenant parameters that were absent (sorted), when
	// that is why nothing was sent.
	Missing []string
	// Replayed: the response carried idempotency.replayed_header "true",
	// so it is the target's saved answer to the key's first use.
	Replayed bool
}

// Answered reports whether a response arrived.
func (a Attempt) Answered() bool { return a.Status != 0 }

// Sent reports whether a request was made (answered or not).
func (a Attempt) Sent() bool { return a.NotSent == "" }

// Create sends the approved bytes to the contract's create endpoint for
// tenant, with key as the idempotency key (when the contract has one) and
// ifMatch as the precondition (when non-empty and the contract has one).
// The wire body is CreateBody's, so a replay with unchanged tenant
// parameters sends identical bytes.
func (cl *Client) Create(ctx context.Context, c *Contract, tenant string, payload []byte, key, ifMatch string) Attempt {
	params, h, not := cl.prepare(ctx, c, tenant, c.params(true))
	if not != nil {
		return *not
	}
	contentType, body, err := c.CreateBody(payload, params)
	if err != nil {
		return Attempt{NotSent: "the request body could not be built: " + err.Error()}
	}
	h.Set("Content-Type", contentType)
	if c.Idempotency != nil && key != "" {
		h.Set(c.Idempotency.Header, key)
	}
	if c.ConditionalUpdate != nil && ifMatch != "" {
		h.Set(c.ConditionalUpdate.Header, ifMatch)
	}
	method, u := c.CreateURL()
	return cl.do(ctx, c, method, u, h, body)
}

// Lookup asks the target, for tenant, for objects carrying settle's
// reference (or, when the path names it, the target's object id).
func (cl *Client) Lookup(ctx context.Context, c *Contract, tenant, reference, remoteRef string) Attempt {
	_, h, not := cl.prepare(ctx, c, tenant, c.params(false))
	if not != nil {
		return *not
	}
	method, u, err := c.LookupURL(reference, remoteRef)
	if err != nil {
		return Attempt{NotSent: err.Error()}
	}
	return cl.do(ctx, c, method, u, h, nil)
}

// prepare reads what a request to c for tenant needs before anything is
// sent: the tenant parameters in need (read only when there are any) and
// the credential, and builds the common headers. A non-nil Attempt means
// nothing may be sent.
func (cl *Client) prepare(ctx context.Context, c *Contract, tenant string, need []string) (map[string]string, http.Header, *Attempt) {
	var params map[string]string
	if len(need) > 0 {
		if cl.params == nil {
			return nil, nil, &Attempt{NotSent: fmt.Sprintf("target %s needs tenant parameters (%s), but this settle reads none", c.Name, strings.Join(need, ", "))}
		}
		var err error
		if params, err = cl.params.TenantParams(ctx, tenant); err != nil {
			if ctx.Err() != nil {
				// Shutting down or given up: the same as a request cut off,
				// which its caller already handles, not a fact to escalate.
				return nil, nil, &Attempt{Failure: failure(ctx.Err())}
			}
			// The store's error is for the log of whoever owns the store;
			// it is not evidence and may quote a query.
			return nil, nil, &Attempt{NotSent: fmt.Sprintf("the parameters of tenant %s could not be read", tenant)}
		}
		var missing []string
		for _, n := range need {
			if strings.TrimSpace(params[n]) == "" {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			return nil, nil, &Attempt{NotSent: missingText(c.Name, tenant, missing), Missing: missing}
		}
	}
	secret := ""
	if c.Auth != nil {
		if secret = cl.secrets.secret(c.Name); secret == "" {
			return nil, nil, &Attempt{NotSent: fmt.Sprintf("the credential of target %s (environment variable %s) was not loaded", c.Name, c.Auth.SecretEnv)}
		}
	}
	h, err := c.headers(params, secret)
	if err != nil {
		return nil, nil, &Attempt{NotSent: "the request headers could not be built: " + err.Error()}
	}
	return params, h, nil
}

// missingText says which parameters a tenant lacks and how to set them.
func missingText(target, tenant string, missing []string) string {
	quoted := make([]string, len(missing))
	flags := make([]string, len(missing))
	for i, m := range missing {
		quoted[i] = strconv.Quote(m)
		flags[i] = "--param " + m + "=…"
	}
	noun := "parameter"
	if len(missing) > 1 {
		noun = "parameters"
	}
	return fmt.Sprintf("tenant %s has no %s %s, which target %s needs (settle tenant set --tenant %s %s)",
		tenant, noun, strings.Join(quoted, ", "), target, tenant, strings.Join(flags, " "))
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
		return Attempt{NotSent: "the request could not be built"}
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
	a := Attempt{Status: resp.StatusCode, Body: b}
	if c.Idempotency != nil && c.Idempotency.ReplayedHeader != "" {
		a.Replayed = strings.EqualFold(strings.TrimSpace(resp.Header.Get(c.Idempotency.ReplayedHeader)), "true")
	}
	return a
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
