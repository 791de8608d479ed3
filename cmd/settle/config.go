package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/alecthomas/kong"
	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"settle/auth"
	"settle/fileerr"
	"settle/target"
)

// One configuration model for settle serve: every setting is a flag of
// serveConfig; the flags with an env tag read that variable; and a YAML
// file (--config) may set any of them, one key per flag, spelled with
// underscores (database_url: …, log_format: json). A flag given on the
// command line wins over the environment, which wins over the file, which
// wins over the default. kong does the layering; fileResolver reads the
// file.

// fileSetting is one key of the file.
type fileSetting struct {
	key, value string
	line       int
}

// readConfigFile reads the settings of a --config file: one YAML mapping
// of scalars.
func readConfigFile(path string) ([]fileSetting, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("--config %s: %w", path, err)
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		line, msg := yamlProblem(err)
		return nil, &fileerr.Error{File: path, Line: line, Message: "not YAML: " + msg}
	}
	if len(f.Docs) == 0 || f.Docs[0].Body == nil {
		return nil, nil // an empty file sets nothing
	}
	var values []*ast.MappingValueNode
	switch body := f.Docs[0].Body.(type) {
	case *ast.MappingNode:
		values = body.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{body}
	default:
		return nil, &fileerr.Error{File: path, Line: line(body), Message: "want a mapping of settings (key: value), one per flag of settle serve"}
	}
	var (
		out  []fileSetting
		errs []error
		seen = map[string]int{}
	)
	for _, v := range values {
		key := v.Key.GetToken().Value
		ln := line(v.Key)
		if first, dup := seen[key]; dup {
			errs = append(errs, &fileerr.Error{File: path, Line: ln, Field: key, Message: fmt.Sprintf("set twice (first at line %d)", first)})
			continue
		}
		seen[key] = ln
		switch v.Value.Type() {
		case ast.MappingType, ast.SequenceType, ast.AnchorType, ast.AliasType, ast.TagType:
			errs = append(errs, &fileerr.Error{File: path, Line: ln, Field: key, Message: "want a single value"})
			continue
		case ast.NullType:
			errs = append(errs, &fileerr.Error{File: path, Line: ln, Field: key, Message: "has no value"})
			continue
		}
		out = append(out, fileSetting{key: key, value: v.Value.GetToken().Value, line: ln})
	}
	return out, errors.Join(errs...)
}

func line(n ast.Node) int {
	if n == nil || n.GetToken() == nil || n.GetToken().Position == nil {
		return 0
	}
	return n.GetToken().Position.Line
}

// yamlProblem is the line and message of a YAML syntax error.
func yamlProblem(err error) (int, string) {
	var ye yaml.Error
	if errors.As(err, &ye) {
		line := 0
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			line = tk.Position.Line
		}
		return line, ye.GetMessage()
	}
	return 0, err.Error()
}

// fileResolver gives kong the settings of the --config file of the
// command being parsed (settle serve, settle config check): a setting that
// neither the command line nor the environment set. Every problem of the
// file is collected and reported at once, by Validate.
type fileResolver struct {
	loaded bool
	path   string
	byKey  map[string]fileSetting
	used   map[string]fileSetting // by flag name: the settings applied
	errs   []error
}

var _ kong.Resolver = (*fileResolver)(nil)

// load reads the file the command's --config names, once per parse, and
// notes its unknown keys.
func (r *fileResolver) load(ctx *kong.Context) {
	r.loaded = true
	var config *kong.Flag
	known := map[string]bool{}
	for _, f := range ctx.Flags() {
		if f.Name == "config" {
			config = f
		}
		known[strings.ReplaceAll(f.Name, "-", "_")] = f.Name != "config" && f.Name != "help"
	}
	if config == nil {
		return
	}
	r.path, _ = ctx.FlagValue(config).(string)
	if r.path == "" {
		return
	}
	settings, err := readConfigFile(r.path)
	if err != nil {
		r.errs = append(r.errs, err)
	}
	r.byKey, r.used = map[string]fileSetting{}, map[string]fileSetting{}
	for _, s := range settings {
		if !known[s.key] {
			r.errs = append(r.errs, &fileerr.Error{File: r.path, Line: s.line, Field: s.key, Message: "unknown setting (settle serve --help lists them; spell them with _ for -)"})
			continue
		}
		r.byKey[s.key] = s
	}
}

// Resolve is the file's value of flag, unless the environment sets it.
func (r *fileResolver) Resolve(ctx *kong.Context, _ *kong.Path, flag *kong.Flag) (any, error) {
	if !r.loaded {
		r.load(ctx)
	}
	s, ok := r.byKey[strings.ReplaceAll(flag.Name, "-", "_")]
	if !ok {
		return nil, nil
	}
	for _, name := range flag.Envs {
		if os.Getenv(name) != "" {
			return nil, nil // the environment wins
		}
	}
	// Parsed here first so that a bad value is reported at its line,
	// without quoting it (it may be a secret).
	scratch := reflect.New(flag.Target.Type()).Elem()
	if err := flag.Parse(kong.ScanFromTokens(kong.Token{Type: kong.FlagValueToken, Value: s.value}), scratch); err != nil {
		r.errs = append(r.errs, &fileerr.Error{File: r.path, Line: s.line, Field: s.key, Message: "want " + want(flag.Target.Type())})
		return nil, nil
	}
	r.used[flag.Name] = s
	return s.value, nil
}

// Validate reports every problem of the file.
func (r *fileResolver) Validate(*kong.Application) error { return errors.Join(r.errs...) }

// sources says where every flag of the parsed command got its value:
// "flag", "env NAME", "FILE:LINE" or "default".
func (r *fileResolver) sources(e *env) map[string]string {
	out := map[string]string{}
	for _, f := range e.kctx.Flags() {
		out[f.Name] = "default"
		for _, name := range f.Envs {
			if os.Getenv(name) != "" {
				out[f.Name] = "env " + name
			}
		}
		if s, ok := r.used[f.Name]; ok {
			out[f.Name] = fmt.Sprintf("%s:%d", r.path, s.line)
		}
		if e.given[f.Name] {
			out[f.Name] = "flag"
		}
	}
	return out
}

// want describes the values a flag takes, without quoting the one given,
// which may be a secret (a password in a database URL).
func want(t reflect.Type) string {
	switch t {
	case reflect.TypeFor[time.Duration]():
		return "a duration such as 30s, 5m or 1h"
	case reflect.TypeFor[retentionPeriod]():
		return "a whole number of days such as 30d, or a duration such as 720h"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Uint64:
		return "a whole number"
	case reflect.Float64:
		return "a number"
	}
	return "a valid value"
}

// blame makes a complaint about --NAME, written by the checks after
// parsing, say where in the file the value came from: a *fileerr.Error for
// the first flag the message names whose value the file set; else msg.
func (r *fileResolver) blame(msg string) error {
	first, at := "", len(msg)
	for name := range r.used {
		for _, end := range []string{" ", ":", ",", ")"} {
			if i := strings.Index(msg+" ", "--"+name+end); i >= 0 && i < at {
				first, at = name, i
			}
		}
	}
	if first == "" {
		return nil
	}
	s := r.used[first]
	return &fileerr.Error{File: r.path, Line: s.line, Field: s.key, Message: msg}
}

// secretSetting reports whether a flag's value must never be printed.
func secretSetting(name string) bool {
	for _, w := range []string{"secret", "password", "token", "key"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// masked is a setting's value as settle config check prints it: URLs
// without their password (or password parameters), secrets as "(set)".
func masked(name, value string) string {
	switch {
	case value == "":
		return ""
	case secretSetting(name):
		return "(set, not shown)"
	case strings.Contains(value, "://"):
		u, err := url.Parse(value)
		if err != nil {
			return "(not shown: not a valid URL)"
		}
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		q := u.Query()
		for k := range q {
			if secretSetting(strings.ToLower(k)) {
				q.Set(k, "xxxxx")
			}
		}
		u.RawQuery = q.Encode()
		return u.String()
	}
	return value
}

// printSettings writes every setting of the parsed command, masked, and
// where it came from, sorted by name.
func printSettings(w io.Writer, e *env, sources map[string]string) {
	flags := map[string]*kong.Flag{}
	var names []string
	for _, f := range e.kctx.Flags() {
		if f.Name == "help" {
			continue
		}
		flags[f.Name] = f
		names = append(names, f.Name)
	}
	slices.Sort(names)
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		v := fmt.Sprint(e.kctx.FlagValue(flags[n]))
		fmt.Fprintf(w, "%-*s  %s  (%s)\n", width, strings.ReplaceAll(n, "-", "_"), quoteEmpty(masked(n, v)), sources[n])
	}
}

func quoteEmpty(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

// configCmd is `settle config`.
type configCmd struct {
	Check configCheck `cmd:"" help:"check settle serve's configuration and print it, secrets masked"`
}

// configCheck is `settle config check`: it takes every setting of settle
// serve.
type configCheck struct {
	serveConfig `embed:""`
}

// Help is the detail of settle config check --help.
func (configCheck) Help() string {
	return `settle config check [--config FILE] [any flag of settle serve]

Reads settle serve's configuration as serve would — flags, then environment
variables, then the --config file, then defaults — checks it, and prints
every setting with where its value came from, secrets and passwords masked.
With --contracts it also loads the contracts and says whether each secret
they name is set (never its value), and with --console-config checks the
console's sign-in file and tries its OpenID provider's discovery. Exit 0
when serve would start with it, 1 when a contract or secret is wrong or the
OpenID provider cannot be reached, 2 when a setting is.`
}

func (c *configCheck) run(ctx context.Context, e *env) error {
	if err := c.validate(); err != nil {
		return e.file.blameUsage(err)
	}
	sources := e.file.sources(e)
	stdout, cfg := e.stdout, c.serveConfig
	printSettings(stdout, e, sources)
	var problems []string
	if cfg.Contracts != "" {
		set, err := target.Load(cfg.Contracts)
		if err != nil {
			return err
		}
		for _, name := range set.Names() {
			c, _ := set.Get(name)
			for _, s := range []struct{ what, env string }{
				{"webhook secret", webhookEnv(c)}, {"credential", authEnv(c)},
				{"owner notify secret", notifyEnv(c)},
			} {
				if s.env == "" {
					continue
				}
				state := "set"
				if strings.TrimSpace(os.Getenv(s.env)) == "" {
					state = "NOT SET"
					problems = append(problems, fmt.Sprintf("target %s: %s environment variable %s is not set", name, s.what, s.env))
				}
				fmt.Fprintf(stdout, "target %s: %s from %s: %s\n", name, s.what, s.env, state)
			}
		}
	}
	if cfg.ConsoleConfig != "" {
		ac, err := auth.LoadConfig(cfg.ConsoleConfig)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "console sign-in: %s is valid\n", cfg.ConsoleConfig)
		// serve starts without its provider (the console then says sign-in
		// is unavailable), but a check before a deployment should know.
		if err := auth.CheckProvider(ctx, ac); err != nil {
			fmt.Fprintf(stdout, "console sign-in: the OpenID provider could not be reached: %v\n", err)
			problems = append(problems, "console sign-in: the OpenID provider at "+ac.OIDC.Issuer+
				" could not be reached; serve would start, but nobody could sign in to the console until it answers")
		} else {
			fmt.Fprintf(stdout, "console sign-in: the OpenID provider at %s answered its discovery\n", ac.OIDC.Issuer)
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	fmt.Fprintln(stdout, "settle config check: settle serve would start with this configuration")
	return nil
}

func webhookEnv(c *target.Contract) string {
	if c.Webhook == nil {
		return ""
	}
	return c.Webhook.SecretEnv
}

func notifyEnv(c *target.Contract) string {
	if c.Owner.Notify == nil {
		return ""
	}
	return c.Owner.Notify.SecretEnv
}

func authEnv(c *target.Contract) string {
	if c.Auth == nil {
		return ""
	}
	return c.Auth.SecretEnv
}
