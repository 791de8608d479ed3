package sim

import (
	"errors"
	"io"
	"mime"
	"net/http"
)

// handleStripeCreate serves POST /v1/payment_intents with Stripe's
// idempotency (https://docs.stripe.com/api/idempotent_requests): the status
// and body of the first request with a key are saved once its execution
// has begun, whatever they are — a 500 included — and returned to every
// later request with the same key and parameters, with Idempotent-Replayed:
// true, until Retention after the key's first use. A request that fails
// validation, collides with an executing one or fails before execution
// begins saves nothing.
//
// Order: Idempotency-Key length, content type, form syntax, then the key
// (a reused key is compared before the parameters are validated, as
// Stripe's idempotency layer sits in front of the endpoint), then
// validation, then the fault. A scripted fault is therefore spent only by a
// request that would otherwise have executed or replayed.
func (s *Sim) handleStripeCreate(w http.ResponseWriter, r *http.Request, account string) {
	key := r.Header.Get("Idempotency-Key")
	if len(key) > maxKeyLength {
		writeStripeError(w, invalidParam("", "", "Idempotency-Key must be at most 255 characters long."))
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
		writeStripeError(w, invalidParam("", "", "Content-Type must be application/x-www-form-urlencoded: "+
			"the v1 API takes form-encoded parameters (amount=1000&metadata[order]=7), not JSON."))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeStripeError(w, &stripeError{status: http.StatusRequestEntityTooLarge, Type: typeInvalidRequest, Message: "Request body too large."})
			return
		}
		writeStripeError(w, invalidParam("", "", "Could not read the request body."))
		return
	}
	params, err := decodeForm(string(body))
	if err != nil {
		writeStripeError(w, invalidParam("", "", "Invalid request: "+err.Error()+"."))
		return
	}
	in, invalid := parseIntent(params, s.cfg.ReferenceField, s.cfg.TenantField)
	in.bodyHash = sha256Hex(body)

	s.mu.Lock()
	slot := account + "\x00" + key // keys are scoped per account
	var e *keyEntry
	if key != "" {
		e = s.keys[slot]
		if e != nil && !e.executing && !s.cfg.Now().Before(e.first.Add(s.cfg.Retention)) {
			// Pruned: Stripe runs the request again as a new one.
			delete(s.keys, slot)
			e = nil
		}
	}
	if e != nil {
		switch {
		case e.hash != in.hash:
			s.mu.Unlock()
			writeStripeError(w, errKeyReused())
			return
		case e.executing:
			s.mu.Unlock()
			writeStripeError(w, errKeyInUse())
			return
		}
		fault := s.nextFaultLocked()
		saved := e.result
		s.mu.Unlock()
		s.replayStripe(w, saved, fault)
		return
	}
	if invalid != nil {
		s.mu.Unlock()
		writeStripeError(w, invalid)
		return
	}
	fault := s.nextFaultLocked()
	if fault == FailBeforeCommit || fault == Reset || fault == RateLimited {
		s.mu.Unlock()
		refuseStripe(w, fault)
		return
	}
	if key != "" {
		e = &keyEntry{hash: in.hash, first: s.cfg.Now(), executing: true, done: make(chan struct{})}
		s.keys[slot] = e
	}
	s.mu.Unlock()
	if e != nil {
		// The key stays "executing" until the answer is out, so that a slow
		// answer keeps colliding with retries, as on Stripe.
		defer s.release(e)
	}

	s.sleep(s.cfg.Latency)
	res := s.commitIntent(account, key, in, fault == FailAfterCommit, e)
	switch fault {
	case DropAfterCommit:
		hangUp(w, false)
		return
	case Slow:
		s.sleep(s.cfg.SlowDelay)
	}
	writeRaw(w, res.status, res.body)
}

// release marks a key's first request as answered.
func (s *Sim) release(e *keyEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e.executing = false
	close(e.done)
}

// commitIntent records a new PaymentIntent and returns the answer it earned:
// 200 with the intent, 402 with it when the card was declined, or — when
// failed, the FailAfterCommit fault — 500. With e, the answer is saved
// under the key in the same critical section, so that no replay can see the
// key without its answer.
func (s *Sim) commitIntent(account, key string, in intentInput, failed bool, e *keyEntry) response {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.cfg.Now()
	status, declined := in.outcome()
	description, _ := in.params["description"].(string)
	rec := &record{committed: now, intent: &in, obj: Object{
		ID:             newID("pi_"),
		Reference:      in.reference,
		Tenant:         in.tenant,
		Amount:         in.amount,
		Currency:       in.currency,
		Status:         status,
		Created:        now.Unix(),
		Description:    description,
		Metadata:       mustJSON(in.metadata),
		PayloadSHA256:  in.bodyHash,
		IdempotencyKey: key,
		Version:        1,
		Account:        account,
		Params:         in.paramsJSON,
	}}
	s.addLocked(rec)
	if status == StatusProcessing {
		id := rec.obj.ID
		s.goLocked(func() { s.completeLater(id, StatusProcessing) })
	}
	var res response
	switch {
	case failed:
		res = errInternal().response()
	case declined:
		err := cardDeclined()
		err.PaymentIntent = intentOf(rec)
		res = err.response()
	default:
		res = response{status: http.StatusOK, body: mustJSON(intentOf(rec))}
	}
	if e != nil {
		e.result = res
	}
	return res
}

// replayStripe answers a request whose key holds a saved answer. A fault
// still applies: it is about the connection and the servers, not the key,
// and a FailAfterCommit here leaves the saved answer as it was.
func (s *Sim) replayStripe(w http.ResponseWriter, saved response, fault Fault) {
	switch fault {
	case FailBeforeCommit, Reset, RateLimited:
		refuseStripe(w, fault)
		return
	case FailAfterCommit:
		writeStripeError(w, errInternal())
		return
	case DropAfterCommit:
		hangUp(w, false)
		return
	case Slow:
		s.sleep(s.cfg.SlowDelay)
	}
	w.Header().Set("Idempotent-Replayed", "true")
	writeRaw(w, saved.status, saved.body)
}

// refuseStripe answers for a fault that strikes before execution begins.
func refuseStripe(w http.ResponseWriter, fault Fault) {
	switch fault {
	case Reset:
		hangUp(w, true)
	case RateLimited:
		writeStripeError(w, &stripeError{status: http.StatusTooManyRequests, Type: typeInvalidRequest, Code: "rate_limit",
			Message: "Too many requests hit the API too quickly."})
	default:
		writeStripeError(w, errAPI(http.StatusServiceUnavailable, "The service is temporarily unavailable; nothing was done. Try again."))
	}
}

func errInternal() *stripeError {
	return errAPI(http.StatusInternalServerError, "An unknown error occurred.")
}

func errKeyReused() *stripeError {
	return &stripeError{status: http.StatusBadRequest, Type: typeIdempotency,
		Message: "Keys for idempotent requests can only be used with the same parameters they were first used with. " +
			"Try using a key other than the one used for the original request."}
}

func errKeyInUse() *stripeError {
	return &stripeError{status: http.StatusConflict, Type: typeIdempotency, Code: "idempotency_key_in_use",
		Message: "There is currently another in-progress request using this Idempotency Key. " +
			"Retry this request later, once the first has finished."}
}
