package main

import (
	"bytes"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"settle/ledger/postgres/pgtest"
)

// runIn runs the binary in dir with env added and returns its exit status
// and output.
func runIn(t *testing.T, dir string, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	c := exec.Command(binary, args...)
	c.Dir = dir
	c.Env = append(os.Environ(), env...)
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	err := c.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

// A database that is malformed, unreachable, unsupported or cannot be
// created is one line on stderr that says so once, exit 1, and never the
// password — for every command that opens the store.
func TestBadDatabaseURL(t *testing.T) {
	t.Parallel()
	server, err := url.Parse(pgtest.URL())
	if err != nil {
		t.Fatal(err)
	}
	server.User = url.UserPassword("settle_no_such_role", "hunter2") // a server that answers, and refuses
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tt := range map[string]struct{ url, want string }{
		"Malformed":     {"postgres://admin:hunter2@db:notaport/x", "invalid PostgreSQL URL"},
		"Unreachable":   {"postgres://admin:hunter2@127.0.0.1:1/x?connect_timeout=5", "cannot connect to PostgreSQL at 127.0.0.1:1 (database x, user admin): connection refused"},
		"UnknownHost":   {"postgres://admin:hunter2@settle-no-such-host.invalid/x?connect_timeout=5", "cannot connect to PostgreSQL at settle-no-such-host.invalid:5432 (database x, user admin): "},
		"Refused":       {server.String(), "cannot connect to PostgreSQL at " + server.Hostname()},
		"Unsupported":   {"mysql://admin:hunter2@db/x", "unsupported database URL"},
		"NoDirectory":   {"sqlite:/proc/settle/x.db", "cannot open SQLite database /proc/settle/x.db: directory /proc/settle does not exist"},
		"NotADirectory": {"sqlite:" + notADir + "/x.db", "cannot open SQLite database " + notADir + "/x.db: " + notADir + " is not a directory"},
		"Directory":     {"sqlite:" + t.TempDir(), ": it is a directory"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, args := range [][]string{
				{"serve", "--addr", "127.0.0.1:0"}, {"migrate"}, {"token", "list", "--tenant", "acme"},
			} {
				code, stdout, msg := runIn(t, t.TempDir(), nil, append(args, "--database-url", tt.url)...)
				if code != 1 || stdout != "" || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, tt.want) {
					t.Fatalf("settle %s: exit %d, stdout %q, stderr %q; want exit 1 and one line with %q",
						args[0], code, stdout, msg, tt.want)
				}
				if strings.Contains(msg, "hunter2") {
					t.Fatalf("settle %s printed the password: %q", args[0], msg)
				}
				for _, phrase := range []string{"cannot connect", "unreachable", "failed to connect", "connection refused", "no such host", "cannot open"} {
					if strings.Count(strings.ToLower(msg), phrase) > 1 {
						t.Fatalf("settle %s says %q more than once: %q", args[0], phrase, msg)
					}
				}
			}
		})
	}
}

// Usage errors exit 2. Each is one line on stderr naming the command and
// the problem, except a missing or unknown command, which prints the list
// of commands.
func TestUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{}, {"bogus"}} {
		if code, _, stderr := runIn(t, t.TempDir(), nil, args...); code != 2 || !strings.Contains(stderr, "Commands:") {
			t.Fatalf("settle %v: exit %d, stderr %q; want 2 and the list of commands", args, code, stderr)
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--no-such-flag"}, "settle serve: unknown flag --no-such-flag"},
		{[]string{"migrate", "extra"}, "settle migrate: unexpected argument extra"},
		{[]string{"token", "create"}, "settle token create: --tenant is required"},
		{[]string{"token", "create", "--database-url", "sqlite:x.db"}, "settle token create: --tenant is required"},
		{[]string{"token", "revoke"}, "settle token revoke: the token ID is required"},
		{[]string{"token", "list", "extra"}, "settle token list: unexpected argument extra"},
		{[]string{"token", "list"}, "settle token list: --tenant is required"},
		{[]string{"token", "revoke", "tok_1"}, "settle token revoke: --tenant is required"},
		{[]string{"token", "frob"}, "settle token: unexpected argument frob"},
		{[]string{"serve", "--workers", "0"}, "settle serve: --workers must be at least 1"},
		{[]string{"serve", "--log-format", "xml"}, `settle serve: --log-format must be text or json, got "xml"`},
		{[]string{"serve", "--log-level", "loud"}, `settle serve: --log-level: must be debug, info, warn or error, got "loud"`},
		{[]string{"serve", "--leader-lease", "1ms"}, "settle serve: --leader-lease must be at least 3ms"},
		{[]string{"serve", "--audit-interval", "0s"}, "settle serve: --audit-interval must be positive"},
		{[]string{"audit"}, "settle audit: --target is required"},
		{[]string{"sim", "--bogus"}, "settle sim: unknown flag --bogus"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			code, stdout, stderr := runIn(t, dir, []string{"DATABASE_URL="}, tt.args...)
			if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, tt.want) {
				t.Errorf("settle %v: exit %d, stdout %q, stderr %q; want exit 2 and one line starting %q",
					tt.args, code, stdout, stderr, tt.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "settle.db")); err == nil {
				t.Errorf("settle %v created a store", tt.args)
			}
		})
	}
	if code, _, _ := runIn(t, t.TempDir(), nil, "token"); code != 2 {
		t.Errorf("settle token: exit %d, want 2", code)
	}
}

// An explicit -h is help, not an error: every command prints its usage on
// stdout, nothing on stderr, exits 0 and touches no store.
func TestHelp(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want []string // in stdout
	}{
		{[]string{"-h"}, []string{"Usage: settle <command>", "serve", "sim"}},
		{[]string{"help"}, []string{"Usage: settle <command>"}},
		{[]string{"serve", "-h"}, []string{"Usage: settle serve", "-body-limit", "-no-executor", "-workers"}},
		{[]string{"serve", "--help"}, []string{"Usage: settle serve"}},
		{[]string{"serve", "--demo", "-h"}, []string{"Usage: settle serve"}},
		{[]string{"sim", "-h"}, []string{"Usage: settle sim", "-print-contract", "-drop-after-commit"}},
		{[]string{"sim", "--help"}, []string{"Usage: settle sim"}},
		{[]string{"config", "-h"}, []string{"Usage: settle config", "config check"}},
		{[]string{"config", "check", "-h"}, []string{"Usage: settle config check", "--config FILE", "--workers"}},
		{[]string{"help", "config", "check"}, []string{"Usage: settle config check", "--config FILE"}},
		{[]string{"migrate", "-h"}, []string{"Usage: settle migrate", "-database-url"}},
		{[]string{"token", "-h"}, []string{"Usage: settle token"}},
		{[]string{"token", "create", "-h"}, []string{"Usage: settle token", "-tenant"}},
		{[]string{"token", "revoke", "-h"}, []string{"Usage: settle token"}},
		{[]string{"operation", "-h"}, []string{"Usage: settle operation", "operation show"}},
		{[]string{"operation", "show", "-h"}, []string{"Usage: settle operation show", "-tenant"}},
		{[]string{"escalation", "-h"}, []string{"Usage: settle escalation"}},
		{[]string{"escalation", "propose", "-h"}, []string{"Usage: settle escalation", "-remote-ref"}},
		{[]string{"quarantine", "-h"}, []string{"Usage: settle quarantine"}},
		{[]string{"quarantine", "resolve", "-h"}, []string{"Usage: settle quarantine", "-note"}},
		{[]string{"figures", "-h"}, []string{"Usage: settle figures", "-csv"}},
		{[]string{"callback", "-h"}, []string{"Usage: settle callback"}},
		{[]string{"callback", "set", "-h"}, []string{"Usage: settle callback", "-url"}},
		{[]string{"tenant", "-h"}, []string{"Usage: settle tenant"}},
		{[]string{"tenant", "set", "-h"}, []string{"Usage: settle tenant", "-param", "-force"}},
		{[]string{"tenant", "show", "-h"}, []string{"Usage: settle tenant", "-format"}},
		{[]string{"audit", "-h"}, []string{"Usage: settle audit", "-target"}},
	} {
		// In parallel: 27 short commands one after another were a minute
		// of the package's wall time under -race.
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			code, stdout, stderr := runIn(t, dir, []string{"DATABASE_URL="}, tt.args...)
			if code != 0 || stderr != "" {
				t.Errorf("settle %v: exit %d, stderr %q; want exit 0 and nothing on stderr", tt.args, code, stderr)
			}
			for _, want := range tt.want {
				if !strings.Contains(stdout, want) {
					t.Errorf("settle %v: stdout lacks %q:\n%s", tt.args, want, stdout)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "settle.db")); err == nil {
				t.Errorf("settle %v created a store", tt.args)
			}
		})
	}
}
