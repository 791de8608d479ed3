package sim_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"settle/target/sim"
)

// testKey is the secret key the stripe tests' simulators accept.
const testKey = "sk_test_51SimulatorSecretKey0123456789wxyz"

// startStripe serves cfg as the stripe flavor with testKey unless cfg sets
// a key of its own.
func startStripe(t *testing.T, cfg sim.Config) *sim.Server {
	t.Helper()
	cfg.Flavor = sim.FlavorStripe
	if cfg.APIKey == "" {
		cfg.APIKey = testKey
	}
	return start(t, cfg)
}

// as is how a request authenticates and whom it acts for; the zero value is
// the platform with the right key and no idempotency key.
type as struct {
	account string // Stripe-Account; "" sends none
	key     string // Idempotency-Key; "" sends none
	auth    string // Authorization; "" means "Bearer " + testKey, "-" sends none
}

func (a as) header() map[string]string {
	h := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	switch a.auth {
	case "":
		h["Authorization"] = "Bearer " + testKey
	case "-":
	default:
		h["Authorization"] = a.auth
	}
	if a.account != "" {
		h["Stripe-Account"] = a.account
	}
	if a.key != "" {
		h["Idempotency-Key"] = a.key
	}
	return h
}

// intent is a valid, confirmed create body for ref charging amount with a
// card that succeeds; extra parameters ("k=v") are appended.
func intent(ref string, amount int, extra ...string) string {
	form := fmt.Sprintf("amount=%d&currency=EUR&payment_method=pm_card_visa&confirm=true"+
		"&metadata[settle_ref]=%s&metadata[settle_tenant]=acme", amount, url.QueryEscape(ref))
	for _, e := range extra {
		form += "&" + e
	}
	return form
}

// createIntent posts form to POST /v1/payment_intents.
func createIntent(t *testing.T, srv *sim.Server, a as, form string) reply {
	t.Helper()
	return mustSend(t, http.MethodPost, srv.URL()+"/v1/payment_intents", a.header(), []byte(form))
}

// getIntent retrieves an intent by id.
func getIntent(t *testing.T, srv *sim.Server, a as, id string) reply {
	t.Helper()
	return mustSend(t, http.MethodGet, srv.URL()+"/v1/payment_intents/"+id, a.header(), nil)
}

// search runs a search query and returns the reply.
func search(t *testing.T, srv *sim.Server, a as, query string, extra ...string) reply {
	t.Helper()
	u := srv.URL() + "/v1/payment_intents/search?query=" + url.QueryEscape(query)
	if len(extra) > 0 {
		u += "&" + strings.Join(extra, "&")
	}
	return mustSend(t, http.MethodGet, u, a.header(), nil)
}

// searchIDs returns the ids a successful search lists.
func searchIDs(t *testing.T, srv *sim.Server, a as, query string) []string {
	t.Helper()
	r := search(t, srv, a, query)
	wantStatus(t, r, http.StatusOK)
	ids := []string{}
	for _, d := range r.fields(t)["data"].([]any) {
		ids = append(ids, d.(map[string]any)["id"].(string))
	}
	return ids
}

// stripeErr returns the "error" object of a Stripe-shaped error body.
func stripeErr(t *testing.T, r reply) map[string]any {
	t.Helper()
	e, ok := r.fields(t)["error"].(map[string]any)
	if !ok {
		t.Fatalf("body %s is not a Stripe error", r.body)
	}
	return e
}

// wantStripeError checks the status and the error's type and code ("" for
// no code).
func wantStripeError(t *testing.T, r reply, status int, typ, code string) map[string]any {
	t.Helper()
	wantStatus(t, r, status)
	e := stripeErr(t, r)
	gotCode, _ := e["code"].(string)
	if e["type"] != typ || gotCode != code {
		t.Fatalf("error type %v code %v; want %s %q: %s", e["type"], e["code"], typ, code, r.body)
	}
	if msg, _ := e["message"].(string); msg == "" {
		t.Errorf("error without a message: %s", r.body)
	}
	return e
}

// id returns the id of an intent in a reply.
func id(t *testing.T, r reply) string {
	t.Helper()
	s, _ := r.fields(t)["id"].(string)
	if !strings.HasPrefix(s, "pi_") {
		t.Fatalf("id %q, want pi_…; body %s", s, r.body)
	}
	return s
}
