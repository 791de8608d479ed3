package auth

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/gorilla/securecookie"
	"github.com/labstack/echo/v4"
	"golang.org/x/oauth2"

	"settle/ledger"
)

// A flow cookie carries one sign-in attempt from /login to
// /auth/callback. Each attempt has its own cookie, named after its state,
// so that a browser with several tabs signing in at once can finish them
// in any order; the callback keeps at most maxPending of them, the oldest
// going first.
const (
	flowCookiePrefix = "settle_signin_"
	flowMaxAge       = 10 * time.Minute
	maxPending       = 5
	flowNameLen      = 16 // hex characters of the state in the cookie's name
)

// flowState is what the flow cookie holds (signed and encrypted): the
// state and nonce the provider must echo, the PKCE verifier, the path to
// return to, and when the attempt started (to drop the oldest).
type flowState struct {
	State, Nonce, Verifier, Return string
	Started                        int64 // Unix nanoseconds
}

// flowCookieName is the name of the flow cookie of the attempt with this
// state, or "" for a state this console cannot have made.
func flowCookieName(state string) string {
	if len(state) != 64 || strings.Trim(state, "0123456789abcdef") != "" {
		return ""
	}
	return flowCookiePrefix + state[:flowNameLen]
}

// oidcFlow is the authorization-code flow with PKCE, state and nonce.
type oidcFlow struct {
	oauth    oauth2.Config
	verifier *oidc.IDTokenVerifier
	client   *http.Client
	codec    *securecookie.SecureCookie
	secure   bool
	roles    string // claim names
	name     string
}

// NewConsole returns the OIDC console, keeping sessions in ss. It tries
// the discovery of the provider at cfg.OIDC.Issuer once, briefly; when the
// provider cannot be reached the console is returned all the same, its
// sign-in unavailable (a 503 page) until Run or Discover reaches the
// provider. Only a configuration the console cannot use is an error.
//
// A person's stable identity (Principal.Subject, the actor of their
// actions) is "oidc:" + the provider's "sub" claim: a provider promises
// "sub" never changes nor is reused for its issuer, and a deployment has
// one issuer.
func NewConsole(ctx context.Context, cfg Config, ss ledger.SessionStore, opts ...Option) (*Console, error) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	c, err := newConsole(ss, cfg.Session.Key, cfg.Session, cfg.Bindings, o)
	if err != nil {
		return nil, err
	}
	c.disc = &discovery{cfg: cfg, initial: o.retryInitial, max: o.retryMax}
	if c.disc.initial <= 0 {
		c.disc.initial, c.disc.max = retryInitial, retryMax
	}
	first, cancel := context.WithTimeout(ctx, firstDiscoveryTimeout)
	defer cancel()
	_ = c.Discover(first) // logged there; Run keeps trying
	return c, nil
}

// defaultClient is the client for the provider when WithHTTPClient sets
// none.
func defaultClient() *http.Client { return &http.Client{Timeout: 10 * time.Second} }

// flowCodec signs and encrypts the flow cookie with keys derived from the
// session key, so that the PKCE verifier is not readable in the browser.
func flowCodec(key []byte) *securecookie.SecureCookie {
	derive := func(label string) []byte {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(label))
		return m.Sum(nil)
	}
	codec := securecookie.New(derive("settle sign-in flow: hash"), derive("settle sign-in flow: block"))
	codec.MaxAge(int(flowMaxAge / time.Second))
	return codec
}

// start redirects to the provider with a new state, nonce and PKCE
// challenge, remembered in the flow cookie.
func (f *oidcFlow) start(ec echo.Context, ret string) error {
	var fs flowState
	var err error
	for _, p := range []*string{&fs.State, &fs.Nonce} {
		if *p, err = randomToken(); err != nil {
			return fmt.Errorf("sign in: %w", err)
		}
	}
	fs.Verifier = oauth2.GenerateVerifier()
	fs.Return = ret
	fs.Started = time.Now().UnixNano()
	name := flowCookieName(fs.State)
	v, err := f.codec.Encode(name, fs)
	if err != nil {
		return fmt.Errorf("sign in: %w", err)
	}
	ec.SetCookie(&http.Cookie{Name: name, Value: v, Path: CallbackPath, MaxAge: int(flowMaxAge / time.Second),
		Secure: f.secure, HttpOnly: true, SameSite: http.SameSiteLaxMode})
	return ec.Redirect(http.StatusFound, f.oauth.AuthCodeURL(fs.State, oidc.Nonce(fs.Nonce), oauth2.S256ChallengeOption(fs.Verifier)))
}

// tidy clears, at the callback, the flow cookie of the attempt being
// finished (used once), the flow cookies that no longer decode (expired,
// or from an old key), and the oldest beyond maxPending. The cookies'
// Path is the callback, so /login never sees them: the browser's set is
// bounded here and by their ten-minute lifetime.
func (f *oidcFlow) tidy(ec echo.Context, used string) {
	type pending struct {
		name    string
		started int64
	}
	var live []pending
	for _, ck := range ec.Request().Cookies() {
		if !strings.HasPrefix(ck.Name, flowCookiePrefix) {
			continue
		}
		var fs flowState
		if ck.Name == used || f.codec.Decode(ck.Name, ck.Value, &fs) != nil {
			f.clear(ec, ck.Name)
			continue
		}
		live = append(live, pending{ck.Name, fs.Started})
	}
	if len(live) <= maxPending {
		return
	}
	slices.SortFunc(live, func(a, b pending) int { return cmp.Compare(a.started, b.started) })
	for _, p := range live[:len(live)-maxPending] {
		f.clear(ec, p.name)
	}
}

// clear deletes the flow cookie name.
func (f *oidcFlow) clear(ec echo.Context, name string) {
	ec.SetCookie(&http.Cookie{Name: name, Value: "", Path: CallbackPath, MaxAge: -1,
		Secure: f.secure, HttpOnly: true, SameSite: http.SameSiteLaxMode})
}

// errSignIn is a failed sign-in whose message may be shown; cause, when
// set, is logged and not shown.
type errSignIn struct {
	msg    string
	cause  error
	status int // 0: 400
}

func (e errSignIn) Error() string { return e.msg }

// unverified is the failure of the provider's answer: a code that does not
// exchange (a wrong PKCE verifier, a replayed code) or a token that does
// not verify.
//
// A provider that cannot be reached at all (no connection, a timeout) is
// said to be so: the person should try later, not again at once.
func unverified(err error) errSignIn {
	if unreachable(err) {
		return errSignIn{msg: "The identity provider could not be reached, so this sign-in could not be finished. Please try again in a few minutes.",
			cause: err, status: http.StatusServiceUnavailable}
	}
	return errSignIn{msg: "The identity provider's answer could not be verified. Please sign in again.", cause: err}
}

// callback finishes the flow: the flow cookie (used once) must match the
// state; the code is exchanged with the PKCE verifier; the ID token must
// verify and carry the nonce.
func (c *Console) callback(ec echo.Context) error {
	f := c.oidc.Load()
	if f == nil {
		return c.unavailable(ec)
	}
	// Only this attempt's cookie is used up: another tab's attempt, still
	// pending, keeps its own.
	id, fs, err := f.finish(ec)
	f.tidy(ec, flowCookieName(ec.QueryParam("state")))
	var shown errSignIn
	if errors.As(err, &shown) {
		if shown.cause != nil {
			c.log.Warn("sign-in failed", "reason", shown.msg, "err", shown.cause, "request_id", requestID(ec))
		} else {
			c.log.Info("sign-in failed", "reason", shown.msg, "request_id", requestID(ec))
		}
		status := http.StatusBadRequest
		if shown.status != 0 {
			status = shown.status
		}
		return c.render(ec, status, SignInView{Error: shown.msg, Return: "/", LoginURL: LoginPath})
	}
	if err != nil {
		return err
	}
	return c.signIn(ec, "oidc:"+id.sub, id.name, id.email, id.claims, fs.Return)
}

type identity struct {
	sub, name, email string
	claims           []string
}

func (f *oidcFlow) finish(ec echo.Context) (identity, flowState, error) {
	var fs flowState
	name := flowCookieName(ec.QueryParam("state"))
	if name == "" {
		return identity{}, fs, errSignIn{msg: "This sign-in does not match the one this browser started. Please sign in again."}
	}
	ck, err := ec.Cookie(name)
	if err != nil || f.codec.Decode(name, ck.Value, &fs) != nil {
		return identity{}, fs, errSignIn{msg: "This sign-in has expired or was started in another browser. Please sign in again."}
	}
	q := ec.QueryParams()
	if q.Get("state") == "" || !hmac.Equal([]byte(q.Get("state")), []byte(fs.State)) {
		return identity{}, fs, errSignIn{msg: "This sign-in does not match the one this browser started. Please sign in again."}
	}
	if e := q.Get("error"); e != "" {
		return identity{}, fs, errSignIn{msg: "The identity provider did not sign you in (" + truncate(e, 60) + ")."}
	}
	ctx := oidc.ClientContext(ec.Request().Context(), f.client)
	tok, err := f.oauth.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(fs.Verifier))
	if err != nil {
		return identity{}, fs, unverified(fmt.Errorf("code exchange: %w", err))
	}
	raw, ok := tok.Extra("id_token").(string)
	if !ok || raw == "" {
		return identity{}, fs, unverified(errors.New("the provider returned no ID token"))
	}
	idt, err := f.verifier.Verify(ctx, raw)
	if err != nil {
		return identity{}, fs, unverified(fmt.Errorf("ID token: %w", err))
	}
	if !hmac.Equal([]byte(idt.Nonce), []byte(fs.Nonce)) {
		return identity{}, fs, errSignIn{msg: "This sign-in's token was not issued for this browser's request. Please sign in again."}
	}
	if idt.Subject == "" {
		return identity{}, fs, unverified(errors.New("the ID token has no subject"))
	}
	// The subject becomes the actor of every action, stored and shown:
	// it is held to settle's rule for provider text (OpenID Connect
	// itself allows at most 255 ASCII characters).
	if err := ledger.CheckProviderText("subject", idt.Subject); err != nil {
		return identity{}, fs, errSignIn{msg: "The identity provider named you by a subject settle cannot use (" +
			ledger.ErrorMessage(err) + "). Ask an administrator to check the provider."}
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return identity{}, fs, fmt.Errorf("sign-in: ID token claims: %w", err)
	}
	id := identity{sub: idt.Subject, claims: claimValues(claims[f.roles])}
	id.name, _ = claims[f.name].(string)
	id.email, _ = claims["email"].(string)
	if id.name == "" {
		id.name = id.email
	}
	id.name, id.email = cleanText(truncate(id.name, 200)), cleanText(truncate(id.email, 320))
	return id, fs, nil
}

// cleanText drops from a display name or email what no store or screen
// should take (NUL and other control or format characters) and repairs
// UTF-8 that truncate cut inside a character.
func cleanText(s string) string {
	return strings.Map(func(r rune) rune {
		if r == utf8.RuneError || !unicode.IsPrint(r) && r != ' ' {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, ""))
}

// claimValues reads a roles claim that is a list of strings or one string.
func claimValues(v any) []string {
	var out []string
	switch t := v.(type) {
	case string:
		out = append(out, t)
	case []any:
		for _, e := range t {
			if s, ok := e.(string); ok && len(s) <= ledger.MaxSessionClaimLen {
				out = append(out, s)
			}
		}
	}
	if len(out) > ledger.MaxSessionClaims {
		out = out[:ledger.MaxSessionClaims]
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
