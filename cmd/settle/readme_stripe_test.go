package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readmeBlock returns the first ```sh block below the README heading, the
// commands exactly as a reader copies them.
func readmeBlock(t *testing.T, heading string) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var (
		block           strings.Builder
		inSection, inSh bool
	)
	sc := bufio.NewScanner(bytes.NewReader(readme))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == heading:
			inSection = true
		case !inSection:
		case !inSh && line == "```sh":
			inSh = true
		case inSh && line == "```":
			return block.String()
		case inSh:
			block.WriteString(line + "\n")
		}
	}
	t.Fatalf("README.md has no ```sh block under %q", heading)
	return ""
}

// The README's Stripe-shaped simulator section, run as written with sh in
// a directory holding the settle binary: the only change is the two
// addresses, made free ports so that parallel tests do not collide. A
// newcomer who copies it sees all 60 operations confirmed, with one
// PaymentIntent each, although 30 % of the creates were answered with a
// saved 500.
func TestReadme_StripeWalkthrough(t *testing.T) {
	t.Parallel()
	block := readmeBlock(t, "## A Stripe-shaped simulator")
	const simAddr, apiAddr = "127.0.0.1:9191", "127.0.0.1:8080"
	for _, want := range []string{simAddr, apiAddr, "./settle serve", "of 60 operations confirmed", "kill $SERVE $SIM"} {
		if !strings.Contains(block, want) {
			t.Fatalf("the README block lacks %q:\n%s", want, block)
		}
	}
	script := strings.NewReplacer(simAddr, freeAddr(t), apiAddr, freeAddr(t)).Replace(block)

	dir := t.TempDir()
	if err := os.Symlink(binary, filepath.Join(dir, "settle")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = withoutEnv(withoutEnv(os.Environ(), "SETTLE_SIM_API_KEY"), "SETTLE_CONFIG")
	// The block starts the simulator and settle in the background: one
	// process group, so that a failing run leaves neither behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 20 * time.Second
	var stderr syncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if err != nil {
		t.Fatalf("the README block: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 2 || lines[len(lines)-2] != "60 of 60 operations confirmed" || lines[len(lines)-1] != "60" {
		t.Fatalf("the README block printed:\n%s\nstderr:\n%s", out, stderr.String())
	}
}
