// Package oidctest starts a real OpenID provider on loopback for tests:
// github.com/oauth2-proxy/mockoidc, with users that carry a subject, a
// name, an email and groups. Tests sign in through it the way a browser
// does (authorization code, PKCE, state and nonce), so no token is made
// by hand.
package oidctest

import (
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"
)

// User is a person the provider can sign in.
type User struct {
	Subject string // the "sub" claim
	Name    string
	Email   string
	Groups  []string // the "groups" claim
}

// Provider is a running OpenID provider.
type Provider struct {
	Issuer       string
	ClientID     string
	ClientSecret string

	m     *mockoidc.MockOIDC
	users map[string]User
	addr  string // host:port of the issuer
	// reserved holds addr's port while the provider is down (-1: none).
	reserved int

	mu        sync.Mutex
	verifiers []string // code_verifier of each token request, in order
}

// Start starts a provider on 127.0.0.1 knowing users, stopped when the
// test ends. Each sign-in signs in the user named by the last SignInAs (a
// queue: one per authorization request); with none queued the provider
// signs in its own default user, who has no groups settle knows.
func Start(t testing.TB, users ...User) *Provider {
	t.Helper()
	p := Down(t, users...)
	p.Up(t)
	return p
}

// Down returns a provider that is not running: its Issuer, ClientID and
// ClientSecret are set, so that a console can be configured with them,
// but nothing listens at the issuer's address (connections are refused)
// until Up.
func Down(t testing.TB, users ...User) *Provider {
	t.Helper()
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &Provider{m: m, users: map[string]User{}, reserved: -1}
	for _, u := range users {
		p.users[u.Subject] = u
	}
	if err := m.AddMiddleware(p.record); err != nil {
		t.Fatal(err)
	}
	// A port held by a socket that is bound but does not listen: the
	// kernel refuses connections to it (the provider is down) and gives it
	// to no other listener until Up releases it and listens there at once.
	fd, port, err := reservePort()
	if err != nil {
		t.Fatal(err)
	}
	p.reserved = fd
	t.Cleanup(func() { p.release() })
	p.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	p.Issuer, p.ClientID, p.ClientSecret = "http://"+p.addr+mockoidc.IssuerBase, m.ClientID, m.ClientSecret
	return p
}

// Up starts a provider Down returned, at its issuer's address; it is
// stopped when the test ends.
func (p *Provider) Up(t testing.TB) {
	t.Helper()
	p.release()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.m.Start(ln, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.m.Shutdown() })
	if got := p.m.Config().Issuer; got != p.Issuer {
		t.Fatalf("oidctest: issuer %s, want %s", got, p.Issuer)
	}
}

// Stop stops a running provider for good: connections to it are refused
// from now on.
func (p *Provider) Stop() { _ = p.m.Shutdown() }

// SignInAs makes the next authorization request sign in the user with
// this subject. It fails the test for a subject Start was not given.
func (p *Provider) SignInAs(t testing.TB, subject string) {
	t.Helper()
	u, ok := p.users[subject]
	if !ok {
		t.Fatalf("oidctest: no user %q", subject)
	}
	p.m.QueueUser(user(u))
}

// Verifiers returns the PKCE code_verifier sent with each token request so
// far ("" for a request without one).
func (p *Provider) Verifiers() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.verifiers...)
}

func (p *Provider) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, mockoidc.TokenEndpoint) && r.ParseForm() == nil {
			p.mu.Lock()
			p.verifiers = append(p.verifiers, r.PostForm.Get("code_verifier"))
			p.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
}

// user adapts User to mockoidc: every claim is issued whatever the scopes,
// as many providers do for groups.
type user User

func (u user) ID() string { return u.Subject }

func (u user) Userinfo([]string) ([]byte, error) {
	return json.Marshal(map[string]any{"sub": u.Subject, "name": u.Name, "email": u.Email, "groups": u.Groups})
}

type claims struct {
	*mockoidc.IDTokenClaims
	Name   string   `json:"name,omitempty"`
	Email  string   `json:"email,omitempty"`
	Groups []string `json:"groups,omitempty"`
}

func (u user) Claims(_ []string, base *mockoidc.IDTokenClaims) (jwt.Claims, error) {
	return &claims{IDTokenClaims: base, Name: u.Name, Email: u.Email, Groups: u.Groups}, nil
}

// reservePort binds a TCP socket to a free loopback port without
// listening, and returns it with the port. Close-on-exec: a child
// process (settle serve in the tests) must not inherit and keep it.
func reservePort() (fd int, port int, err error) {
	fd, err = syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, 0, err
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		syscall.Close(fd)
		return -1, 0, err
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		syscall.Close(fd)
		return -1, 0, err
	}
	return fd, sa.(*syscall.SockaddrInet4).Port, nil
}

// release closes the socket holding the provider's port, once.
func (p *Provider) release() {
	if p.reserved >= 0 {
		_ = syscall.Close(p.reserved)
		p.reserved = -1
	}
}
