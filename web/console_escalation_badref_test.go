package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"settle/ledger"
	"settle/web"
)

// A manual resolution's object id is held to the rule of the ids a target
// returns (ledger.CheckProviderText): one with a NUL, a bidi override or
// 3,000 characters is refused with a 422 naming the field, on both stores,
// and nothing is proposed; a plain id is still accepted.
func TestConsole_ProposalObjectIDValidated(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		c := newConsole(t, open(t), web.Config{Contracts: noContracts{}})
		op := c.escalated("acme")
		olu := c.as("owner")
		for name, ref := range map[string]string{
			"NUL": "ch_\x00evil", "bidi": "ch_\u202e77", "long": "ch_" + strings.Repeat("x", 3000),
		} {
			form := url.Values{"kind": {"confirm_succeeded"}, "remote_ref": {ref},
				"reason": {"the provider's dashboard shows it"}, web.CSRFField: {olu.csrfCookie()}}
			r := olu.do(http.MethodPost, escPath(op)+"/propose", form)
			if r.status != http.StatusUnprocessableEntity || !strings.Contains(string(r.body), "remote_ref") {
				t.Fatalf("%s object id: %d %.300s", name, r.status, r.body)
			}
			if strings.ContainsRune(string(r.body), 0) || strings.Contains(string(r.body), "xxxxxxxxxx") {
				t.Fatalf("%s object id: the answer repeats the value", name)
			}
		}
		props, err := c.store.OpenResolutions(context.Background(), []string{"acme"}, false)
		if err != nil || len(props) != 0 {
			t.Fatalf("a refused proposal was stored: %+v %v", props, err)
		}
		form := url.Values{"kind": {"confirm_succeeded"}, "remote_ref": {"ch_77"},
			"reason": {"the provider's dashboard shows it"}, web.CSRFField: {olu.csrfCookie()}}
		if r := olu.do(http.MethodPost, escPath(op)+"/propose", form); r.status != http.StatusSeeOther {
			t.Fatalf("a plain object id: %d %.300s", r.status, r.body)
		}
		if got, _ := c.store.Get(context.Background(), "acme", op.ID); got.State != ledger.Escalated {
			t.Fatalf("a proposal moved the operation: %s", got.State)
		}
	})
}
