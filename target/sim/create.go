package sim

import (
	"errors"
	"io"
	"net"
	"net/http"
	"time"
)

// maxBody bounds a request body; a provider would refuse larger ones too.
const maxBody = 1 << 20

// response is the answer a create request earns when no fault interferes.
// Class A stores it to replay for the same key.
type response struct {
	status int
	body   []byte
}

func errorResponse(status int, code string) response {
	return response{status: status, body: mustJSON(apiError{Error: code})}
}

// keyEntry is a class A idempotency key.
type keyEntry struct {
	hash      string // of the first request's body
	first     time.Time
	executing bool
	done      chan struct{} // closed once the executing request has answered
	result    response
}

// handleCreate serves POST /v1/charges. A scripted or drawn fault is taken
// only once the body is valid, so a 400 never consumes a scripted fault.
// Faults before commit act first; faults after commit replace or hold back
// whatever answer the request earned (a new object, a replay or an
// idempotency error).
func (s *Sim) handleCreate(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests++
	s.mu.Unlock()

	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, "body_too_large", "")
			return
		}
		writeError(w, http.StatusBadRequest, "invalid_request", "could not read body")
		return
	}
	in, err := parseCreate(body, s.cfg.ReferenceField, s.cfg.TenantField)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}

	fault := s.nextFault()
	switch fault {
	case FailBeforeCommit:
		writeError(w, http.StatusServiceUnavailable, "unavailable", "")
		return
	case Reset:
		hangUp(w, true)
		return
	case RateLimited:
		writeError(w, http.StatusTooManyRequests, "rate_limited", "")
		return
	}

	res, replayed, release := s.execute(r.Header.Get("Idempotency-Key"), in)
	// A class A key stays "executing" until the answer is out, so a slow
	// answer keeps colliding with concurrent retries, as on a real provider.
	defer release()
	switch fault {
	case FailAfterCommit:
		writeError(w, http.StatusInternalServerError, "internal_error", "")
		return
	case DropAfterCommit:
		hangUp(w, false)
		return
	case Slow:
		s.sleep(s.cfg.SlowDelay)
	}
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	writeRaw(w, res.status, res.body)
}

// execute commits a new object or, for a class A key already seen inside its
// window, answers from the key. release must be called once the answer is
// written.
func (s *Sim) execute(key string, in createInput) (res response, replayed bool, release func()) {
	noop := func() {}
	if s.cfg.Class != "A" || key == "" {
		s.sleep(s.cfg.Latency)
		return s.commit(key, in, nil), false, noop
	}
	for {
		s.mu.Lock()
		e := s.keys[key]
		if e != nil && !e.executing && !s.cfg.Now().Before(e.first.Add(s.cfg.Retention)) {
			// Past the window the provider has forgotten the key: the
			// request runs again and creates a second object.
			delete(s.keys, key)
			e = nil
		}
		switch {
		case e == nil:
			e = &keyEntry{hash: in.hash, first: s.cfg.Now(), executing: true, done: make(chan struct{})}
			s.keys[key] = e
			s.mu.Unlock()
			s.sleep(s.cfg.Latency)
			return s.commit(key, in, e), false, func() {
				s.mu.Lock()
				e.executing = false
				close(e.done)
				s.mu.Unlock()
			}
		case e.hash != in.hash:
			s.mu.Unlock()
			return errorResponse(s.cfg.MismatchStatus, "idempotency_key_mismatch"), false, noop
		case e.executing && s.cfg.ConflictOnConcurrent:
			s.mu.Unlock()
			return errorResponse(http.StatusConflict, "idempotency_key_in_use"), false, noop
		case e.executing:
			done := e.done
			s.mu.Unlock()
			select {
			case <-done:
				continue // look again: now a replay, unless the window has passed
			case <-s.ctx.Done():
				return errorResponse(http.StatusServiceUnavailable, "unavailable"), false, noop
			}
		default:
			res := e.result
			s.mu.Unlock()
			return res, true, noop
		}
	}
}

// commit records a new object and returns the answer for it; when e is not
// nil the answer is also stored under that idempotency key in the same
// critical section, so no replay can see the key without its result.
func (s *Sim) commit(key string, in createInput, e *keyEntry) response {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.cfg.Now()
	rec := &record{committed: now, obj: Object{
		ID:             newID("ch_"),
		Reference:      in.reference,
		Tenant:         in.tenant,
		Amount:         in.amount,
		Currency:       in.currency,
		Status:         StatusSucceeded,
		Created:        now.Unix(),
		Description:    in.description,
		Metadata:       in.metadata,
		PayloadSHA256:  in.hash,
		IdempotencyKey: key,
		Version:        1,
	}}
	if s.cfg.Async {
		rec.obj.Status = StatusPending
	}
	s.addLocked(rec)
	var res response
	if s.cfg.Async {
		id := rec.obj.ID
		s.goLocked(func() { s.completeLater(id, StatusPending) })
		res = response{status: http.StatusAccepted, body: mustJSON(map[string]string{"id": id, "status": StatusPending})}
	} else {
		s.emitLocked(rec.obj)
		res = response{status: http.StatusCreated, body: mustJSON(rec.obj.public())}
	}
	if e != nil {
		e.result = res
	}
	return res
}

// addLocked stores a new record. s.mu must be held.
func (s *Sim) addLocked(rec *record) {
	s.objects = append(s.objects, rec)
	s.byID[rec.obj.ID] = rec
}

// completeLater moves an object still in status from (StatusPending, or a
// FlavorStripe "processing") to succeeded after AsyncDelay.
func (s *Sim) completeLater(id, from string) {
	s.sleep(s.cfg.AsyncDelay)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	rec := s.byID[id]
	if rec.obj.Status != from {
		return
	}
	rec.obj.Status = StatusSucceeded
	rec.obj.Version++
	s.emitLocked(rec.obj)
}

// hangUp closes the client's connection without an HTTP response: with a
// TCP reset when reset is true (SO_LINGER 0), else with an orderly close.
func hangUp(w http.ResponseWriter, reset bool) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler) // not HTTP/1: aborting is the nearest thing
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok && reset {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}
