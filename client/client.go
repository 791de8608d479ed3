// Package client is a Go client for settle's client API (/api/v1) and a
// verifier for settle's signed client callbacks. It uses only the standard
// library, so a client service can import it without the rest of settle.
//
// Register is safe to retry and retries by itself: settle keeps one
// operation per (tenant, operation type, intent reference), so sending the
// same registration again after a timeout returns the operation the lost
// answer described instead of creating a second one. See RetryPolicy.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client calls one settle deployment with one API token (and so for one
// tenant). It is safe for concurrent use.
type Client struct {
	base   *url.URL
	token  string
	http   *http.Client
	retry  RetryPolicy
	agent  string
	sleep  func(ctx context.Context, d time.Duration) error
	jitter func(max time.Duration) time.Duration
}

// An Option configures a Client.
type Option func(*Client)

// WithHTTPClient sends requests through c instead of a client of its own
// (whose transport is http.DefaultTransport's). Leave c.Timeout zero: each
// Register attempt has RetryPolicy.AttemptTimeout, and every call the
// caller's context.
func WithHTTPClient(c *http.Client) Option {
	return func(cl *Client) { cl.http = c }
}

// WithRetry replaces DefaultRetryPolicy for Register; a zero field keeps
// its default.
func WithRetry(p RetryPolicy) Option {
	return func(cl *Client) { cl.retry = p.withDefaults() }
}

// WithUserAgent sets the User-Agent of every request.
func WithUserAgent(ua string) Option {
	return func(cl *Client) { cl.agent = ua }
}

// New returns a client for the settle server at baseURL (its root, such as
// "https://settle.example.com"; the API's /api/v1 is added) that
// authenticates with token, an API token from `settle token create`. It
// fails only for a base URL that is not absolute http or https.
func New(baseURL, token string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimSuffix(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("settle client: base URL %q is not an absolute http(s) URL", baseURL)
	}
	c := &Client{base: u, token: token, http: &http.Client{}, retry: DefaultRetryPolicy,
		agent: "settle-go-client/1", sleep: sleepCtx, jitter: randomJitter}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// call is one request to path (below /api/v1, with its query) and its
// answer: out is decoded from a 2xx body; any other answer is an
// *APIError. The status is returned for the caller's 200/201 distinction.
func (c *Client) call(ctx context.Context, method, path string, body []byte, out any) (int, error) {
	u := c.base.String() + "/api/v1" + path
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return 0, fmt.Errorf("settle client: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.agent)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("settle client: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	// Bodies are small (an operation, a page of at most 500); the bound
	// keeps a misdirected request from reading a large download.
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return resp.StatusCode, fmt.Errorf("settle client: %s %s: reading the answer: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, apiError(resp, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return resp.StatusCode, fmt.Errorf("settle client: %s %s: decoding the answer: %w", method, path, err)
		}
	}
	return resp.StatusCode, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
