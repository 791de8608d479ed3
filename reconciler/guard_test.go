package reconciler

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"settle/deliver"
	"settle/ledger"
)

// The check runs on the address connected to, after DNS resolution: a
// host name that resolves to loopback is refused like 127.0.0.1, and
// allowed once the operator's allow-list covers it.
func TestGuardedTransport_ChecksResolvedAddress(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer srv.Close()
	byName := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	get := func(p ledger.CallbackPolicy) error {
		c := http.Client{Transport: deliver.Transport(nil, p)}
		resp, err := c.Get(byName)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := get(ledger.CallbackPolicy{AllowHTTP: true}); err == nil || !strings.Contains(err.Error(), "internal address") {
		t.Fatalf("localhost reached without an allow-list entry: %v", err)
	}
	allow := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	if err := get(ledger.CallbackPolicy{AllowHTTP: true, Allow: allow}); err != nil {
		t.Fatalf("allowed loopback refused: %v", err)
	}
}
