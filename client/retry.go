package client

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"time"
)

// RetryPolicy is how Register retries. An attempt is retried when it timed
// out (AttemptTimeout), when the connection failed or broke before an
// answer was read, and on any 5xx answer (settle's 500 internal and 503
// overloaded, or a proxy's 502 and 504): in each case the registration may
// or may not have been committed, and sending it again with the same
// intent reference and payload is safe, since settle answers a repeat with
// the operation already registered (200) rather than a second one. A 4xx
// is never retried: nothing was done and the same request would be refused
// again (a 429 says when the token may send again in APIError.RetryAfter;
// waiting is the caller's choice). A 409 payload_conflict in particular
// is returned at once. The caller's context bounds everything: once it
// ends, Register stops and returns its error.
//
// The wait before retry n (n = 1, 2, …) is drawn uniformly from
// [d/2, d], with d = Initial·2^(n-1) capped at Max, and is at least a
// 503's Retry-After.
type RetryPolicy struct {
	// MaxAttempts bounds the attempts, the first included; 1 disables
	// retries. Default 6.
	MaxAttempts int
	// Initial is the first wait (default 200ms), Max the longest (default
	// 5s).
	Initial, Max time.Duration
	// AttemptTimeout bounds each attempt, from sending to the whole answer
	// read (default 15s). A registration waits for settle's commit, which
	// under load takes longer than a read.
	AttemptTimeout time.Duration
}

// DefaultRetryPolicy is the policy of a Client made without WithRetry: six
// attempts over about 10 seconds of waits, 15 seconds each at most.
var DefaultRetryPolicy = RetryPolicy{MaxAttempts: 6, Initial: 200 * time.Millisecond, Max: 5 * time.Second,
	AttemptTimeout: 15 * time.Second}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultRetryPolicy.MaxAttempts
	}
	if p.Initial <= 0 {
		p.Initial = DefaultRetryPolicy.Initial
	}
	if p.Max <= 0 {
		p.Max = DefaultRetryPolicy.Max
	}
	if p.Max < p.Initial {
		p.Max = p.Initial
	}
	if p.AttemptTimeout <= 0 {
		p.AttemptTimeout = DefaultRetryPolicy.AttemptTimeout
	}
	return p
}

// wait is how long to wait before retry n (n ≥ 1) after err.
func (p RetryPolicy) wait(n int, err error, jitter func(time.Duration) time.Duration) time.Duration {
	d := p.Initial
	for i := 1; i < n && d < p.Max; i++ {
		d *= 2
	}
	d = min(d, p.Max)
	d = d/2 + jitter(d-d/2)
	var ae *APIError
	if errors.As(err, &ae) && ae.RetryAfter > d {
		d = ae.RetryAfter
	}
	return d
}

// retryable reports whether an attempt that failed with err may be sent
// again; ctx is the caller's, whose end is never retried.
func retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Status >= http.StatusInternalServerError
	}
	// No answer, or a broken one: a timeout of the attempt, a refused or
	// reset connection, a body cut short.
	return true
}

// randomJitter draws uniformly from [0, max].
func randomJitter(max time.Duration) time.Duration {
	if max <= 0 {
		return 0
	}
	return rand.N(max + 1)
}
