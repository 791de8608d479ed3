package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"settle/auth"
	"settle/target"
)

// One configuration model for settle serve: every setting is a flag; the
// flags that name an environment variable ("(env NAME)" in their usage)
// read it; and a YAML file (--config) may set any of them, one key per
// flag, spelled with underscores (database_url: …, log_format: json).
// A flag given on the command line wins over the environment, which wins
// over the file, which wins over the default.

// envOfFlag finds the environment variable a flag's usage names.
var envOfFlag = regexp.MustCompile(`\(env ([A-Z][A-Z0-9_]*)\)`)

// configFileError is one problem of the file, at its line and key.
type configFileError struct {
	file  string
	line  int
	key   string
	issue string
}

func (e *configFileError) Error() string {
	switch {
	case e.key == "" && e.line == 0:
		return fmt.Sprintf("%s: %s", e.file, e.issue)
	case e.key == "":
		return fmt.Sprintf("%s:%d: %s", e.file, e.line, e.issue)
	case e.line == 0:
		return fmt.Sprintf("%s: %s: %s", e.file, e.key, e.issue)
	}
	return fmt.Sprintf("%s:%d: %s: %s", e.file, e.line, e.key, e.issue)
}

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
		return nil, &configFileError{file: path, line: line, issue: "not YAML: " + msg}
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
		return nil, &configFileError{file: path, line: line(body), issue: "want a mapping of settings (key: value), one per flag of settle serve"}
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
			errs = append(errs, &configFileError{path, ln, key, fmt.Sprintf("set twice (first at line %d)", first)})
			continue
		}
		seen[key] = ln
		switch v.Value.Type() {
		case ast.MappingType, ast.SequenceType, ast.AnchorType, ast.AliasType, ast.TagType:
			errs = append(errs, &configFileError{path, ln, key, "want a single value"})
			continue
		case ast.NullType:
			errs = append(errs, &configFileError{path, ln, key, "has no value"})
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

// applyConfigFile sets on fs each setting of the file at path that neither
// the command line nor the environment set, and returns where every flag's
// value came from: "flag", "env NAME", "FILE:LINE" or "default".
func applyConfigFile(fs *flag.FlagSet, path string, getenv func(string) string) (map[string]string, error) {
	sources := map[string]string{}
	fs.VisitAll(func(f *flag.Flag) {
		sources[f.Name] = "default"
		if m := envOfFlag.FindStringSubmatch(f.Usage); m != nil && getenv(m[1]) != "" {
			sources[f.Name] = "env " + m[1]
		}
	})
	fs.Visit(func(f *flag.Flag) { sources[f.Name] = "flag" })
	if path == "" {
		return sources, nil
	}
	settings, err := readConfigFile(path)
	if settings == nil {
		return sources, err
	}
	errs := []error{err}
	for _, s := range settings {
		name := strings.ReplaceAll(s.key, "_", "-")
		f := fs.Lookup(name)
		if f == nil || name == "config" {
			errs = append(errs, &configFileError{path, s.line, s.key, "unknown setting (settle serve -h lists them; spell them with _ for -)"})
			continue
		}
		if src := sources[name]; src != "default" {
			continue // the command line and the environment win
		}
		if err := fs.Set(name, s.value); err != nil {
			errs = append(errs, &configFileError{path, s.line, s.key, "want " + want(f)})
			continue
		}
		sources[name] = fmt.Sprintf("%s:%d", path, s.line)
	}
	return sources, errors.Join(errs...)
}

// want describes the values a flag takes, without quoting the one given,
// which may be a secret (a password in a database URL).
func want(f *flag.Flag) string {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return "a valid value"
	}
	switch g.Get().(type) {
	case time.Duration:
		return "a duration such as 30s, 5m or 1h"
	case bool:
		return "true or false"
	case int, int64, uint, uint64:
		return "a whole number"
	case float64:
		return "a number"
	}
	return "a valid value"
}

// blame rewrites a one-line complaint about --NAME, written by the checks
// after parsing, to say where in the file that value came from.
type blame struct {
	w       io.Writer
	sources map[string]string
}

func (b blame) Write(p []byte) (int, error) {
	msg := string(p)
	// The first flag the message names whose value came from the file.
	first, at := "", len(msg)
	for name, src := range b.sources {
		if !strings.Contains(src, ":") {
			continue
		}
		for _, end := range []string{" ", ":", ","} {
			if i := strings.Index(msg, "--"+name+end); i >= 0 && i < at {
				first, at = name, i
			}
		}
	}
	if prefix, rest, ok := strings.Cut(msg, ": "); ok && first != "" {
		msg = fmt.Sprintf("%s: %s: %s: %s", prefix, b.sources[first], strings.ReplaceAll(first, "-", "_"), rest)
	}
	if _, err := io.WriteString(b.w, msg); err != nil {
		return 0, err
	}
	return len(p), nil
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

// printSettings writes every setting of fs, masked, and where it came
// from, sorted by name.
func printSettings(w io.Writer, fs *flag.FlagSet, sources map[string]string) {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	slices.Sort(names)
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		f := fs.Lookup(n)
		fmt.Fprintf(w, "%-*s  %s  (%s)\n", width, strings.ReplaceAll(n, "-", "_"), quoteEmpty(masked(n, f.Value.String())), sources[n])
	}
}

func quoteEmpty(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

const configUsage = `usage: settle config check [--config FILE] [any flag of settle serve]

Reads settle serve's configuration as serve would — flags, then environment
variables, then the --config file, then defaults — checks it, and prints
every setting with where its value came from, secrets and passwords masked.
With --contracts it also loads the contracts and says whether each secret
they name is set (never its value), and with --console-config checks the
console's sign-in file and tries its OpenID provider's discovery. Exit 0
when serve would start with it, 1 when a contract or secret is wrong or the
OpenID provider cannot be reached, 2 when a setting is.
`

// configCmd runs `settle config check`.
func configCmd(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || isHelp(args[0]) {
		w := stderr
		if len(args) > 0 {
			w = stdout
		}
		fmt.Fprint(w, configUsage)
		if len(args) == 0 {
			return errUsage
		}
		return errHelp
	}
	if args[0] != "check" {
		fmt.Fprintf(stderr, "settle config: unknown command %q\n", args[0])
		return errUsage
	}
	cfg, err := serveFlags(args[1:], stdout, stderr)
	if err != nil {
		return err
	}
	printSettings(stdout, cfg.flags, cfg.sources)
	var problems []string
	if cfg.contracts != "" {
		set, err := target.Load(cfg.contracts)
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
	if cfg.consoleConfig != "" {
		ac, err := auth.LoadConfig(cfg.consoleConfig)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "console sign-in: %s is valid\n", cfg.consoleConfig)
		// serve starts without its provider (the console then says sign-in
		// is unavailable), but a check before a deployment should know.
		if err := auth.CheckProvider(context.Background(), ac); err != nil {
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
