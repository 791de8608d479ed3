package sim_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"settle/target/sim"
)

func TestStripe_Auth(t *testing.T) {
	t.Parallel()
	srv := startStripe(t, sim.Config{})
	for _, tc := range []struct {
		name, auth, wantMsg string
	}{
		{"no header", "-", "You did not provide an API key"},
		{"empty bearer", "Bearer ", "You did not provide an API key"},
		{"basic", "Basic " + testKey, "You did not provide an API key"},
		{"wrong key", "Bearer sk_test_ThisIsNotTheKey98761234", "Invalid API Key provided: sk_test_"},
		{"the key with a suffix", "Bearer " + testKey + "X", "Invalid API Key provided: sk_test_"},
		{"not a key", "Bearer <script>", "Invalid API Key provided: ****"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range []reply{
				createIntent(t, srv, as{auth: tc.auth, key: "k"}, intent("op", 100)),
				search(t, srv, as{auth: tc.auth}, "metadata['settle_ref']:'op'"),
				getIntent(t, srv, as{auth: tc.auth}, "pi_x"),
				mustSend(t, http.MethodGet, srv.URL()+"/v1/nothing_here", as{auth: tc.auth}.header(), nil),
			} {
				e := wantStripeError(t, r, http.StatusUnauthorized, "invalid_request_error", "")
				msg := e["message"].(string)
				if !strings.Contains(msg, tc.wantMsg) {
					t.Errorf("message %q, want it to contain %q", msg, tc.wantMsg)
				}
				offered := strings.TrimPrefix(strings.TrimPrefix(tc.auth, "Bearer "), "Basic ")
				if strings.Contains(string(r.body), testKey[8:]) || len(offered) > 4 && strings.Contains(string(r.body), offered) {
					t.Errorf("the body repeats a key: %s", r.body)
				}
				if r.header.Get("WWW-Authenticate") == "" || r.header.Get("Request-Id") == "" {
					t.Errorf("headers %v: want WWW-Authenticate and Request-Id", r.header)
				}
			}
		})
	}
	if r := createIntent(t, srv, as{auth: "Bearer sk_test_ThisIsNotTheKey98761234"}, intent("op", 1)); !strings.Contains(string(r.body), "1234") {
		t.Errorf("a wrong key's message shows its last four characters, as Stripe's does: %s", r.body)
	}
	wantObjects(t, srv, 0) // /_sim needs no key
	if n := srv.Sim().Requests(); n != 7 {
		t.Errorf("Requests = %d; want the 7 unauthorised creates counted", n)
	}
	wantStatus(t, createIntent(t, srv, as{}, intent("op", 100)), http.StatusOK)
}

func TestStripe_Create(t *testing.T) {
	t.Parallel()
	clock := newClock()
	srv := startStripe(t, sim.Config{Now: clock.Now})
	form := intent("op_1", 1250, "description=order+7", "metadata[note]=1", "transfer_data[destination]=acct_dest")
	r := createIntent(t, srv, as{key: "k1"}, form)
	wantStatus(t, r, http.StatusOK)
	got := r.fields(t)
	for field, want := range map[string]any{
		"object": "payment_intent", "amount": 1250.0, "amount_received": 1250.0, "currency": "eur",
		"status": "succeeded", "created": float64(clock.Now().Unix()), "livemode": false,
		"description": "order 7", "payment_method": "pm_card_visa", "last_payment_error": nil,
	} {
		if !reflect.DeepEqual(got[field], want) {
			t.Errorf("%s = %#v; want %#v", field, got[field], want)
		}
	}
	wantMeta := map[string]any{"settle_ref": "op_1", "settle_tenant": "acme", "note": "1"}
	if !reflect.DeepEqual(got["metadata"], wantMeta) {
		t.Errorf("metadata = %v; want %v (strings)", got["metadata"], wantMeta)
	}
	if !reflect.DeepEqual(got["transfer_data"], map[string]any{"destination": "acct_dest"}) {
		t.Errorf("transfer_data = %v", got["transfer_data"])
	}
	if r.header.Get("Idempotent-Replayed") != "" {
		t.Error("a first answer is not a replay")
	}

	objs := wantObjects(t, srv, 1)
	sum := sha256.Sum256([]byte(form))
	o := objs[0]
	if o.ID != id(t, r) || o.Account != sim.PlatformAccount || o.Reference != "op_1" || o.Tenant != "acme" ||
		o.Currency != "eur" || o.Status != sim.StatusSucceeded || o.IdempotencyKey != "k1" ||
		o.PayloadSHA256 != hex.EncodeToString(sum[:]) || o.Description != "order 7" {
		t.Errorf("/_sim/objects = %+v", o)
	}
	// Objects lists the objects of every account, with the account; the
	// settle flavor's JSON has neither field.
	raw := mustSend(t, http.MethodGet, srv.URL()+"/_sim/objects", nil, nil)
	if !strings.Contains(string(raw.body), `"account":"acct_platform"`) {
		t.Errorf("/_sim/objects lacks the account: %s", raw.body)
	}
	classic := start(t, sim.Config{Class: "B"})
	create(t, classic, "", charge("op", 1))
	if raw := mustSend(t, http.MethodGet, classic.URL()+"/_sim/objects", nil, nil); strings.Contains(string(raw.body), `"account"`) || strings.Contains(string(raw.body), `"params"`) {
		t.Errorf("the settle flavor's objects gained fields: %s", raw.body)
	}
}

func TestStripe_FormParsing(t *testing.T) {
	t.Parallel()
	srv := startStripe(t, sim.Config{})
	form := intent("op", 100,
		"payment_method_types[]=card", "payment_method_types[]=sepa_debit",
		"shipping[name]=Ada", "shipping[address][line1]=1+Main+St", "shipping[address][city]=Z%C3%BCrich",
		"amount_details[line_items][1][product_name]=second", "amount_details[line_items][0][product_name]=first",
		"amount_details[line_items][0][quantity]=2", "metadata[0]=zero")
	r := createIntent(t, srv, as{}, form)
	wantStatus(t, r, http.StatusOK)
	var params map[string]any
	if err := json.Unmarshal(wantObjects(t, srv, 1)[0].Params, &params); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"amount": "100", "currency": "EUR", "payment_method": "pm_card_visa", "confirm": "true",
		"metadata":             map[string]any{"settle_ref": "op", "settle_tenant": "acme", "0": "zero"},
		"payment_method_types": []any{"card", "sepa_debit"},
		"shipping":             map[string]any{"name": "Ada", "address": map[string]any{"line1": "1 Main St", "city": "Zürich"}},
		"amount_details": map[string]any{"line_items": []any{
			map[string]any{"product_name": "first", "quantity": "2"},
			map[string]any{"product_name": "second"},
		}},
	}
	if !reflect.DeepEqual(params, want) {
		t.Errorf("decoded params\n%v\nwant\n%v", params, want)
	}

	for _, tc := range []struct{ name, form string }{
		{"given twice", intent("r", 1, "description=a", "description=b")},
		{"value and hash", intent("r", 1, "shipping=x", "shipping[name]=y")},
		{"list and index", intent("r", 1, "expand[]=a", "expand[0]=b")},
		{"unclosed bracket", intent("r", 1, "shipping[name=x")},
		{"text after bracket", intent("r", 1, "shipping[name]x=y")},
		{"[] inside", intent("r", 1, "shipping[][name]=x")},
		{"index gap", intent("r", 1, "payment_method_types[0]=a", "payment_method_types[2]=b")},
		{"leading zero", intent("r", 1, "payment_method_types[00]=a")},
		{"no name", intent("r", 1, "[x]=1")},
		{"bad escape", intent("r", 1, "description=%zz")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantStripeError(t, createIntent(t, srv, as{}, tc.form), http.StatusBadRequest, "invalid_request_error", "")
		})
	}
	wantObjects(t, srv, 1)
}

func TestStripe_InvalidCreate(t *testing.T) {
	t.Parallel()
	srv := startStripe(t, sim.Config{})
	// A refused request must not spend the fault meant for the next create.
	srv.Sim().Script(sim.FailBeforeCommit)
	without := func(drop string) string {
		var kept []string
		for _, p := range strings.Split(intent("r", 100), "&") {
			if !strings.HasPrefix(p, drop+"=") {
				kept = append(kept, p)
			}
		}
		return strings.Join(kept, "&")
	}
	for _, tc := range []struct {
		name, form  string
		code, param string
	}{
		{"missing amount", without("amount"), "parameter_missing", "amount"},
		{"amount not a number", strings.Replace(intent("r", 1), "amount=1", "amount=ten", 1), "parameter_invalid_integer", "amount"},
		{"fractional amount", strings.Replace(intent("r", 1), "amount=1", "amount=1.5", 1), "parameter_invalid_integer", "amount"},
		{"negative amount", strings.Replace(intent("r", 1), "amount=1", "amount=-1", 1), "parameter_invalid_integer", "amount"},
		{"zero amount", intent("r", 0), "parameter_invalid_integer", "amount"},
		{"amount a hash", strings.Replace(intent("r", 1), "amount=1", "amount[x]=1", 1), "parameter_invalid_integer", "amount"},
		{"amount too large", intent("r", 100000000), "amount_too_large", "amount"},
		{"missing currency", without("currency"), "parameter_missing", "currency"},
		{"bad currency", strings.Replace(intent("r", 1), "currency=EUR", "currency=euro", 1), "", "currency"},
		{"unknown parameter", intent("r", 1, "colour=red"), "parameter_unknown", "colour"},
		{"metadata not a hash", "amount=1&currency=eur&metadata=x", "", "metadata"},
		{"metadata value a hash", intent("r", 1, "metadata[deep][er]=x"), "", "metadata[deep]"},
		{"metadata key too long", intent("r", 1, "metadata["+strings.Repeat("k", 41)+"]=x"), "", "metadata"},
		{"description a list", intent("r", 1, "description[]=x"), "", "description"},
		{"unknown payment method", strings.Replace(intent("r", 1), "pm_card_visa", "pm_12345", 1), "resource_missing", "payment_method"},
		{"confirm not boolean", strings.Replace(intent("r", 1), "confirm=true", "confirm=yes", 1), "", "confirm"},
		{"confirm without payment method", without("payment_method"), "parameter_missing", "payment_method"},
		{"capture method", intent("r", 1, "capture_method=later"), "", "capture_method"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := createIntent(t, srv, as{}, tc.form)
			e := wantStripeError(t, r, http.StatusBadRequest, "invalid_request_error", tc.code)
			if e["param"] != tc.param {
				t.Errorf("param = %v; want %s", e["param"], tc.param)
			}
		})
	}
	for _, ct := range []string{"application/json", "", "multipart/form-data; boundary=x", "text/plain"} {
		h := as{}.header()
		h["Content-Type"] = ct
		r := mustSend(t, http.MethodPost, srv.URL()+"/v1/payment_intents", h, []byte(`{"amount":100,"currency":"eur"}`))
		if e := wantStripeError(t, r, http.StatusBadRequest, "invalid_request_error", ""); !strings.Contains(e["message"].(string), "form-urlencoded") {
			t.Errorf("Content-Type %q: message %q", ct, e["message"])
		}
	}
	// JSON sent as a form is one long parameter name, which an error must
	// not repeat: it is the payload.
	for _, body := range []string{`{"amount":100,"metadata":{"note":"hunter2"}}`, `{"items":["hunter2"]}`, `{"a":"hunter2"}=1&{"a":"hunter2"}=2`} {
		r := createIntent(t, srv, as{}, body)
		wantStripeError(t, r, http.StatusBadRequest, "invalid_request_error", map[bool]string{true: "parameter_unknown"}[strings.HasPrefix(body, `{"amount"`)])
		if strings.Contains(string(r.body), "hunter2") {
			t.Errorf("the error repeats the body: %s", r.body)
		}
	}
	if r := createIntent(t, srv, as{key: strings.Repeat("k", 256)}, intent("r", 1)); r.status != http.StatusBadRequest {
		t.Errorf("a 256-character key: status %d", r.status)
	}
	wantObjects(t, srv, 0)
	wantStripeError(t, createIntent(t, srv, as{}, intent("r", 1)), http.StatusServiceUnavailable, "api_error", "")
}

func TestStripe_Decline(t *testing.T) {
	t.Parallel()
	srv := startStripe(t, sim.Config{})
	form := strings.Replace(intent("op", 500), "pm_card_visa", sim.PMDeclined, 1)
	r := createIntent(t, srv, as{key: "k"}, form)
	e := wantStripeError(t, r, http.StatusPaymentRequired, "card_error", "card_declined")
	pi, _ := e["payment_intent"].(map[string]any)
	if pi["status"] != sim.StatusRequiresPaymentMethod || pi["amount_received"] != 0.0 {
		t.Fatalf("payment_intent in the error = %v", pi)
	}
	if lpe, _ := pi["last_payment_error"].(map[string]any); lpe["code"] != "card_declined" || lpe["type"] != "card_error" {
		t.Errorf("last_payment_error = %v", pi["last_payment_error"])
	}
	// The intent exists, and retrieval says how it ended.
	objs := wantObjects(t, srv, 1)
	if objs[0].Status != sim.StatusRequiresPaymentMethod || objs[0].ID != pi["id"] {
		t.Errorf("object %+v", objs[0])
	}
	got := getIntent(t, srv, as{}, objs[0].ID)
	wantStatus(t, got, http.StatusOK)
	if got.fields(t)["status"] != sim.StatusRequiresPaymentMethod {
		t.Errorf("retrieved status %v", got.fields(t)["status"])
	}
	// A 402 comes from an executed request: it is saved and replayed.
	again := createIntent(t, srv, as{key: "k"}, form)
	wantStatus(t, again, http.StatusPaymentRequired)
	if again.header.Get("Idempotent-Replayed") != "true" || string(again.body) != string(r.body) {
		t.Errorf("replay: header %q, body %s; want the saved 402", again.header.Get("Idempotent-Replayed"), again.body)
	}
	wantObjects(t, srv, 1)
}

func TestStripe_Statuses(t *testing.T) {
	t.Parallel()
	srv := startStripe(t, sim.Config{})
	for _, tc := range []struct{ name, form, want string }{
		{"not confirmed, payment method", strings.Replace(intent("a", 1), "&confirm=true", "", 1), sim.StatusRequiresConfirmation},
		{"not confirmed, no payment method", "amount=1&currency=usd&metadata[settle_ref]=b&metadata[settle_tenant]=t", sim.StatusRequiresPaymentMethod},
		{"authentication required", strings.Replace(intent("c", 1), "pm_card_visa", sim.PMAuthRequired, 1), sim.StatusRequiresAction},
		{"manual capture", intent("d", 7, "capture_method=manual"), sim.StatusRequiresCapture},
		{"another test card", strings.Replace(intent("e", 1), "pm_card_visa", "pm_card_mastercard", 1), sim.StatusSucceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := createIntent(t, srv, as{}, tc.form)
			wantStatus(t, r, http.StatusOK)
			if got := r.fields(t)["status"]; got != tc.want {
				t.Errorf("status %v; want %s", got, tc.want)
			}
		})
	}
}

func TestStripe_ProcessingThenSucceeded(t *testing.T) {
	t.Parallel()
	srv := startStripe(t, sim.Config{AsyncDelay: 50 * time.Millisecond})
	r := createIntent(t, srv, as{key: "k"}, strings.Replace(intent("op", 100), "pm_card_visa", sim.PMProcessing, 1))
	wantStatus(t, r, http.StatusOK)
	if got := r.fields(t); got["status"] != sim.StatusProcessing || got["amount_received"] != 0.0 {
		t.Fatalf("status %v, received %v; want processing, 0", got["status"], got["amount_received"])
	}
	pi := id(t, r)
	eventually(t, "the intent to succeed", func() bool {
		return getIntent(t, srv, as{}, pi).fields(t)["status"] == sim.StatusSucceeded
	})
	if o := wantObjects(t, srv, 1)[0]; o.Status != sim.StatusSucceeded || o.Version != 2 {
		t.Errorf("object %+v; want succeeded at version 2", o)
	}
	// The replay is the answer saved at the time: still "processing".
	again := createIntent(t, srv, as{key: "k"}, strings.Replace(intent("op", 100), "pm_card_visa", sim.PMProcessing, 1))
	if string(again.body) != string(r.body) {
		t.Errorf("replay %s; want the saved answer %s", again.body, r.body)
	}
}

func TestStripe_Duplicate(t *testing.T) {
	t.Parallel()
	srv := startStripe(t, sim.Config{})
	orig := id(t, createIntent(t, srv, as{account: "acct_a"}, intent("op", 100)))
	r := mustSend(t, http.MethodPost, srv.URL()+"/_sim/duplicate?reference=op", nil, nil)
	wantStatus(t, r, http.StatusCreated)
	objs := wantObjects(t, srv, 2)
	if objs[1].ID == orig || !strings.HasPrefix(objs[1].ID, "pi_") || objs[1].Account != "acct_a" {
		t.Errorf("duplicate %+v of %s", objs[1], orig)
	}
	if ids := searchIDs(t, srv, as{account: "acct_a"}, "metadata['settle_ref']:'op'"); len(ids) != 2 {
		t.Errorf("search finds %v; want the original and the duplicate", ids)
	}
}

func TestStripe_UnknownEndpoints(t *testing.T) {
	t.Parallel()
	srv := startStripe(t, sim.Config{})
	for _, tc := range []struct{ method, path string }{
		{http.MethodGet, "/v1/charges"},
		{http.MethodGet, "/v1/payment_intents"},
		{http.MethodDelete, "/v1/payment_intents/pi_1"},
		{http.MethodGet, "/nothing"},
	} {
		r := mustSend(t, tc.method, srv.URL()+tc.path, as{}.header(), nil)
		wantStripeError(t, r, http.StatusNotFound, "invalid_request_error", "")
	}
	r := getIntent(t, srv, as{}, "pi_unknown")
	if e := wantStripeError(t, r, http.StatusNotFound, "invalid_request_error", "resource_missing"); e["message"] != "No such payment_intent: 'pi_unknown'" {
		t.Errorf("message %v", e["message"])
	}
}
