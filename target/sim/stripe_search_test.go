package sim_test

import (
	"net/http"
	"reflect"
	"slices"
	"testing"
	"time"

	"settle/target/sim"
)

func TestStripe_Accounts(t *testing.T) {
	t.Parallel()
	srv := startStripe(t, sim.Config{})
	a, b := as{account: "acct_a", key: "k"}, as{account: "acct_b", key: "k"}
	// The same key and parameters under two accounts are two requests.
	ra := createIntent(t, srv, a, intent("op", 100))
	rb := createIntent(t, srv, b, intent("op", 100))
	for _, r := range []reply{ra, rb} {
		wantStatus(t, r, http.StatusOK)
		if r.header.Get("Idempotent-Replayed") != "" {
			t.Error("another account's key is not this one's")
		}
	}
	platform := createIntent(t, srv, as{key: "k"}, intent("op", 100))
	wantStatus(t, platform, http.StatusOK)
	explicit := createIntent(t, srv, as{account: sim.PlatformAccount, key: "k"}, intent("op", 100))
	wantReplayOf(t, explicit, platform) // no header is the platform's account

	objs := wantObjects(t, srv, 3)
	accounts := []string{objs[0].Account, objs[1].Account, objs[2].Account}
	if !reflect.DeepEqual(accounts, []string{"acct_a", "acct_b", sim.PlatformAccount}) {
		t.Errorf("/_sim/objects accounts %v", accounts)
	}
	idA, idB := id(t, ra), id(t, rb)
	wantStatus(t, getIntent(t, srv, a, idA), http.StatusOK)
	for _, other := range []as{b, {}} {
		wantStripeError(t, getIntent(t, srv, other, idA), http.StatusNotFound, "invalid_request_error", "resource_missing")
	}
	query := "metadata['settle_ref']:'op'"
	for acct, want := range map[string]string{"acct_a": idA, "acct_b": idB, "": id(t, platform)} {
		if ids := searchIDs(t, srv, as{account: acct}, query); !reflect.DeepEqual(ids, []string{want}) {
			t.Errorf("%q searching: %v; want [%s]", acct, ids, want)
		}
	}
	for _, bad := range []string{"acct_", "cus_123", "acct_a b", "acct_é"} {
		r := createIntent(t, srv, as{account: bad}, intent("op", 100))
		wantStripeError(t, r, http.StatusBadRequest, "invalid_request_error", "account_invalid")
	}
	wantObjects(t, srv, 3)
}

func TestStripe_RequireAccount(t *testing.T) {
	t.Parallel()
	srv := startStripe(t, sim.Config{RequireAccount: true})
	wantStripeError(t, createIntent(t, srv, as{}, intent("op", 1)), http.StatusBadRequest, "invalid_request_error", "account_invalid")
	wantStripeError(t, search(t, srv, as{}, "status:'succeeded'"), http.StatusBadRequest, "invalid_request_error", "account_invalid")
	wantStatus(t, createIntent(t, srv, as{account: "acct_1"}, intent("op", 1)), http.StatusOK)
	wantObjects(t, srv, 1)
}

func TestStripe_SearchLag(t *testing.T) {
	t.Parallel()
	clock := newClock()
	srv := startStripe(t, sim.Config{LookupLag: 10 * time.Second, Now: clock.Now})
	pi := id(t, createIntent(t, srv, as{}, intent("op", 100)))
	query := "metadata['settle_ref']:'op'"
	// Committed, retrievable at once, but not yet searchable: the "not
	// found" that must not be read as "never happened".
	wantStatus(t, getIntent(t, srv, as{}, pi), http.StatusOK)
	if ids := searchIDs(t, srv, as{}, query); len(ids) != 0 {
		t.Fatalf("search inside the lag: %v", ids)
	}
	clock.Advance(10*time.Second - time.Millisecond)
	if ids := searchIDs(t, srv, as{}, query); len(ids) != 0 {
		t.Fatalf("search just inside the lag: %v", ids)
	}
	clock.Advance(time.Millisecond)
	if ids := searchIDs(t, srv, as{}, query); !reflect.DeepEqual(ids, []string{pi}) {
		t.Fatalf("search after the lag: %v; want [%s]", ids, pi)
	}
	srv.Sim().SetLookupLag(time.Minute)
	if ids := searchIDs(t, srv, as{}, query); len(ids) != 0 {
		t.Fatalf("a new lag applies to existing intents: %v", ids)
	}
}

func TestStripe_Search(t *testing.T) {
	t.Parallel()
	srv := startStripe(t, sim.Config{})
	ids := map[string]string{}
	for _, tc := range []struct{ ref, form string }{
		{"a", intent("a", 100, "customer=cus_1")},
		{"b", intent("b", 200, "metadata[order]=it's+7", `metadata[quote]="q"`)},
		{"c", "amount=100&currency=USD&metadata[settle_ref]=c&metadata[settle_tenant]=other"},
	} {
		ids[tc.ref] = id(t, createIntent(t, srv, as{}, tc.form))
	}
	for _, tc := range []struct {
		query string
		want  []string // refs, newest first
	}{
		{"metadata['settle_ref']:'a'", []string{"a"}},
		{`metadata["settle_ref"]:"a"`, []string{"a"}},
		{"metadata['settle_tenant']:'acme'", []string{"b", "a"}},
		{"metadata['settle_tenant']:'acme' AND amount:200", []string{"b"}},
		{"metadata['settle_tenant']:'acme' and amount:'100'", []string{"a"}},
		{"metadata['settle_tenant']:'acme'   amount:100", []string{"a"}},
		{"metadata['settle_ref']:'a' OR metadata['settle_ref']:'c'", []string{"c", "a"}},
		{"metadata['settle_ref']:'a' or metadata['settle_ref']:'zz'", []string{"a"}},
		{"-metadata['settle_tenant']:'acme'", []string{"c"}},
		{"-metadata['missing']:'x'", []string{"c", "b", "a"}},
		{"metadata['order']:'it\\'s 7'", []string{"b"}},
		{`metadata['quote']:"\"q\""`, []string{"b"}},
		{"metadata['settle_ref']:'A'", nil},
		{"metadata['settle_ref']:''", nil},
		{"currency:'usd'", []string{"c"}},
		{"currency:'EUR'", []string{"b", "a"}},
		{"status:'requires_payment_method'", []string{"c"}},
		{"status:'succeeded' AND customer:'cus_1'", []string{"a"}},
		{"amount:0100", []string{"c", "a"}},
	} {
		t.Run(tc.query, func(t *testing.T) {
			var want []string
			for _, ref := range tc.want {
				want = append(want, ids[ref])
			}
			if got := searchIDs(t, srv, as{}, tc.query); !slices.Equal(got, want) {
				t.Errorf("found %v; want %v", got, want)
			}
		})
	}

	// Pages: limit, has_more and next_page.
	query := "metadata['settle_tenant']:'acme' OR metadata['settle_tenant']:'other'"
	r := search(t, srv, as{}, query, "limit=2")
	wantStatus(t, r, http.StatusOK)
	page := r.fields(t)
	if len(page["data"].([]any)) != 2 || page["has_more"] != true || page["object"] != "search_result" || page["url"] != "/v1/payment_intents/search" {
		t.Fatalf("first page %s", r.body)
	}
	r = search(t, srv, as{}, query, "limit=2", "page="+page["next_page"].(string))
	wantStatus(t, r, http.StatusOK)
	last := r.fields(t)
	if data := last["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != ids["a"] || last["has_more"] != false || last["next_page"] != nil {
		t.Errorf("last page %s", r.body)
	}
}

func TestStripe_SearchBadRequests(t *testing.T) {
	t.Parallel()
	srv := startStripe(t, sim.Config{})
	createIntent(t, srv, as{}, intent("a", 100))
	for _, query := range []string{
		" ",
		"metadata['settle_ref']:a",
		"metadata['settle_ref']:'a",
		"metadata['settle_ref':'a'",
		"metadata[settle_ref]:'a'",
		"metadata:'a'",
		"email:'a@example.com'",
		"created>1000",
		"amount>100",
		"metadata['settle_ref']~'a'",
		"amount:'ten'",
		"metadata['settle_ref']'a'",
		"metadata['settle_ref']:'a' AND",
		"metadata['settle_ref']:'a'AND amount:1",
		"metadata['settle_ref']:'a' AND amount:1 OR amount:2",
		"metadata['settle_ref']:'a' amount:1 OR amount:2",
		"metadata['settle_ref']:'a\\",
		"(metadata['settle_ref']:'a')",
		"Status:'succeeded'",
		"status:'a' status:'a' status:'a' status:'a' status:'a' status:'a' status:'a' status:'a' status:'a' status:'a' status:'a'",
	} {
		t.Run(query, func(t *testing.T) {
			e := wantStripeError(t, search(t, srv, as{}, query), http.StatusBadRequest, "invalid_request_error", "")
			if e["param"] != "query" {
				t.Errorf("param %v", e["param"])
			}
		})
	}
	base := srv.URL() + "/v1/payment_intents/search"
	for _, tc := range []struct{ name, url, code, param string }{
		{"no query", base, "parameter_missing", "query"},
		{"empty query", base + "?query=", "parameter_missing", "query"},
		{"limit 0", base + "?query=status:'x'&limit=0", "parameter_invalid_integer", "limit"},
		{"limit 101", base + "?query=status:'x'&limit=101", "parameter_invalid_integer", "limit"},
		{"bad page", base + "?query=status:'x'&page=2", "", "page"},
		{"unknown parameter", base + "?query=status:'x'&reference=a", "parameter_unknown", "reference"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustSend(t, http.MethodGet, tc.url, as{}.header(), nil)
			if e := wantStripeError(t, r, http.StatusBadRequest, "invalid_request_error", tc.code); e["param"] != tc.param {
				t.Errorf("param %v; want %s", e["param"], tc.param)
			}
		})
	}
}
