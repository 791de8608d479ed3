package client

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Operation is an approved operation to register: one business intent,
// identified by (Type, IntentRef) within the token's tenant.
type Operation struct {
	Target    string // a target configured in settle, e.g. "payments"
	Type      string // the operation type, e.g. "charge"
	IntentRef string // the business intent, e.g. the approval's id; never personal data
	// Payload is the approved request body, a JSON object once encoded
	// with encoding/json (a struct, a map, or json.RawMessage for bytes
	// already encoded). Numbers must keep their exact value as an IEEE-754
	// double; send larger or more precise amounts as strings.
	Payload any
	// Deadline, when not zero, is when an unresolved operation is
	// escalated; zero means the target's default.
	Deadline time.Time
}

// State is an operation's state in settle's ledger.
type State string

// The states, in the order an operation can pass through them.
const (
	Prepared       State = "PREPARED"        // registered, not yet sent ("Scheduled")
	InFlight       State = "IN_FLIGHT"       // being sent ("Sending")
	Succeeded      State = "SUCCEEDED"       // confirmed by the target; final
	FailedTerminal State = "FAILED_TERMINAL" // proven not applied; final
	Unknown        State = "UNKNOWN"         // outcome not yet known; settle is finding out
	Escalated      State = "ESCALATED"       // awaiting a person's resolution
)

// Final reports whether s can no longer change.
func (s State) Final() bool { return s == Succeeded || s == FailedTerminal }

// Entry is an operation as settle's ledger holds it. It never carries the
// payload, only its hash.
type Entry struct {
	ID        string `json:"operation_id"`
	Tenant    string `json:"tenant"`
	Target    string `json:"target"`
	Type      string `json:"operation_type"`
	IntentRef string `json:"intent_ref"`
	State     State  `json:"state"`
	// Status is the state in plain language ("Confirmation pending",
	// "Under review by payments-team").
	Status      string `json:"status"`
	RemoteKey   string `json:"remote_key"`   // the idempotency key sent to the target
	PayloadHash string `json:"payload_hash"` // hex SHA-256 of the canonical payload
	// RemoteRef is the target's id of the object, set only once
	// SUCCEEDED.
	RemoteRef string     `json:"remote_ref,omitempty"`
	Attempts  int        `json:"attempts"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
	Deadline  *time.Time `json:"deadline,omitempty"`
}

type createRequest struct {
	Target    string          `json:"target"`
	Type      string          `json:"operation_type"`
	IntentRef string          `json:"intent_ref"`
	Payload   json.RawMessage `json:"payload"`
	Deadline  *time.Time      `json:"deadline,omitempty"`
}

// Register registers op and returns its entry, and created: true when the
// answer was 201 (this registration created it), false for 200 (the intent
// was already registered with the same payload). It retries as the
// client's RetryPolicy says; after a lost answer a retry's 200 may report
// an operation this very call created as not created, but it is always the
// one operation of the intent.
//
// Errors: an *APIError matching ErrPayloadConflict (returned at once),
// ErrInvalid, ErrMalformedRequest, ErrBodyTooLarge, ErrUnauthorized or
// ErrRateLimited; after the last attempt the last 5xx or connection
// error; the context's error once it ends; an error of its own when the
// payload cannot be encoded.
func (c *Client) Register(ctx context.Context, op Operation) (e Entry, created bool, err error) {
	payload, err := json.Marshal(op.Payload)
	if err != nil {
		return Entry{}, false, fmt.Errorf("settle client: encoding the payload: %w", err)
	}
	req := createRequest{Target: op.Target, Type: op.Type, IntentRef: op.IntentRef, Payload: payload}
	if !op.Deadline.IsZero() {
		d := op.Deadline.UTC()
		req.Deadline = &d
	}
	body, err := json.Marshal(req)
	if err != nil {
		return Entry{}, false, fmt.Errorf("settle client: encoding the request: %w", err)
	}
	for attempt := 1; ; attempt++ {
		e, status, err := c.registerOnce(ctx, body)
		if err == nil {
			return e, status == http.StatusCreated, nil
		}
		if attempt >= c.retry.MaxAttempts || !retryable(ctx, err) {
			return Entry{}, false, err
		}
		if serr := c.sleep(ctx, c.retry.wait(attempt, err, c.jitter)); serr != nil {
			return Entry{}, false, fmt.Errorf("settle client: register: %w (after %d attempts, the last: %v)", serr, attempt, err)
		}
	}
}

func (c *Client) registerOnce(ctx context.Context, body []byte) (Entry, int, error) {
	actx, cancel := context.WithTimeout(ctx, c.retry.AttemptTimeout)
	defer cancel()
	var e Entry
	status, err := c.call(actx, http.MethodPost, "/operations", body, &e)
	return e, status, err
}

// Get returns the operation with id. Errors: an *APIError matching
// ErrNotFound (also for another tenant's operation), ErrUnauthorized or
// ErrRateLimited, or the request's own error.
func (c *Client) Get(ctx context.Context, id string) (Entry, error) {
	var e Entry
	_, err := c.call(ctx, http.MethodGet, "/operations/"+url.PathEscape(id), nil, &e)
	return e, err
}

// FindByIntent returns the operation registered for the intent (opType,
// intentRef). Errors: one matching ErrNotFound when there is none, and
// those of List.
func (c *Client) FindByIntent(ctx context.Context, opType, intentRef string) (Entry, error) {
	for e, err := range c.List(ctx, ListOptions{IntentRef: intentRef}) {
		if err != nil {
			return Entry{}, err
		}
		if e.Type == opType {
			return e, nil
		}
	}
	return Entry{}, fmt.Errorf("settle client: no %q operation with intent reference %q: %w", opType, intentRef, ErrNotFound)
}

// ListOptions filters List; the zero value lists every operation.
type ListOptions struct {
	IntentRef string // only this intent reference (of any operation type)
	State     State  // only operations in this state
	// PageSize is how many operations each request fetches, 1-500; 0
	// means the server's default (50).
	PageSize int
}

type listPage struct {
	Operations []Entry `json:"operations"`
	NextCursor string  `json:"next_cursor"`
}

// List iterates over the tenant's operations that opts selects, newest
// first, fetching one page at a time as the loop goes (keyset pagination:
// an operation registered meanwhile does not shift the pages). A failed
// request ends the iteration with its error (an *APIError matching
// ErrInvalid for a bad filter, ErrUnauthorized, ErrRateLimited, or the
// request's own); breaking out of the loop stops fetching.
func (c *Client) List(ctx context.Context, opts ListOptions) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		q := url.Values{}
		if opts.IntentRef != "" {
			q.Set("intent_ref", opts.IntentRef)
		}
		if opts.State != "" {
			q.Set("state", string(opts.State))
		}
		if opts.PageSize != 0 {
			q.Set("limit", strconv.Itoa(opts.PageSize))
		}
		for {
			path := "/operations"
			if len(q) > 0 {
				path += "?" + q.Encode()
			}
			var page listPage
			if _, err := c.call(ctx, http.MethodGet, path, nil, &page); err != nil {
				yield(Entry{}, err)
				return
			}
			for _, e := range page.Operations {
				if !yield(e, nil) {
					return
				}
			}
			if page.NextCursor == "" {
				return
			}
			q.Set("cursor", page.NextCursor)
		}
	}
}

// Await polls the operation with id every interval (0: one second) until
// it is final or ESCALATED, and returns it; an ESCALATED operation waits
// for a person, which can take hours. It returns Get's error, or the
// context's once it ends.
func (c *Client) Await(ctx context.Context, id string, interval time.Duration) (Entry, error) {
	if interval <= 0 {
		interval = time.Second
	}
	for {
		e, err := c.Get(ctx, id)
		if err != nil {
			return Entry{}, err
		}
		if e.State.Final() || e.State == Escalated {
			return e, nil
		}
		if err := c.sleep(ctx, interval); err != nil {
			return Entry{}, fmt.Errorf("settle client: awaiting %s (last %s): %w", id, e.State, err)
		}
	}
}
