package ledger

import (
	"net/netip"
	"net/url"
	"strings"
	"unicode"
)

// CallbackPolicy is where a tenant's callbacks may go, set by the server's
// operator (settle serve --callbacks-allow-http, --callbacks-allow-net),
// never by the tenant's admin who sets the URL. Every entry point that sets
// a callback URL checks it with CheckURL, and the notifier checks every
// address it connects to with CheckAddr, after DNS resolution, so a name
// that resolves to an internal address is refused as the address would be.
type CallbackPolicy struct {
	// AllowHTTP accepts http:// URLs; for development only, since the
	// signed body then crosses the network in the clear.
	AllowHTTP bool
	// Allow lists destinations accepted although private, loopback,
	// link-local or otherwise not globally routable (an internal receiver
	// the operator vouches for).
	Allow []netip.Prefix
}

// ParseCallbackNets reads a comma-separated list of CIDR prefixes or
// addresses ("10.1.2.0/24,127.0.0.1") for CallbackPolicy.Allow.
func ParseCallbackNets(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil {
				return nil, Errorf(EInvalid, "callback allow-list entry %q is not an address or CIDR prefix", f)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// CheckURL validates a callback URL (ValidateCallbackURL) and applies the
// policy: https unless AllowHTTP, and a host that is not a literal
// internal address outside Allow. A host name is checked again, resolved,
// at every connection (CheckAddr). EInvalid; the message never quotes the
// URL, which may carry a token.
func (p CallbackPolicy) CheckURL(rawURL string) error {
	if err := ValidateCallbackURL(rawURL); err != nil {
		return err
	}
	u, _ := url.Parse(rawURL) // ValidateCallbackURL parsed it
	if u.Scheme != "https" && !p.AllowHTTP {
		return Errorf(EInvalid, "callback URL must be https:// (this server accepts http:// only when started with --callbacks-allow-http, for development)")
	}
	host := strings.ToLower(u.Hostname())
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return p.CheckAddr(netip.MustParseAddr("127.0.0.1"))
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return p.CheckAddr(a)
	}
	return nil
}

// CheckAddr refuses a destination that is not globally routable
// (loopback, private, link-local, unspecified, multicast, the shared
// address space 100.64/10 and the like) unless Allow covers it.
func (p CallbackPolicy) CheckAddr(a netip.Addr) error {
	a = a.Unmap()
	for _, n := range p.Allow {
		if n.Contains(a) {
			return nil
		}
	}
	if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() || internalRange(a) {
		return Errorf(EInvalid, "callback destination %s is an internal address; the server's operator can allow it with --callbacks-allow-net", a)
	}
	return nil
}

// internalRanges are not globally routable, beyond what netip names.
var internalRanges = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT, often a cloud's internal network
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
}

func internalRange(a netip.Addr) bool {
	for _, n := range internalRanges {
		if n.Contains(a) {
			return true
		}
	}
	return false
}

// urlUnsafe reports a character a callback URL must not hold raw: white
// space, control characters and the characters of markup and quoting,
// which a well-formed URL carries percent-encoded.
func urlUnsafe(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r) || r > unicode.MaxASCII || strings.ContainsRune(`<>"'\{}|^`+"`", r)
}
