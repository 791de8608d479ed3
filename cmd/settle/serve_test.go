package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// classAContract writes the contract of a class A simulator keeping keys for
// retention (its timeout is 2s) and returns the file's path.
func classAContract(t *testing.T, dir, retention string) string {
	t.Helper()
	out, err := exec.Command(binary, "sim", "--addr", "127.0.0.1:1", "--print-contract", "--name", "payments",
		"--class", "A", "--retention", retention).Output()
	if err != nil {
		t.Fatalf("print contract: %v", err)
	}
	path := filepath.Join(dir, "contracts-"+retention+".yaml")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// settle serve refuses, in one line naming the target and the numbers, a
// class A target whose retention leaves no time for a replay after a crash:
// the claim lease (timeout 2s + 5s) expires, then a replay needs its timeout
// and the replay margin (5s) before the window ends.
func TestServe_RefusesLeasesThatDoNotFit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "settle.db")
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"NoRoomForAReplay": {[]string{"--contracts", classAContract(t, dir, "14s")},
			"settle serve: target payments: claim lease 7s + timeout 2s + replay margin 5s = 14s leaves no time for a same-key replay inside its 14s retention; "},
		"ReconcilerLeaseShorterThanASend": {[]string{"--contracts", classAContract(t, dir, "24h"), "--lease", "6s"},
			"settle serve: --lease 6s (the reconciler's) must exceed target payments's timeout (2s) by at least 5s"},
	} {
		t.Run(name, func(t *testing.T) {
			// A settle that starts is stopped after a while and fails the test.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, binary, append([]string{"serve", "--addr", "127.0.0.1:0", "--database-url", db}, c.args...)...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 {
				t.Fatalf("err = %v, want exit status 1; stderr %q", err, stderr.String())
			}
			msg := stderr.String()
			if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, c.want) || stdout.Len() != 0 {
				t.Fatalf("want one line starting %q, got %q (stdout %q)", c.want, msg, stdout.String())
			}
		})
	}
	// One second more and a replay fits: settle starts.
	base := start(t, dir, nil, "--database-url", db, "--contracts", classAContract(t, dir, "15s"))
	healthy(t, base)
}
