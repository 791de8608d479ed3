package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// The "event" of a callback's body.
const (
	EventSettled = "operation.settled" // an operation reached SUCCEEDED, FAILED_TERMINAL or ESCALATED
	EventTest    = "callback.test"     // an administrator's test delivery: acknowledge it, do nothing
)

// Callback is a verified notification from settle.
type Callback struct {
	EventID   string          `json:"-"`     // the Settle-Event-Id header
	Event     string          `json:"event"` // EventSettled (CallbackHandler passes only these on)
	SentAt    time.Time       `json:"sent_at"`
	Operation CallbackEntry   `json:"operation"`
	Raw       json.RawMessage `json:"-"` // the body as signed
}

// CallbackEntry is the operation a callback is about, as of the state it
// reached (which may since have changed: an ESCALATED operation is later
// resolved). It never carries the payload.
type CallbackEntry struct {
	ID        string    `json:"operation_id"`
	Tenant    string    `json:"tenant"`
	Target    string    `json:"target"`
	Type      string    `json:"operation_type"`
	IntentRef string    `json:"intent_ref"`
	State     State     `json:"state"`
	Status    string    `json:"status"`
	RemoteRef string    `json:"remote_ref,omitempty"` // only for SUCCEEDED
	UpdatedAt time.Time `json:"updated_at"`           // when State was reached
}

// EventStatus is what an EventStore knows of an event id.
type EventStatus int

// An event id is new, being processed by another delivery, or processed.
const (
	EventNew EventStatus = iota
	EventInProgress
	EventDone
)

// EventStore remembers which callbacks were processed, so that settle's
// at-least-once delivery is processed once. A store shared by several
// replicas of the receiver (a database table with the id as its key)
// de-duplicates across them; MemoryEvents does within one process.
type EventStore interface {
	// Begin atomically claims id: it returns EventNew and marks id in
	// progress when id is unknown (or was given back by Finish), otherwise
	// its status. A claim whose process died stays in progress until the
	// store expires it; settle retries meanwhile.
	Begin(ctx context.Context, id string) (EventStatus, error)
	// Finish ends a claim: done marks id processed for good; !done
	// forgets it, so the next delivery is processed again.
	Finish(ctx context.Context, id string, done bool) error
}

// CallbackHandler is an http.Handler for settle's client callbacks. It
// answers:
//   - 401 to a signature that is missing, does not match any of Secrets,
//     or was made more than Tolerance from now (an old delivery replayed);
//   - 400 to a body that is not a callback, or no Settle-Event-Id;
//   - 200 to a test delivery, without calling Handle;
//   - 200 to an event id already processed, without calling Handle again;
//   - 409 to an event id being processed by another delivery, and 500 when
//     Handle or Events fails: settle retries both later;
//   - otherwise Handle's verdict: 200 when it returns nil.
type CallbackHandler struct {
	// Secrets are the callback secrets to accept: the current one, and
	// while rotating it with `settle callback set`, the previous one.
	Secrets [][]byte
	// Tolerance is how far a signature's time may be from now (default 5
	// minutes). settle signs every attempt afresh.
	Tolerance time.Duration
	// Events de-duplicates on Settle-Event-Id; required.
	Events EventStore
	// Handle processes a verified, first-seen notification; an error has
	// settle deliver it again later.
	Handle func(ctx context.Context, cb Callback) error
	// MaxBody bounds the body read (default 1 MiB).
	MaxBody int64
	// Log, if set, receives one line per refusal (never the body).
	Log *slog.Logger

	now func() time.Time // tests
}

// ServeHTTP verifies, de-duplicates and handles one delivery.
func (h *CallbackHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.refuse(w, http.StatusMethodNotAllowed, "method not allowed", nil)
		return
	}
	limit := h.MaxBody
	if limit <= 0 {
		limit = 1 << 20
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		h.refuse(w, http.StatusRequestEntityTooLarge, "body unreadable or too large", err)
		return
	}
	tol := h.Tolerance
	if tol <= 0 {
		tol = 5 * time.Minute
	}
	now := time.Now
	if h.now != nil {
		now = h.now
	}
	err = ErrSignatureMissing
	for _, s := range h.Secrets {
		if err = verifyAt(s, r.Header.Get(SignatureHeader), body, tol, now()); err == nil || errors.Is(err, ErrSignatureExpired) {
			break
		}
	}
	if err != nil {
		h.refuse(w, http.StatusUnauthorized, "signature refused", err)
		return
	}
	var cb Callback
	var head struct {
		Event string `json:"event"`
	}
	if json.Unmarshal(body, &head) != nil {
		h.refuse(w, http.StatusBadRequest, "body is not a callback", nil)
		return
	}
	if head.Event == EventTest {
		w.WriteHeader(http.StatusOK)
		return
	}
	cb.EventID, cb.Event, cb.Raw = r.Header.Get(EventIDHeader), head.Event, body
	if head.Event != EventSettled || json.Unmarshal(body, &cb) != nil || cb.Operation.ID == "" || cb.EventID == "" {
		h.refuse(w, http.StatusBadRequest, "not an operation.settled callback with an event id", nil)
		return
	}
	ctx := r.Context()
	st, err := h.Events.Begin(ctx, cb.EventID)
	switch {
	case err != nil:
		h.refuse(w, http.StatusInternalServerError, "event store failed", err)
		return
	case st == EventDone:
		w.WriteHeader(http.StatusOK) // a repeat: acknowledged, not processed again
		return
	case st == EventInProgress:
		w.Header().Set("Retry-After", "5")
		h.refuse(w, http.StatusConflict, "event in progress", nil)
		return
	}
	herr := h.Handle(ctx, cb)
	// The claim is finished even if the request was cancelled meanwhile.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := h.Events.Finish(fctx, cb.EventID, herr == nil); err != nil || herr != nil {
		h.refuse(w, http.StatusInternalServerError, "handling failed", errors.Join(herr, err))
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (h *CallbackHandler) refuse(w http.ResponseWriter, status int, msg string, err error) {
	if h.Log != nil {
		h.Log.Warn("settle callback refused", "status", status, "reason", msg, "err", err)
	}
	http.Error(w, msg, status)
}

// MemoryEvents is an EventStore in memory: it de-duplicates within one
// process, and forgets everything at exit. It keeps a processed id for
// Keep (default 7 days, longer than settle's retries of a notification)
// and an in-progress claim for ten minutes.
type MemoryEvents struct {
	Keep time.Duration

	mu     sync.Mutex
	ids    map[string]memEvent
	pruned time.Time
	now    func() time.Time
}

type memEvent struct {
	status EventStatus
	at     time.Time
}

// Begin implements EventStore.
func (m *MemoryEvents) Begin(_ context.Context, id string) (EventStatus, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	if m.now != nil {
		now = m.now()
	}
	keep := m.Keep
	if keep <= 0 {
		keep = 7 * 24 * time.Hour
	}
	if m.ids == nil {
		m.ids = map[string]memEvent{}
	}
	if now.Sub(m.pruned) > time.Minute {
		for k, e := range m.ids {
			if m.expired(e, now, keep) {
				delete(m.ids, k)
			}
		}
		m.pruned = now
	}
	if e, ok := m.ids[id]; ok && !m.expired(e, now, keep) {
		return e.status, nil
	}
	m.ids[id] = memEvent{status: EventInProgress, at: now}
	return EventNew, nil
}

func (m *MemoryEvents) expired(e memEvent, now time.Time, keep time.Duration) bool {
	if e.status == EventInProgress {
		return now.Sub(e.at) > 10*time.Minute
	}
	return now.Sub(e.at) > keep
}

// Finish implements EventStore.
func (m *MemoryEvents) Finish(_ context.Context, id string, done bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !done {
		delete(m.ids, id)
		return nil
	}
	now := time.Now()
	if m.now != nil {
		now = m.now()
	}
	m.ids[id] = memEvent{status: EventDone, at: now}
	return nil
}
