package reconciler

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"settle/ledger"
)

// guardedTransport returns a copy of rt (an *http.Transport; nil or any
// other kind means the default transport's settings) whose connections go
// only to addresses policy allows. The check runs in the dialer's Control
// hook, on the address actually connected to after DNS resolution, so a
// host name that resolves (or re-resolves) to an internal address is
// refused too. Proxies are off: through one, the dialer would see only the
// proxy's address.
func guardedTransport(rt http.RoundTripper, policy ledger.CallbackPolicy) http.RoundTripper {
	base, ok := rt.(*http.Transport)
	if !ok {
		base = http.DefaultTransport.(*http.Transport)
	}
	t := base.Clone()
	t.Proxy = nil
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("callback destination %q is not an address", address)
			}
			return policy.CheckAddr(ap.Addr())
		}}
	t.DialContext = d.DialContext
	return t
}
