package auth

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"settle/fileerr"
	"settle/ledger"
)

// Config is the console's sign-in configuration: the OpenID provider, how
// its claims map to roles, and the session lifetimes. See
// docs/console-auth.md for the file format.
type Config struct {
	OIDC     OIDCConfig
	Bindings []BindingRule
	Session  SessionConfig
}

// OIDCConfig names the OpenID provider and this console's client there.
type OIDCConfig struct {
	Issuer       string // https://…, or http:// on a loopback host
	ClientID     string
	ClientSecret string // read from the environment variable the file names
	RedirectURL  string // <base>/auth/callback, as registered at the provider
	Scopes       []string
	RolesClaim   string // the ID token claim whose values the bindings match, e.g. "groups"
	NameClaim    string // the claim shown as the person's name
}

// BindingRule grants Role to everyone whose roles claim contains Group.
// Nil Tenants (or Targets) means all of them.
type BindingRule struct {
	Group   string
	Role    Role
	Tenants []string
	Targets []string
}

// SessionConfig holds the session lifetimes and the cookie's key.
type SessionConfig struct {
	Absolute time.Duration // from sign-in; no use extends it
	Idle     time.Duration // ends a session not used for this long
	// Key signs the session cookie; read from the environment variable
	// the file names. Every replica needs the same key.
	Key []byte
	// InsecureCookie drops the cookie's Secure flag, for plain http on a
	// loopback address only (see CheckLoopback).
	InsecureCookie bool
}

// Defaults of the file's optional fields.
const (
	DefaultAbsolute   = 12 * time.Hour
	DefaultIdle       = time.Hour
	DefaultRolesClaim = "groups"
	DefaultNameClaim  = "name"
	// MinKeyBytes is the shortest session key accepted.
	MinKeyBytes = 32
)

// DefaultScopes are requested when the file names none.
var DefaultScopes = []string{"openid", "profile", "email"}

type rawConfig struct {
	OIDC struct {
		Issuer          string   `yaml:"issuer"`
		ClientID        string   `yaml:"client_id"`
		ClientSecretEnv string   `yaml:"client_secret_env"`
		RedirectURL     string   `yaml:"redirect_url"`
		Scopes          []string `yaml:"scopes"`
		RolesClaim      string   `yaml:"roles_claim"`
		NameClaim       string   `yaml:"name_claim"`
	} `yaml:"oidc"`
	Session struct {
		Absolute       string `yaml:"absolute"`
		Idle           string `yaml:"idle"`
		KeyEnv         string `yaml:"key_env"`
		InsecureCookie bool   `yaml:"insecure_cookie"`
	} `yaml:"session"`
	Bindings []struct {
		Group   string `yaml:"group"`
		Role    string `yaml:"role"`
		Tenants any    `yaml:"tenants"`
		Targets any    `yaml:"targets"`
	} `yaml:"bindings"`
}

// LoadConfig reads and validates the console config file at path, taking
// the secrets it names from the process environment.
func LoadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("console config: %w", err)
	}
	return ParseConfig(path, data, os.Getenv)
}

// ParseConfig validates a console config; name is used in its errors and
// getenv supplies the secrets the file names. All problems are reported
// at once, each a *fileerr.Error.
func ParseConfig(name string, data []byte, getenv func(string) string) (Config, error) {
	file, err := parser.ParseBytes(data, 0)
	if err != nil {
		return Config{}, yamlError(name, err)
	}
	if len(file.Docs) != 1 || file.Docs[0].Body == nil {
		return Config{}, &fileerr.Error{File: name, Message: "want one YAML document with oidc, bindings and session"}
	}
	var raw rawConfig
	if err := yaml.NodeToValue(file.Docs[0].Body, &raw, yaml.Strict()); err != nil {
		return Config{}, yamlError(name, err)
	}
	v := &validator{name: name, file: file}
	cfg := v.config(raw, getenv)
	if len(v.errs) > 0 {
		return Config{}, errors.Join(v.errs...)
	}
	return cfg, nil
}

func yamlError(name string, err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		line := 0
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			line = tk.Position.Line
		}
		return &fileerr.Error{File: name, Line: line, Message: ye.GetMessage()}
	}
	return &fileerr.Error{File: name, Message: err.Error()}
}

type validator struct {
	name string
	file *ast.File
	errs []error
}

// fail records a problem at the line of field (a YAML path without "$.").
func (v *validator) fail(field, format string, args ...any) {
	line := 0
	if p, err := yaml.PathString("$." + field); err == nil {
		if n, err := p.FilterFile(v.file); err == nil && n != nil && n.GetToken() != nil && n.GetToken().Position != nil {
			line = n.GetToken().Position.Line
		}
	}
	v.errs = append(v.errs, &fileerr.Error{File: v.name, Line: line, Field: field, Message: fmt.Sprintf(format, args...)})
}

func (v *validator) config(raw rawConfig, getenv func(string) string) Config {
	o := raw.OIDC
	cfg := Config{OIDC: OIDCConfig{
		Issuer: o.Issuer, ClientID: o.ClientID, RedirectURL: o.RedirectURL,
		Scopes: o.Scopes, RolesClaim: o.RolesClaim, NameClaim: o.NameClaim,
	}}
	if o.Issuer == "" {
		v.fail("oidc.issuer", "is required: the provider's issuer URL")
	} else if err := checkURL(o.Issuer); err != nil {
		v.fail("oidc.issuer", "%s", err)
	}
	if o.ClientID == "" {
		v.fail("oidc.client_id", "is required")
	}
	switch {
	case o.ClientSecretEnv == "":
		v.fail("oidc.client_secret_env", "is required: the environment variable holding the client secret")
	case getenv(o.ClientSecretEnv) == "":
		v.fail("oidc.client_secret_env", "environment variable %s is not set", o.ClientSecretEnv)
	default:
		cfg.OIDC.ClientSecret = getenv(o.ClientSecretEnv)
	}
	if o.RedirectURL == "" {
		v.fail("oidc.redirect_url", "is required: <base URL>/auth/callback")
	} else if err := checkURL(o.RedirectURL); err != nil {
		v.fail("oidc.redirect_url", "%s", err)
	} else if u, _ := url.Parse(o.RedirectURL); !strings.HasSuffix(u.Path, CallbackPath) || u.RawQuery != "" {
		v.fail("oidc.redirect_url", "must end in %s, the console's callback", CallbackPath)
	}
	if cfg.OIDC.Scopes == nil {
		cfg.OIDC.Scopes = slices.Clone(DefaultScopes)
	} else if !slices.Contains(cfg.OIDC.Scopes, "openid") {
		v.fail("oidc.scopes", "must include openid")
	}
	if cfg.OIDC.RolesClaim == "" {
		cfg.OIDC.RolesClaim = DefaultRolesClaim
	}
	if cfg.OIDC.NameClaim == "" {
		cfg.OIDC.NameClaim = DefaultNameClaim
	}

	cfg.Session = v.session(raw, getenv)
	if len(raw.Bindings) == 0 {
		v.fail("bindings", "at least one binding is required: nobody could use the console")
	}
	for i, b := range raw.Bindings {
		path := fmt.Sprintf("bindings[%d]", i)
		r := BindingRule{Group: b.Group, Role: Role(b.Role)}
		if b.Group == "" {
			v.fail(path+".group", "is required: a value of the %s claim", cfg.OIDC.RolesClaim)
		}
		if !r.Role.Valid() {
			v.fail(path+".role", "must be support, owner, manager or admin")
		}
		r.Tenants = v.names(path+".tenants", b.Tenants, true)
		if b.Targets != nil && r.Role != Owner {
			v.fail(path+".targets", "only an owner binding names targets")
		} else if b.Targets != nil {
			r.Targets = v.names(path+".targets", b.Targets, false)
		}
		cfg.Bindings = append(cfg.Bindings, r)
	}
	return cfg
}

func (v *validator) session(raw rawConfig, getenv func(string) string) SessionConfig {
	s := raw.Session
	out := SessionConfig{Absolute: DefaultAbsolute, Idle: DefaultIdle, InsecureCookie: s.InsecureCookie}
	for _, d := range []struct {
		field, text string
		to          *time.Duration
	}{{"session.absolute", s.Absolute, &out.Absolute}, {"session.idle", s.Idle, &out.Idle}} {
		if d.text == "" {
			continue
		}
		dur, err := time.ParseDuration(d.text)
		if err != nil || dur < time.Minute {
			v.fail(d.field, "must be a duration of at least a minute, such as 12h or 30m")
			continue
		}
		*d.to = dur
	}
	if out.Idle > out.Absolute {
		v.fail("session.idle", "cannot be longer than session.absolute")
	}
	switch {
	case s.KeyEnv == "":
		v.fail("session.key_env", "is required: the environment variable holding the cookie signing key (%d+ bytes, the same on every replica)", MinKeyBytes)
	case len(getenv(s.KeyEnv)) < MinKeyBytes:
		v.fail("session.key_env", "environment variable %s must hold at least %d bytes", s.KeyEnv, MinKeyBytes)
	default:
		out.Key = []byte(getenv(s.KeyEnv))
	}
	return out
}

// names reads "all" (nil) or a non-empty list of names.
func (v *validator) names(field string, val any, tenants bool) []string {
	if s, ok := val.(string); ok && s == "all" {
		return nil
	}
	list, ok := val.([]any)
	if !ok || len(list) == 0 {
		v.fail(field, `must be "all" or a non-empty list of names`)
		return []string{}
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		s, ok := e.(string)
		switch {
		case !ok || s == "":
			v.fail(field, "each entry must be a name")
		case tenants && !ledger.ValidTenant(s):
			v.fail(field, "tenant %q must be 1-63 characters of a-z, 0-9, '.', '_' or '-'", s)
		case s == "all":
			v.fail(field, `"all" stands alone, not in a list`)
		default:
			out = append(out, s)
		}
	}
	return out
}

// checkURL accepts an absolute https URL, or http on a loopback host (a
// provider or console on the same machine, as in tests and demos).
func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || u.Fragment != "" {
		return errors.New("must be an absolute URL without credentials or fragment")
	}
	switch {
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && isLoopbackHost(u.Hostname()):
		return nil
	}
	return errors.New("must use https (plain http only on a loopback host)")
}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckLoopback returns an error unless addr (host:port, as given to
// `settle serve --addr`) binds only a loopback interface. Relaxing the
// cookie's Secure flag and the demo sign-in are allowed only then: an
// empty host or 0.0.0.0 listens on every interface.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if !isLoopbackHost(host) {
		return ledger.Errorf(ledger.EInvalid, "listen address %s is not loopback (127.0.0.1, ::1 or localhost)", addr)
	}
	return nil
}

// BindingsFor returns the bindings granted to someone whose roles claim
// holds claims; none when no rule matches.
func BindingsFor(rules []BindingRule, claims []string) []Binding {
	var out []Binding
	for _, r := range rules {
		if slices.Contains(claims, r.Group) {
			out = append(out, Binding{Role: r.Role, Tenants: r.Tenants, Targets: r.Targets})
		}
	}
	return out
}
