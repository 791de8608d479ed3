package sim

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// idPattern bounds what a 404 may repeat of a requested id.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9_]{1,255}$`)

// handleStripeGet serves GET /v1/payment_intents/{id}: read-after-write, so
// an intent is visible the moment it is committed, but only to its own
// account; another account's intent is "No such payment_intent", as on
// Stripe.
func (s *Sim) handleStripeGet(w http.ResponseWriter, r *http.Request, account string) {
	id := r.PathValue("id")
	s.mu.Lock()
	var pi *paymentIntent
	if rec := s.byID[id]; rec != nil && rec.intent != nil && rec.obj.Account == account {
		pi = intentOf(rec)
	}
	var body []byte
	if pi != nil {
		body = mustJSON(pi)
	}
	s.mu.Unlock()
	if pi == nil {
		msg := "No such payment_intent."
		if idPattern.MatchString(id) {
			msg = "No such payment_intent: '" + id + "'"
		}
		writeStripeError(w, &stripeError{status: http.StatusNotFound, Type: typeInvalidRequest, Code: "resource_missing", Param: "intent", Message: msg})
		return
	}
	writeRaw(w, http.StatusOK, body)
}

// searchResult is Stripe's answer to a search.
type searchResult struct {
	Object   string           `json:"object"`
	Data     []*paymentIntent `json:"data"`
	HasMore  bool             `json:"has_more"`
	NextPage *string          `json:"next_page"`
	URL      string           `json:"url"`
}

const searchURL = "/v1/payment_intents/search"

// handleStripeSearch serves GET /v1/payment_intents/search?query=…: the
// caller's intents that match the query and were committed at least the
// lookup lag ago (Stripe's search is eventually consistent), newest first,
// limit (1–100, default 10) to a page, with next_page to go on.
func (s *Sim) handleStripeSearch(w http.ResponseWriter, r *http.Request, account string) {
	values := r.URL.Query()
	for name := range values {
		if name != "query" && name != "limit" && name != "page" {
			writeStripeError(w, invalidParam("parameter_unknown", paramName(name), "Received unknown parameter: "+quoteName(name)))
			return
		}
	}
	raw := values.Get("query")
	if raw == "" {
		writeStripeError(w, invalidParam("parameter_missing", "query", "Missing required param: query."))
		return
	}
	q, err := parseSearch(raw)
	if err != nil {
		writeStripeError(w, invalidParam("", "query", "Invalid search query: "+err.Error()+". See /_sim/docs#search."))
		return
	}
	limit := 10
	if v := values.Get("limit"); values.Has("limit") {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			writeStripeError(w, invalidParam("parameter_invalid_integer", "limit", "limit must be a whole number from 1 to 100."))
			return
		}
		limit = n
	}
	offset := 0
	if v := values.Get("page"); v != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(v, "page_"))
		if err != nil || !strings.HasPrefix(v, "page_") || n < 0 {
			writeStripeError(w, invalidParam("", "page", "Invalid page: pass the next_page of an earlier result."))
			return
		}
		offset = n
	}

	s.mu.Lock()
	now := s.cfg.Now()
	var found []*paymentIntent
	for i := len(s.objects) - 1; i >= 0; i-- {
		rec := s.objects[i]
		if rec.intent != nil && rec.obj.Account == account && s.visibleLocked(rec, now) && q.matches(rec) {
			found = append(found, intentOf(rec))
		}
	}
	res := searchResult{Object: "search_result", Data: []*paymentIntent{}, URL: searchURL}
	if offset < len(found) {
		end := min(offset+limit, len(found))
		res.Data = found[offset:end]
		if end < len(found) {
			res.HasMore = true
			next := "page_" + strconv.Itoa(end)
			res.NextPage = &next
		}
	}
	body := mustJSON(res)
	s.mu.Unlock()
	writeRaw(w, http.StatusOK, body)
}
