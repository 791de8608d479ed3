package sim

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"unicode"
)

// The flavors of API the simulator speaks (Config.Flavor).
const (
	// FlavorSettle is settle's own charges API with capability classes A–D.
	FlavorSettle = ""
	// FlavorStripe is the part of Stripe's PaymentIntents API that decides
	// what settle may do with an ambiguous outcome; GET /_sim/docs lists it.
	FlavorStripe = "stripe"
)

// PlatformAccount owns FlavorStripe objects created without a Stripe-Account
// header: the platform's own account, in Stripe Connect's terms.
const PlatformAccount = "acct_platform"

// APIKeyEnv names the environment variable that settle sim reads the
// FlavorStripe secret key from, and that the printed contract tells settle
// to read it from.
const APIKeyEnv = "SETTLE_SIM_API_KEY"

// accountPattern is what the simulator accepts in Stripe-Account: every
// well-formed account id exists, as if the platform had connected it.
var accountPattern = regexp.MustCompile(`^acct_[A-Za-z0-9_]{1,64}$`)

// maxKeyLength is Stripe's documented limit on an Idempotency-Key.
const maxKeyLength = 255

// checkStripeFlavor refuses FlavorSettle settings that Stripe has no
// counterpart for, so that nobody believes a setting took effect.
func (c Config) checkStripeFlavor() error {
	switch {
	case c.Class != "":
		return errors.New("sim: Class does not apply to the stripe flavor (it behaves as Stripe: classes A and B)")
	case c.APIKey == "":
		return errors.New("sim: APIKey is required in the stripe flavor")
	case strings.IndexFunc(c.APIKey, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		// Not echoed: it is a secret, however malformed.
		return errors.New("sim: APIKey must not contain spaces or control characters")
	case c.MismatchStatus != 0:
		return errors.New("sim: MismatchStatus does not apply to the stripe flavor (Stripe answers 400 idempotency_error)")
	case c.Async:
		return errors.New("sim: Async does not apply to the stripe flavor (confirm with payment_method=pm_card_processing instead)")
	case c.WebhookURL != "" || c.WebhookSecret != "":
		return errors.New("sim: the stripe flavor sends no webhooks; leave WebhookURL and WebhookSecret empty")
	}
	return nil
}

// routeStripe registers FlavorStripe's endpoints. Every /v1 endpoint needs
// the secret key; the /_sim control endpoints need none, as in FlavorSettle.
func (s *Sim) routeStripe() {
	s.mux.HandleFunc("POST /v1/payment_intents", s.stripeAuth(s.handleStripeCreate))
	s.mux.HandleFunc("GET /v1/payment_intents/search", s.stripeAuth(s.handleStripeSearch))
	s.mux.HandleFunc("GET /v1/payment_intents/{id}", s.stripeAuth(s.handleStripeGet))
	s.mux.HandleFunc("/v1/", s.stripeAuth(func(w http.ResponseWriter, r *http.Request, _ string) {
		writeStripeError(w, unrecognisedURL(r))
	}))
	s.mux.HandleFunc("GET /_sim/objects", s.handleObjects)
	s.mux.HandleFunc("POST /_sim/duplicate", s.handleDuplicate)
	s.mux.HandleFunc("GET /_sim/docs", s.handleStripeDocs)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeStripeError(w, unrecognisedURL(r))
	})
}

func unrecognisedURL(r *http.Request) *stripeError {
	return &stripeError{status: http.StatusNotFound, Type: typeInvalidRequest,
		Message: fmt.Sprintf("Unrecognized request URL (%s: %s).", r.Method, r.URL.Path)}
}

// idPrefix is the prefix of the ids this flavor's objects get.
func (s *Sim) idPrefix() string {
	if s.cfg.Flavor == FlavorStripe {
		return "pi_"
	}
	return "ch_"
}

// stripeHandler serves a /v1 request on behalf of an account.
type stripeHandler func(w http.ResponseWriter, r *http.Request, account string)

// stripeAuth admits a request carrying "Authorization: Bearer <APIKey>" and
// a well-formed (or, unless RequireAccount, absent) Stripe-Account header,
// and hands the handler the account it acts for. Every response carries a
// Request-Id, as Stripe's do.
func (s *Sim) stripeAuth(h stripeHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Request-Id", newID("req_"))
		if r.Method == http.MethodPost && r.URL.Path == "/v1/payment_intents" {
			s.mu.Lock()
			s.requests++
			s.mu.Unlock()
		}
		if err := s.authenticate(r.Header.Get("Authorization")); err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="Stripe"`)
			writeStripeError(w, err)
			return
		}
		account, err := s.account(r.Header.Values("Stripe-Account"))
		if err != nil {
			writeStripeError(w, err)
			return
		}
		h(w, r, account)
	}
}

// authenticate checks an Authorization header against the configured key.
// Its messages follow Stripe's and never hold more of the offered key than
// maskKey shows, nor anything of the configured one.
func (s *Sim) authenticate(header string) *stripeError {
	scheme, offered, _ := strings.Cut(header, " ")
	if header == "" || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(offered) == "" {
		return &stripeError{status: http.StatusUnauthorized, Type: typeInvalidRequest,
			Message: "You did not provide an API key. You need to provide your API key in the Authorization header, " +
				"using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY')."}
	}
	offered = strings.TrimSpace(offered)
	if subtle.ConstantTimeCompare([]byte(offered), []byte(s.cfg.APIKey)) != 1 {
		return &stripeError{status: http.StatusUnauthorized, Type: typeInvalidRequest,
			Message: "Invalid API Key provided: " + maskKey(offered)}
	}
	return nil
}

// maskKey shows an offered key the way Stripe's error does: a recognised
// prefix such as "sk_test_", stars, and the last four characters, but only
// when at least eight characters stay hidden. Anything that does not look
// like a key (other characters than letters, digits and _) is all stars, so
// the message can never carry a payload or another credential.
func maskKey(key string) string {
	for _, r := range key {
		if !(r == '_' || r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r))) {
			return "****"
		}
	}
	prefix := ""
	for _, p := range []string{"sk_test_", "sk_live_", "rk_test_", "rk_live_", "pk_test_", "pk_live_"} {
		if strings.HasPrefix(key, p) {
			prefix = p
			break
		}
	}
	rest := key[len(prefix):]
	if len(rest) < 12 {
		return prefix + strings.Repeat("*", max(len(rest), 4))
	}
	return prefix + strings.Repeat("*", len(rest)-4) + rest[len(rest)-4:]
}

// account resolves the Stripe-Account header values of a request.
func (s *Sim) account(values []string) (string, *stripeError) {
	invalid := func(msg string) *stripeError {
		return &stripeError{status: http.StatusBadRequest, Type: typeInvalidRequest, Code: "account_invalid", Message: msg}
	}
	switch {
	case len(values) > 1:
		return "", invalid("Stripe-Account was sent more than once.")
	case len(values) == 0 && s.cfg.RequireAccount:
		return "", invalid("This simulator requires a Stripe-Account header (it was started with --account-required).")
	case len(values) == 0:
		return PlatformAccount, nil
	case !accountPattern.MatchString(values[0]):
		return "", invalid("The Stripe-Account header must be an account id: acct_ followed by letters, digits or _.")
	}
	return values[0], nil
}

// Stripe's error types that the simulator answers with.
const (
	typeAPI            = "api_error"
	typeCard           = "card_error"
	typeIdempotency    = "idempotency_error"
	typeInvalidRequest = "invalid_request_error"
)

// stripeError is Stripe's error object; it travels as {"error": {...}}.
type stripeError struct {
	status        int
	Type          string         `json:"type"`
	Code          string         `json:"code,omitempty"`
	DeclineCode   string         `json:"decline_code,omitempty"`
	Message       string         `json:"message"`
	Param         string         `json:"param,omitempty"`
	PaymentIntent *paymentIntent `json:"payment_intent,omitempty"`
}

func (e *stripeError) response() response {
	return response{status: e.status, body: mustJSON(map[string]*stripeError{"error": e})}
}

func writeStripeError(w http.ResponseWriter, e *stripeError) {
	res := e.response()
	writeRaw(w, res.status, res.body)
}

// invalidParam is a 400 about one request parameter.
func invalidParam(code, param, message string) *stripeError {
	return &stripeError{status: http.StatusBadRequest, Type: typeInvalidRequest, Code: code, Param: param, Message: message}
}

// errAPI is Stripe's answer to a failure on its own side.
func errAPI(status int, message string) *stripeError {
	return &stripeError{status: status, Type: typeAPI, Message: message}
}
