package ledger_test

import (
	"net/netip"
	"testing"

	"settle/ledger"
)

// One check for every entry point that sets a callback URL: https, a
// well-formed URL without spaces or markup, no internal literal address
// unless the server's allow-list covers it.
func TestCallbackPolicy_CheckURL(t *testing.T) {
	t.Parallel()
	prod := ledger.CallbackPolicy{}
	dev := ledger.CallbackPolicy{AllowHTTP: true, Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	for _, c := range []struct {
		policy ledger.CallbackPolicy
		url    string
		ok     bool
	}{
		{prod, "https://hooks.acme.example/settle?t=1", true},
		{prod, "http://hooks.acme.example/settle", false},
		{dev, "http://hooks.acme.example/settle", true},
		{prod, "https://127.0.0.1/cb", false},
		{prod, "https://localhost/cb", false},
		{prod, "https://[::1]/cb", false},
		{prod, "https://[::ffff:10.0.0.1]/cb", false},
		{prod, "https://169.254.169.254/latest/meta-data", false},
		{prod, "https://10.1.2.3/cb", false},
		{prod, "https://100.64.0.1/cb", false},
		{prod, "https://0.0.0.0/cb", false},
		{dev, "http://127.0.0.1:8080/cb", true},
		{dev, "http://127.0.0.2:8080/cb", false},
		{prod, "https://hooks.acme.example/a b", false},
		{prod, "https://hooks.acme.example/<script>", false},
		{prod, "https://hooks.acme.example/\"x\"", false},
		{prod, "https://hooks.acme.example/\x1b[31m", false},
		{prod, "https://hooks.acme.example/\u202e", false},
		{prod, "https://user:pw@hooks.acme.example/", false},
		{prod, "hooks.acme.example/cb", false},
	} {
		if err := c.policy.CheckURL(c.url); (err == nil) != c.ok {
			t.Errorf("CheckURL(%q) with %+v = %v, want ok=%v", c.url, c.policy, err, c.ok)
		} else if err != nil && ledger.ErrorCode(err) != ledger.EInvalid {
			t.Errorf("CheckURL(%q): code %s", c.url, ledger.ErrorCode(err))
		}
	}
	if _, err := ledger.ParseCallbackNets("10.0.0.0/8, 127.0.0.1,::1"); err != nil {
		t.Fatal(err)
	}
	if _, err := ledger.ParseCallbackNets("10.0.0.0/33"); ledger.ErrorCode(err) != ledger.EInvalid {
		t.Fatalf("a bad prefix: %v", err)
	}
}
