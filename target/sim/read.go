package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
)

// lookupSupported answers 404 lookup_not_supported for class D, which offers
// no way to ask about an object, and reports whether the caller may go on.
func (s *Sim) lookupSupported(w http.ResponseWriter) bool {
	if s.cfg.Class == "D" {
		writeError(w, http.StatusNotFound, "lookup_not_supported", "")
		return false
	}
	return true
}

// handleList serves GET /v1/charges?reference=REF: the visible objects
// carrying REF, in creation order.
func (s *Sim) handleList(w http.ResponseWriter, r *http.Request) {
	if !s.lookupSupported(w) {
		return
	}
	ref := r.URL.Query().Get("reference")
	if ref == "" {
		writeError(w, http.StatusBadRequest, "invalid_request", "reference query parameter is required")
		return
	}
	s.mu.Lock()
	now := s.cfg.Now()
	data := []publicObject{}
	for _, rec := range s.objects {
		if rec.obj.Reference == ref && s.visibleLocked(rec, now) {
			data = append(data, rec.obj.clone().public())
		}
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"data": data})
}

// findVisibleLocked returns the object id if lookups may see it now. s.mu
// must be held.
func (s *Sim) findVisibleLocked(id string) (*record, bool) {
	rec, ok := s.byID[id]
	if !ok || !s.visibleLocked(rec, s.cfg.Now()) {
		return nil, false
	}
	return rec, true
}

// handleGet serves GET /v1/charges/{id} with the object's version as ETag.
func (s *Sim) handleGet(w http.ResponseWriter, r *http.Request) {
	if !s.lookupSupported(w) {
		return
	}
	s.mu.Lock()
	rec, ok := s.findVisibleLocked(r.PathValue("id"))
	var obj Object
	if ok {
		obj = rec.obj.clone()
	}
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "")
		return
	}
	w.Header().Set("ETag", etag(obj.Version))
	writeJSON(w, http.StatusOK, obj.public())
}

// update is the body of a class C conditional update.
type update struct {
	Description *string `json:"description"`
	Amount      *int64  `json:"amount"`
}

// handleUpdate serves POST /v1/charges/{id}: a change guarded by If-Match,
// offered only by class C. Checks run in the order 404, 428, 412, 400 so
// that a stale writer learns about the precondition before its body.
func (s *Sim) handleUpdate(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Class != "C" {
		if s.cfg.Class != "D" {
			w.Header().Set("Allow", http.MethodGet)
		}
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "updates need class C")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "could not read body")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.findVisibleLocked(r.PathValue("id"))
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "")
		return
	}
	ifMatch := r.Header.Get("If-Match")
	if ifMatch == "" {
		writeError(w, http.StatusPreconditionRequired, "precondition_required", "If-Match is required")
		return
	}
	if !etagMatches(ifMatch, etag(rec.obj.Version)) {
		writeError(w, http.StatusPreconditionFailed, "precondition_failed", "")
		return
	}
	u, err := parseUpdate(body, rec.obj.Status)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	if u.Description != nil {
		rec.obj.Description = *u.Description
	}
	if u.Amount != nil {
		rec.obj.Amount = *u.Amount
	}
	rec.obj.Version++
	w.Header().Set("ETag", etag(rec.obj.Version))
	writeJSON(w, http.StatusOK, rec.obj.clone().public())
}

func parseUpdate(body []byte, status string) (update, error) {
	var u update
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&u); err != nil {
		return u, errors.New("body must be a JSON object with description and/or amount")
	}
	switch {
	case u.Description == nil && u.Amount == nil:
		return u, errors.New("nothing to update")
	case u.Amount != nil && *u.Amount <= 0:
		return u, errors.New("amount must be an integer greater than zero")
	case u.Amount != nil && status != StatusPending:
		return u, errors.New("amount can change only while the charge is pending")
	}
	return u, nil
}

// etagMatches applies If-Match's strong comparison: "*" or any listed tag
// equal to current; weak tags never match.
func etagMatches(header, current string) bool {
	for _, tag := range strings.Split(header, ",") {
		if tag = strings.TrimSpace(tag); tag == "*" || tag == current {
			return true
		}
	}
	return false
}

// handleObjects serves GET /_sim/objects: every object with every field.
func (s *Sim) handleObjects(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.Objects())
}

// handleDuplicate serves POST /_sim/duplicate?reference=REF (see Duplicate).
func (s *Sim) handleDuplicate(w http.ResponseWriter, r *http.Request) {
	ref := r.URL.Query().Get("reference")
	if ref == "" {
		writeError(w, http.StatusBadRequest, "invalid_request", "reference query parameter is required")
		return
	}
	obj, err := s.Duplicate(ref)
	if errors.Is(err, ErrNotFound) {
		writeError(w, http.StatusNotFound, "not_found", "no object carries that reference")
		return
	}
	writeJSON(w, http.StatusCreated, obj)
}
