package sim_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"settle/target"
	"settle/target/sim"
)

// The stripe contract in settle's own terms. It uses the contract schema of
// issue 12 (auth, encoding, headers, replayed_header, match rules,
// statuses), which package target learns on another branch: until that
// branch is merged, target.Parse refuses the new fields and this test fails.
func TestStripe_ContractParses(t *testing.T) {
	t.Parallel()
	srv := startStripe(t, sim.Config{Retention: 2 * time.Hour, LookupLag: 1500 * time.Millisecond})
	c := parseContract(t, srv, "stripe")
	docs := srv.URL() + "/_sim/docs"
	if c.BaseURL != srv.URL() || c.Documentation.URL != docs || c.Create != (target.Endpoint{Method: "POST", Path: "/v1/payment_intents"}) {
		t.Errorf("base %s, documentation %+v, create %+v", c.BaseURL, c.Documentation, c.Create)
	}
	if c.ReferenceField != "metadata.settle_ref" || c.TenantField != "metadata.settle_tenant" {
		t.Errorf("fields %s, %s", c.ReferenceField, c.TenantField)
	}
	if got := c.Classes(); !reflect.DeepEqual(got, []target.Class{target.ClassA, target.ClassB}) {
		t.Errorf("Classes = %v", got)
	}
	idem := c.Idempotency
	if idem == nil || idem.Header != "Idempotency-Key" || idem.Scope != "per account and key" || idem.Retention != 2*time.Hour ||
		idem.Mismatch != target.MismatchRejected || idem.Concurrent != target.ConcurrentConflict {
		t.Errorf("Idempotency = %+v", idem)
	}
	lookup := c.Lookup
	if lookup == nil || lookup.Method != "GET" || lookup.Path != "/v1/payment_intents/search?query=metadata['settle_ref']:'{reference}'" ||
		lookup.ResultsField != "data" || lookup.ReadAfterWrite || lookup.PropagationLimit != 3*time.Second {
		t.Errorf("Lookup = %+v", lookup)
	}
	for status, want := range map[int]target.Outcome{
		200: target.Succeeded, 201: target.Unknown, 400: target.RejectedWithoutSideEffect, 401: target.RejectedWithoutSideEffect,
		402: target.RejectedWithoutSideEffect, 404: target.RejectedWithoutSideEffect, 409: target.InProgress,
		429: target.RejectedWithoutSideEffect, 500: target.Unknown, 503: target.Unknown,
	} {
		if got := c.Classify(status); got != want {
			t.Errorf("Classify(%d) = %s; want %s", status, got, want)
		}
	}
	for status, section := range map[int]string{400: "errors", 401: "authentication", 402: "declines", 404: "errors", 429: "errors"} {
		if got := c.Cites(status); got != docs+"#"+section {
			t.Errorf("Cites(%d) = %q", status, got)
		}
	}
	if c.Response.IDField != "id" || c.Response.StatusField != "status" {
		t.Errorf("Response = %+v", c.Response)
	}
}

// contractDoc is a printed contract read as plain YAML, for the facts that
// package target does not know on this branch.
type contractDoc map[string]any

func readContract(t *testing.T, srv *sim.Server) contractDoc {
	t.Helper()
	var file struct {
		Targets []map[string]any `yaml:"targets"`
	}
	if err := yaml.Unmarshal(srv.Contract("stripe"), &file); err != nil || len(file.Targets) != 1 {
		t.Fatalf("contract: %v, %d targets:\n%s", err, len(file.Targets), srv.Contract("stripe"))
	}
	return file.Targets[0]
}

// at returns the value at a dotted path.
func (d contractDoc) at(path string) any {
	var v any = map[string]any(d)
	for _, seg := range strings.Split(path, ".") {
		m, _ := v.(map[string]any)
		v = m[seg]
	}
	return v
}

func (d contractDoc) str(path string) string { s, _ := d.at(path).(string); return s }

// outcome looks status up in the outcomes table as CONTRACTS.md says:
// exact row, then class row, else unknown.
func (d contractDoc) outcome(status int) (outcome, doc string) {
	rows, _ := d.at("outcomes").([]any)
	for _, key := range []string{strconv.Itoa(status), fmt.Sprintf("%dxx", status/100)} {
		for _, row := range rows {
			r := row.(map[string]any)
			if fmt.Sprint(r["status"]) == key {
				d, _ := r["documentation"].(string)
				return r["outcome"].(string), d
			}
		}
	}
	return "unknown", ""
}

// statusOutcome maps an object's status through response.statuses; an
// unlisted value is pending, the schema's safe default.
func (d contractDoc) statusOutcome(value string) string {
	rows, _ := d.at("response.statuses").([]any)
	for _, row := range rows {
		if r := row.(map[string]any); r["value"] == value {
			return r["outcome"].(string)
		}
	}
	return "pending"
}

// The printed contract holds against the simulator: a client that follows
// only the contract — its credential source, encoding, headers, paths,
// outcome table, match rules and statuses — gets what the contract says.
func TestStripe_ContractFacts(t *testing.T) {
	t.Parallel()
	clock := newClock()
	// A Connect platform's simulator, whose contract names the account.
	srv := startStripe(t, sim.Config{LookupLag: 1500 * time.Millisecond, Now: clock.Now, SlowDelay: 300 * time.Millisecond, RequireAccount: true})
	d := readContract(t, srv)
	text := string(srv.Contract("stripe"))
	if strings.Contains(text, testKey) || strings.Contains(text, testKey[8:]) {
		t.Fatal("the contract holds the secret key")
	}
	for path, want := range map[string]string{
		"auth.header": "Authorization", "auth.scheme": "Bearer", "auth.secret_env": sim.APIKeyEnv,
		"encoding": "form", "headers.Stripe-Account": "{tenant.account}",
		"idempotency.replayed_header": "Idempotent-Replayed", "idempotency.retention": "24h",
		"lookup.propagation_limit": "3s", "response.id_field": "id", "response.status_field": "status",
	} {
		if got := d.str(path); got != want {
			t.Errorf("%s = %q; want %q", path, got, want)
		}
	}
	wantMatch := []any{"metadata.settle_ref", "metadata.settle_tenant",
		map[string]any{"field": "amount", "rule": "numeric"}, map[string]any{"field": "currency", "rule": "case_insensitive"}}
	if !reflect.DeepEqual(d.at("response.match"), wantMatch) {
		t.Errorf("response.match = %v", d.at("response.match"))
	}
	for _, row := range d.at("response.statuses").([]any) {
		if r := row.(map[string]any); r["outcome"] != "succeeded" && !strings.HasPrefix(fmt.Sprint(r["documentation"]), srv.URL()+"/_sim/docs#") {
			t.Errorf("status row %v cites no documentation", r)
		}
	}

	// A client configured by the contract alone, for a tenant whose
	// parameter "account" is acct_tenant1.
	env := map[string]string{sim.APIKeyEnv: testKey}
	tenant := map[string]string{"account": "acct_tenant1"}
	header := func(idemKey string) map[string]string {
		h := map[string]string{d.str("auth.header"): d.str("auth.scheme") + " " + env[d.str("auth.secret_env")]}
		for name, tmpl := range d.at("headers").(map[string]any) {
			h[name] = strings.ReplaceAll(tmpl.(string), "{tenant.account}", tenant["account"])
		}
		if d.str("encoding") == "form" {
			h["Content-Type"] = "application/x-www-form-urlencoded"
		}
		if idemKey != "" {
			h[d.str("idempotency.header")] = idemKey
		}
		return h
	}
	bracket := func(path string) string { // metadata.settle_ref → metadata[settle_ref]
		segs := strings.Split(path, ".")
		return segs[0] + "[" + strings.Join(segs[1:], "][") + "]"
	}
	payload := func(ref, pm string) string {
		return url.Values{"amount": {"1250"}, "currency": {"EUR"}, "payment_method": {pm}, "confirm": {"true"},
			bracket(d.str("reference_field")): {ref}, bracket(d.str("tenant_field")): {"acme"}}.Encode()
	}
	post := func(ref, pm, idemKey string) reply {
		return mustSend(t, d.str("create.method"), d.str("base_url")+d.str("create.path"), header(idemKey), []byte(payload(ref, pm)))
	}
	lookup := func(ref string) []any {
		p, rawQuery, _ := strings.Cut(d.str("lookup.path"), "?")
		q, err := url.ParseQuery(rawQuery)
		if err != nil {
			t.Fatalf("lookup query: %v", err)
		}
		for k, vs := range q {
			for i := range vs {
				vs[i] = strings.ReplaceAll(vs[i], "{reference}", ref)
			}
			q[k] = vs
		}
		r := mustSend(t, d.str("lookup.method"), d.str("base_url")+p+"?"+q.Encode(), header(""), nil)
		wantStatus(t, r, http.StatusOK)
		results, _ := r.fields(t)[d.str("lookup.results_field")].([]any)
		return results
	}

	r := post("op-1", "pm_card_visa", "op-1")
	if out, _ := d.outcome(r.status); out != "succeeded" {
		t.Fatalf("create: %d is %s; body %s", r.status, out, r.body)
	}
	created := r.fields(t)
	if d.statusOutcome(created["status"].(string)) != "succeeded" {
		t.Errorf("status %v reads as %s", created["status"], d.statusOutcome(created["status"].(string)))
	}
	if o := wantObjects(t, srv, 1)[0]; o.Account != "acct_tenant1" {
		t.Errorf("the intent belongs to %s; want the tenant's account", o.Account)
	}
	// Same key: a replay, marked by the contract's replayed_header.
	if again := post("op-1", "pm_card_visa", "op-1"); again.header.Get(d.str("idempotency.replayed_header")) != "true" {
		t.Errorf("replay not marked: %v", again.header)
	}

	// Lookup: nothing inside the lag, the intent once propagation_limit has passed.
	if got := lookup("op-1"); len(got) != 0 {
		t.Fatalf("lookup inside the lag: %v", got)
	}
	limit, err := time.ParseDuration(d.str("lookup.propagation_limit"))
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(limit)
	results := lookup("op-1")
	if len(results) != 1 {
		t.Fatalf("lookup after propagation_limit: %v", results)
	}
	found := contractDoc(results[0].(map[string]any))
	if found.str(d.str("response.id_field")) != created["id"] {
		t.Errorf("lookup found %v; want %v", found.at("id"), created["id"])
	}
	// Every match rule holds between the approved payload and the object.
	sent, _ := url.ParseQuery(payload("op-1", "pm_card_visa"))
	for _, m := range d.at("response.match").([]any) {
		field, rule := fmt.Sprint(m), "exact"
		if mm, ok := m.(map[string]any); ok {
			field, rule = mm["field"].(string), mm["rule"].(string)
		}
		want, got := sent.Get(bracket(field)), fmt.Sprint(found.at(field))
		if !strings.Contains(field, ".") {
			want = sent.Get(field)
		}
		ok := map[string]bool{
			"exact":            got == want,
			"case_insensitive": strings.EqualFold(got, want),
			"numeric":          json.Number(want).String() == got,
		}[rule]
		if !ok {
			t.Errorf("match %s (%s): sent %q, found %q", field, rule, want, got)
		}
	}

	// What the simulator answers is in the table, as the contract says.
	declined := post("op-2", sim.PMDeclined, "op-2")
	if out, doc := d.outcome(declined.status); declined.status != http.StatusPaymentRequired || out != "rejected_without_side_effect" || !strings.HasSuffix(doc, "#declines") {
		t.Errorf("decline: %d is %s citing %q", declined.status, out, doc)
	}
	if st := stripeErr(t, declined)["payment_intent"].(map[string]any)["status"].(string); d.statusOutcome(st) != "failed" {
		t.Errorf("a declined intent's status %s reads as %s", st, d.statusOutcome(st))
	}
	mismatch := post("op-1", "pm_card_mastercard", "op-1")
	if out, _ := d.outcome(mismatch.status); mismatch.status != http.StatusBadRequest || out != "rejected_without_side_effect" {
		t.Errorf("mismatch: %d is %s", mismatch.status, out)
	}
	h := header("op-3")
	delete(h, "Authorization")
	unauth := mustSend(t, http.MethodPost, d.str("base_url")+d.str("create.path"), h, []byte(payload("op-3", "pm_card_visa")))
	if out, doc := d.outcome(unauth.status); unauth.status != http.StatusUnauthorized || out != "rejected_without_side_effect" || !strings.HasSuffix(doc, "#authentication") {
		t.Errorf("no key: %d is %s citing %q", unauth.status, out, doc)
	}
	processing := post("op-4", sim.PMProcessing, "op-4")
	if st := processing.fields(t)["status"].(string); d.statusOutcome(st) != "pending" {
		t.Errorf("status %s reads as %s", st, d.statusOutcome(st))
	}
	srv.Sim().Script(sim.Slow)
	first := make(chan reply, 1)
	go func() {
		r, _ := send(client, http.MethodPost, d.str("base_url")+d.str("create.path"), header("op-5"), []byte(payload("op-5", "pm_card_visa")))
		first <- r
	}()
	eventually(t, "the slow intent", func() bool { return len(srv.Sim().Objects()) == 4 })
	if conflict := post("op-5", "pm_card_visa", "op-5"); conflict.status != http.StatusConflict || d.str("idempotency.concurrent") != "conflict" {
		t.Errorf("concurrent: %d, contract says %q", conflict.status, d.str("idempotency.concurrent"))
	} else if out, _ := d.outcome(conflict.status); out != "in_progress" {
		t.Errorf("409 is %s", out)
	}
	<-first
	if out, _ := d.outcome(http.StatusInternalServerError); out != "unknown" {
		t.Errorf("500 is %s", out)
	}
}

// The Stripe-Account header is in the contract only of a simulator that
// requires it: a contract that always named {tenant.account} escalated,
// unsent, every operation of a tenant without that parameter.
func TestStripe_ContractAccountHeaderOnlyWhenRequired(t *testing.T) {
	t.Parallel()
	for required, want := range map[bool]any{false: nil, true: map[string]any{"Stripe-Account": "{tenant.account}"}} {
		srv := startStripe(t, sim.Config{RequireAccount: required})
		if got := readContract(t, srv).at("headers"); !reflect.DeepEqual(got, want) {
			t.Errorf("RequireAccount %v: headers %v; want %v", required, got, want)
		}
		r := mustSend(t, http.MethodGet, srv.URL()+"/_sim/docs", nil, nil)
		if says := strings.Contains(string(r.body), "The printed contract sends no header"); says == required {
			t.Errorf("RequireAccount %v: the docs say the contract sends no header: %v", required, says)
		}
	}
}

func TestStripe_ContractLimitFollowsLag(t *testing.T) {
	t.Parallel()
	for lag, want := range map[time.Duration]string{0: "1s", time.Second: "2s", 1001 * time.Millisecond: "3s", time.Minute: "61s"} {
		srv := startStripe(t, sim.Config{LookupLag: lag, Retention: time.Hour})
		d := readContract(t, srv)
		if got := d.str("lookup.propagation_limit"); got != want {
			t.Errorf("lag %s: propagation_limit %s; want %s", lag, got, want)
		}
		if got := d.str("idempotency.retention"); got != "1h" {
			t.Errorf("retention %s", got)
		}
	}
	srv := startStripe(t, sim.Config{ReferenceField: "metadata.order_ref", TenantField: "metadata.shop"})
	d := readContract(t, srv)
	if d.str("lookup.path") != "/v1/payment_intents/search?query=metadata['order_ref']:'{reference}'" ||
		d.str("reference_field") != "metadata.order_ref" || d.str("tenant_field") != "metadata.shop" {
		t.Errorf("custom fields: lookup %s, reference %s, tenant %s", d.str("lookup.path"), d.str("reference_field"), d.str("tenant_field"))
	}
}

func TestStripe_Docs(t *testing.T) {
	t.Parallel()
	srv := startStripe(t, sim.Config{LookupLag: 5 * time.Second, RequireAccount: true})
	r := mustSend(t, http.MethodGet, srv.URL()+"/_sim/docs", nil, nil)
	wantStatus(t, r, http.StatusOK)
	body := string(r.body)
	// Every section the contract cites, and the behaviours it relies on.
	for _, want := range []string{
		"(#authentication)", "(#declines)", "(#statuses)", "(#errors)", "(#search)", "(#idempotency)", "(#accounts)",
		sim.APIKeyEnv, sim.PMProcessing, sim.PMDeclined, "5s after commit", "Idempotent-Replayed: true",
		"requires a Stripe-Account header", "https://docs.stripe.com/api/idempotent_requests",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("docs lack %q", want)
		}
	}
	if strings.Contains(body, testKey[8:]) {
		t.Error("the docs hold the secret key")
	}
}

func TestNew_InvalidStripeConfig(t *testing.T) {
	t.Parallel()
	stripe := func(c sim.Config) sim.Config {
		c.Flavor = sim.FlavorStripe
		if c.APIKey == "" {
			c.APIKey = testKey
		}
		return c
	}
	for _, tc := range []struct {
		name string
		cfg  sim.Config
		want string
	}{
		{"unknown flavor", sim.Config{Flavor: "paypal"}, `flavor "paypal"`},
		{"no key", sim.Config{Flavor: sim.FlavorStripe}, "APIKey is required"},
		{"key with space", stripe(sim.Config{APIKey: "sk_test_a b"}), "must not contain spaces"},
		{"class", stripe(sim.Config{Class: "A"}), "Class does not apply"},
		{"mismatch status", stripe(sim.Config{MismatchStatus: 422}), "MismatchStatus does not apply"},
		{"async", stripe(sim.Config{Async: true}), "pm_card_processing"},
		{"webhook", stripe(sim.Config{WebhookURL: "http://127.0.0.1:1/hook", WebhookSecret: "s"}), "no webhooks"},
		{"reference outside metadata", stripe(sim.Config{ReferenceField: "ref"}), "metadata.<key>"},
		{"tenant too deep", stripe(sim.Config{TenantField: "metadata.a.b"}), "metadata.<key>"},
		{"negative lag", stripe(sim.Config{LookupLag: -1}), "LookupLag must not be negative"},
		{"fault odds", stripe(sim.Config{Slow: 2}), "Slow probability"},
		{"key in the settle flavor", sim.Config{Class: "A", APIKey: "k"}, "only to the stripe flavor"},
		{"account in the settle flavor", sim.Config{Class: "A", RequireAccount: true}, "only to the stripe flavor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sim.New(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New error = %v; want it to mention %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "sk_test_a b") || strings.Contains(err.Error(), testKey) {
				t.Errorf("the error repeats the key: %v", err)
			}
		})
	}
}
