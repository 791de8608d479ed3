package target

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a target on loopback that records every request it gets.
type recorder struct {
	mu   sync.Mutex
	reqs []recorded
	// answer writes the response; nil: 200 with an empty list.
	answer func(w http.ResponseWriter, r *http.Request)
}

type recorded struct {
	method, path, rawQuery string
	query                  url.Values
	header                 http.Header
	body                   []byte
}

func newRecorder(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) (*recorder, string) {
	t.Helper()
	rec := &recorder{answer: answer}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, recorded{r.Method, r.URL.Path, r.URL.RawQuery, r.URL.Query(), r.Header.Clone(), b})
		rec.mu.Unlock()
		if rec.answer != nil {
			rec.answer(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"data":[]}`))
	}))
	t.Cleanup(srv.Close)
	return rec, srv.URL
}

func (r *recorder) requests() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.reqs...)
}

// params is a ParamSource over a fixed map per tenant.
type params map[string]map[string]string

func (p params) TenantParams(_ context.Context, tenant string) (map[string]string, error) {
	if v, ok := p[tenant]; ok {
		return v, nil
	}
	return map[string]string{}, nil
}

type failingParams struct{}

func (failingParams) TenantParams(context.Context, string) (map[string]string, error) {
	return nil, errors.New(`pq: relation "tenant_params" does not exist at SELECT value FROM …`)
}

// stripeLike is a contract shaped like Stripe's v1 charges API.
func stripeLike(t testing.TB, base string) (*Set, *Contract) {
	t.Helper()
	yaml := `targets:
  - name: stripe
    owner: {team: Payments team, escalation_contact: pay@example.com}
    documentation: {url: "https://docs.stripe.com/api", checked: 2026-11-01}
    base_url: ` + base + `
    deadline: 24h
    create: {method: POST, path: /v1/charges}
    reference_field: metadata.settle_ref
    tenant_field: metadata.settle_tenant
    auth: {header: Authorization, scheme: Bearer, secret_env: STRIPE_SECRET_KEY}
    encoding: form
    headers:
      Stripe-Account: "{tenant.account}"
      Stripe-Version: "2024-06-20"
    body_fields:
      transfer_data.destination: "{tenant.destination}"
    idempotency: {header: Idempotency-Key, retention: 24h, mismatch: rejected, replayed_header: Idempotent-Replayed}
    lookup:
      path: "/v1/charges/search?query=metadata['settle_ref']:'{reference}'&limit=10"
      results_field: data
      propagation_limit: 1h
    outcomes:
      - {status: 200, outcome: succeeded}
    response:
      id_field: id
      match:
        - metadata.settle_ref
        - metadata.settle_tenant
        - {field: amount, rule: numeric}
        - {field: currency, rule: case_insensitive}
`
	set, err := Parse("stripe.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := set.Get("stripe")
	return set, c
}

func stripeClient(t testing.TB, set *Set, src ParamSource) *Client {
	t.Helper()
	secrets, err := ReadSecrets(set, func(k string) string {
		return map[string]string{"STRIPE_SECRET_KEY": "sk_test_4eC39HqLyjWDarjtT1zdp7dc"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	return NewClient(ClientOptions{Secrets: secrets, Params: src})
}

const charge = `{"amount":1000,"currency":"EUR","metadata":{"settle_ref":"9f0c1c9e-3c5d-4f7a-9f54-0a1b2c3d4e5f","settle_tenant":"acme"}}`

var acme = params{"acme": {"account": "acct_1Acme", "destination": "acct_1Dest"}}

// A same-key replay sends exactly the bytes of the first send, over real
// HTTP: the body (form-encoded, with a body field from the tenant's
// parameters), the credential and the tenant's headers.
func TestClient_ReplaySendsIdenticalBytes(t *testing.T) {
	t.Parallel()
	rec, base := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Idempotent-Replayed", "true")
		_, _ = w.Write([]byte(`{"id":"ch_1"}`))
	})
	set, c := stripeLike(t, base)
	cl := stripeClient(t, set, acme)
	first := cl.Create(context.Background(), c, "acme", []byte(charge), "key-1", "")
	again := cl.Create(context.Background(), c, "acme", []byte(charge), "key-1", "")
	if first.Status != 200 || again.Status != 200 || !again.Replayed || first.NotSent != "" {
		t.Fatalf("attempts = %+v, %+v", first, again)
	}
	reqs := rec.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if !bytes.Equal(reqs[0].body, reqs[1].body) {
		t.Errorf("bodies differ:\n%q\n%q", reqs[0].body, reqs[1].body)
	}
	want := "amount=1000&currency=EUR&metadata%5Bsettle_ref%5D=9f0c1c9e-3c5d-4f7a-9f54-0a1b2c3d4e5f&metadata%5Bsettle_tenant%5D=acme&transfer_data%5Bdestination%5D=acct_1Dest"
	if string(reqs[0].body) != want {
		t.Errorf("body = %q; want %q", reqs[0].body, want)
	}
	for i, r := range reqs {
		for k, v := range map[string]string{
			"Content-Type":    "application/x-www-form-urlencoded",
			"Authorization":   "Bearer sk_test_4eC39HqLyjWDarjtT1zdp7dc",
			"Stripe-Account":  "acct_1Acme",
			"Stripe-Version":  "2024-06-20",
			"Idempotency-Key": "key-1",
			"Accept":          "application/json",
		} {
			if got := r.header.Get(k); got != v {
				t.Errorf("request %d: %s = %q; want %q", i, k, got, v)
			}
		}
		if r.method != "POST" || r.path != "/v1/charges" {
			t.Errorf("request %d: %s %s", i, r.method, r.path)
		}
	}
}

// Nothing is sent, not a byte, when what a request needs is missing; the
// Attempt says why, naming parameters and variables, never values.
func TestClient_NotSent(t *testing.T) {
	t.Parallel()
	rec, base := newRecorder(t, nil)
	set, c := stripeLike(t, base)
	ctx := context.Background()
	tests := []struct {
		name    string
		client  *Client
		tenant  string
		missing []string
		reason  string
	}{
		{"tenant without parameters", stripeClient(t, set, acme), "globex", []string{"account", "destination"},
			`tenant globex has no parameters "account", "destination", which target stripe needs (settle tenant set --tenant globex --param account=… --param destination=…)`},
		{"one parameter missing", stripeClient(t, set, params{"acme": {"account": "acct_1Acme"}}), "acme", []string{"destination"},
			`tenant acme has no parameter "destination", which target stripe needs (settle tenant set --tenant acme --param destination=…)`},
		{"blank parameter", stripeClient(t, set, params{"acme": {"account": " ", "destination": "acct_1Dest"}}), "acme", []string{"account"},
			`tenant acme has no parameter "account", which target stripe needs (settle tenant set --tenant acme --param account=…)`},
		{"parameters unreadable", stripeClient(t, set, failingParams{}), "acme", nil,
			"the parameters of tenant acme could not be read"},
		{"no parameter source", stripeClient(t, set, nil), "acme", nil,
			"target stripe needs tenant parameters (account, destination), but this settle reads none"},
		{"no secrets", NewClient(ClientOptions{Params: acme}), "acme", nil,
			"the credential of target stripe (environment variable STRIPE_SECRET_KEY) was not loaded"},
		{"header injection", stripeClient(t, set, params{"acme": {"account": "acct_1\r\nX-Evil: 1", "destination": "d"}}), "acme", nil,
			"the request headers could not be built: header Stripe-Account: a tenant parameter it names (account) holds a control character, which no header may carry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.client.Create(ctx, c, tt.tenant, []byte(charge), "key-1", "")
			if a.NotSent != tt.reason || !reflect.DeepEqual(a.Missing, tt.missing) || a.Answered() || a.Sent() {
				t.Errorf("attempt = %+v; want NotSent %q, Missing %q", a, tt.reason, tt.missing)
			}
			if strings.Contains(a.NotSent, "acct_") || strings.Contains(a.NotSent, "sk_test") || strings.Contains(a.NotSent, "SELECT") {
				t.Errorf("reason %q quotes a value", a.NotSent)
			}
		})
	}
	if n := len(rec.requests()); n != 0 {
		t.Errorf("the target received %d requests; want none", n)
	}

	// A lookup sends no body, so it needs only the headers' parameters.
	lookups := []struct {
		name    string
		client  *Client
		tenant  string
		missing []string
		reason  string
	}{
		{"header parameter missing", stripeClient(t, set, acme), "globex", []string{"account"},
			`tenant globex has no parameter "account", which target stripe needs (settle tenant set --tenant globex --param account=…)`},
		{"body parameter missing is no matter", stripeClient(t, set, params{"acme": {"account": "acct_1Acme"}}), "acme", nil, ""},
		{"parameters unreadable", stripeClient(t, set, failingParams{}), "acme", nil, "the parameters of tenant acme could not be read"},
		{"no parameter source", stripeClient(t, set, nil), "acme", nil, "target stripe needs tenant parameters (account), but this settle reads none"},
		{"no secrets", NewClient(ClientOptions{Params: acme}), "acme", nil, "the credential of target stripe (environment variable STRIPE_SECRET_KEY) was not loaded"},
	}
	for _, tt := range lookups {
		a := tt.client.Lookup(ctx, c, tt.tenant, "9f0c1c9e", "")
		if a.NotSent != tt.reason || !reflect.DeepEqual(a.Missing, tt.missing) || a.Sent() != (tt.reason == "") {
			t.Errorf("lookup, %s: attempt = %+v; want NotSent %q, Missing %q", tt.name, a, tt.reason, tt.missing)
		}
	}
	if reqs := rec.requests(); len(reqs) != 1 || reqs[0].method != "GET" || reqs[0].header.Get("Stripe-Account") != "acct_1Acme" {
		t.Errorf("the target received %+v; want the one lookup", reqs)
	}
}

// A parameter read cut off by the caller's context is a request cut off,
// not a reason to escalate: nothing is sent, and the Attempt says
// "cancelled" as a cancelled request would.
func TestClient_CancelledParamRead(t *testing.T) {
	t.Parallel()
	rec, base := newRecorder(t, nil)
	set, c := stripeLike(t, base)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a := stripeClient(t, set, failingParams{}).Create(ctx, c, "acme", []byte(charge), "k", "")
	if a.Failure != "cancelled" || a.NotSent != "" || a.Answered() {
		t.Errorf("attempt = %+v", a)
	}
	if n := len(rec.requests()); n != 0 {
		t.Errorf("the target received %d requests; want none", n)
	}
}

// A body that cannot be built is not sent either.
func TestClient_NotSentBody(t *testing.T) {
	t.Parallel()
	rec, base := newRecorder(t, nil)
	set, c := stripeLike(t, base)
	a := stripeClient(t, set, acme).Create(context.Background(), c, "acme", []byte(`{"transfer_data":{"destination":"acct_x"}}`), "k", "")
	if a.NotSent != "the request body could not be built: body fields: payload.transfer_data.destination is already set, but settle writes a body field (body_fields) there; leave it out of the payload" {
		t.Errorf("NotSent = %q", a.NotSent)
	}
	if n := len(rec.requests()); n != 0 {
		t.Errorf("the target received %d requests; want none", n)
	}
}

// Stripe's search query reaches the server decoded exactly as written in
// the contract, with the reference in place; the lookup carries the
// credential and the tenant's headers too.
func TestClient_LookupSearchQuery(t *testing.T) {
	t.Parallel()
	rec, base := newRecorder(t, nil)
	set, c := stripeLike(t, base)
	const ref = "9f0c1c9e-3c5d-4f7a-9f54-0a1b2c3d4e5f"
	a := stripeClient(t, set, acme).Lookup(context.Background(), c, "acme", ref, "")
	if a.Status != 200 {
		t.Fatalf("attempt = %+v", a)
	}
	reqs := rec.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if got, want := r.query.Get("query"), "metadata['settle_ref']:'"+ref+"'"; got != want || r.query.Get("limit") != "10" || len(r.query) != 2 {
		t.Errorf("query = %q (%v); want query=%q and limit=10", got, r.query, want)
	}
	if r.method != "GET" || r.path != "/v1/charges/search" || len(r.body) != 0 {
		t.Errorf("request = %s %s with %d body bytes", r.method, r.path, len(r.body))
	}
	if r.header.Get("Authorization") != "Bearer sk_test_4eC39HqLyjWDarjtT1zdp7dc" || r.header.Get("Stripe-Account") != "acct_1Acme" ||
		r.header.Get("Content-Type") != "" {
		t.Errorf("headers = %v", r.header)
	}

	// A value with a quote would change the query's meaning: not sent.
	a = stripeClient(t, set, acme).Lookup(context.Background(), c, "acme", "x' OR '1", "")
	if a.NotSent != "lookup: settle's reference holds a quote or a backslash, which settle does not escape for the target's query language" {
		t.Errorf("NotSent = %q", a.NotSent)
	}
	if n := len(rec.requests()); n != 1 {
		t.Errorf("the target received %d requests; want 1", n)
	}
}

func TestContract_LookupURL(t *testing.T) {
	t.Parallel()
	c := parseOne(t, `    reference_field: ref
    lookup: {path: "/v1/x/{remote_ref}/search?query=metadata['ref']:'{reference}'+AND+id:'{remote_ref}'&expand[]=data.customer&flag"}
    response: {id_field: id, match: [amount, ref]}
`, "response")
	tests := []struct {
		name, reference, remoteRef, want, err string
	}{
		{"uuid", "9f0c1c9e-3c5d", "ch_1",
			"/v1/x/ch_1/search?query=metadata%5B%27ref%27%5D%3A%279f0c1c9e-3c5d%27+AND+id%3A%27ch_1%27&expand%5B%5D=data.customer&flag", ""},
		{"space and ampersand", "a b&c", "d/e",
			"/v1/x/d%2Fe/search?query=metadata%5B%27ref%27%5D%3A%27a+b%26c%27+AND+id%3A%27d%2Fe%27&expand%5B%5D=data.customer&flag", ""},
		{"quote in the reference", "a'b", "ch_1", "", "lookup: settle's reference holds a quote or a backslash, which settle does not escape for the target's query language"},
		{"double quote in the reference", `a"b`, "ch_1", "", "lookup: settle's reference holds a quote or a backslash, which settle does not escape for the target's query language"},
		{"backslash in the object id", "r", `ch\1`, "", "lookup: the target's object id holds a quote or a backslash, which settle does not escape for the target's query language"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, u, err := c.LookupURL(tt.reference, tt.remoteRef)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err || u != "" {
					t.Errorf("LookupURL = %s, %v; want error %q", u, err, tt.err)
				}
				return
			}
			if m != "GET" || u != "http://127.0.0.1:9090"+tt.want || err != nil {
				t.Errorf("LookupURL = %s %s, %v; want …%s", m, u, err, tt.want)
			}
			parsed, _ := url.Parse(u)
			if q := parsed.Query().Get("query"); q != "metadata['ref']:'"+tt.reference+"' AND id:'"+tt.remoteRef+"'" {
				t.Errorf("decoded query = %q", q)
			}
		})
	}
	// In the path a quote is only path-escaped: no query language there.
	p := parseOne(t, "    lookup: {path: \"/v1/x/{remote_ref}\"}\n")
	if _, u, err := p.LookupURL("", "a'b"); err != nil || u != "http://127.0.0.1:9090/v1/x/a%27b" {
		t.Errorf("path LookupURL = %s, %v", u, err)
	}
}

func TestClient_AuthHeader(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, auth, secret, header, want string }{
		{"bearer", "{header: Authorization, scheme: Bearer, secret_env: K}", "sk_test_1", "Authorization", "Bearer sk_test_1"},
		{"basic encodes user:password", "{header: Authorization, scheme: Basic, secret_env: K}", "sk_test_1:", "Authorization",
			"Basic " + base64.StdEncoding.EncodeToString([]byte("sk_test_1:"))},
		{"basic with a password", "{header: Authorization, scheme: Basic, secret_env: K}", "user:pa:ss", "Authorization", "Basic dXNlcjpwYTpzcw=="},
		{"raw secret in its own header", "{header: X-Api-Key, secret_env: K}", "key-123", "X-Api-Key", "key-123"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, base := newRecorder(t, nil)
			yaml := strings.Replace(edit("    auth: "+tt.auth+"\n"), "http://127.0.0.1:9090", base, 1)
			set, err := Parse("c.yaml", []byte(yaml))
			if err != nil {
				t.Fatal(err)
			}
			c, _ := set.Get("t1")
			secrets, err := ReadSecrets(set, func(string) string { return tt.secret })
			if err != nil {
				t.Fatal(err)
			}
			a := NewClient(ClientOptions{Secrets: secrets}).Create(context.Background(), c, "acme", []byte(`{"amount":1}`), "", "")
			reqs := rec.requests()
			if a.Status != 200 || len(reqs) != 1 || reqs[0].header.Get(tt.header) != tt.want {
				t.Fatalf("attempt %+v; requests %+v; want %s: %s", a, reqs, tt.header, tt.want)
			}
			if tt.header != "Authorization" && reqs[0].header.Get("Authorization") != "" {
				t.Error("an Authorization header was sent as well")
			}
		})
	}
}

// Without a replayed header in the contract, or with another value, an
// answer is not marked replayed.
func TestClient_Replayed(t *testing.T) {
	t.Parallel()
	for value, want := range map[string]bool{"true": true, "True": true, "false": false, "": false} {
		_, base := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
			if value != "" {
				w.Header().Set("Idempotent-Replayed", value)
			}
			w.WriteHeader(500)
		})
		yaml := strings.Replace(edit("    idempotency: {header: K, replayed_header: Idempotent-Replayed}\n"), "http://127.0.0.1:9090", base, 1)
		set, err := Parse("c.yaml", []byte(yaml))
		if err != nil {
			t.Fatal(err)
		}
		c, _ := set.Get("t1")
		if a := NewClient(ClientOptions{}).Create(context.Background(), c, "acme", []byte(`{}`), "k", ""); a.Replayed != want || a.Status != 500 {
			t.Errorf("header %q: attempt %+v; want Replayed %v", value, a, want)
		}
		c.Idempotency.ReplayedHeader = ""
		if a := NewClient(ClientOptions{}).Create(context.Background(), c, "acme", []byte(`{}`), "k", ""); a.Replayed {
			t.Errorf("no replayed_header: header %q marked replayed", value)
		}
	}
}

// roundTripperFunc adapts a function to http.RoundTripper.
type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// WrapTransport sees each request once, over the client's own transport
// (connections reused only for what Go never re-sends, no HTTP/2, a
// create body that cannot be rewound); a wrapper that reads the response
// and then drops it (as settle drill does) leaves the client with a
// request that reached the target and no answer, and nothing is re-sent.
func TestClient_WrapTransport(t *testing.T) {
	t.Parallel()
	rec, base := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"id":"ch_1"}`))
	})
	set, c := stripeLike(t, base)
	secrets, err := ReadSecrets(set, func(k string) string {
		return map[string]string{"STRIPE_SECRET_KEY": "sk_test_4eC39HqLyjWDarjtT1zdp7dc"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	var seen []*http.Request
	cl := NewClient(ClientOptions{Secrets: secrets, Params: acme, WrapTransport: func(next http.RoundTripper) http.RoundTripper {
		tr, ok := next.(*onceTransport)
		switch {
		case !ok:
			t.Errorf("the wrapper got %T, not the client's exactly-once transport", next)
		case tr.reuse.DisableKeepAlives || !tr.fresh.DisableKeepAlives:
			t.Errorf("keep-alives: pool %v, fresh %v; want on for the pool only", !tr.reuse.DisableKeepAlives, !tr.fresh.DisableKeepAlives)
		case tr.reuse.TLSNextProto == nil || len(tr.reuse.TLSNextProto) != 0 || tr.reuse.ForceAttemptHTTP2 ||
			tr.fresh.TLSNextProto == nil || len(tr.fresh.TLSNextProto) != 0 || tr.fresh.ForceAttemptHTTP2:
			t.Errorf("HTTP/2 may be negotiated")
		case tr.reuse.IdleConnTimeout <= 0 || tr.reuse.IdleConnTimeout > time.Minute:
			t.Errorf("idle connections kept %s; want a bound below a minute", tr.reuse.IdleConnTimeout)
		}
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			seen = append(seen, r)
			resp, err := next.RoundTrip(r)
			if err != nil {
				return nil, err
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return nil, io.ErrUnexpectedEOF
		})
	}})
	a := cl.Create(context.Background(), c, "acme", []byte(charge), "key-1", "")
	if a.Answered() || !a.Sent() || a.Failure != "connection closed without a response" {
		t.Fatalf("attempt = %+v; want sent, unanswered, connection closed", a)
	}
	if len(seen) != 1 || seen[0].GetBody != nil || seen[0].Body == nil || seen[0].Body == http.NoBody || mayReplay(seen[0]) || len(rec.requests()) != 1 {
		t.Fatalf("the wrapper saw %d requests and the target %d; want one each, without GetBody", len(seen), len(rec.requests()))
	}
}
