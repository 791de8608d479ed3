package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"settle/auth"
)

// settle serve --demo is a populated playground: within a minute of start,
// through the API with tokens of its two tenants, both acme and globex have
// operations, and they end in every state a newcomer should see: SUCCEEDED
// (Confirmed), UNKNOWN (Confirmation pending), ESCALATED (Under review) and
// FAILED_TERMINAL (Not applied). It says where the console is, and stops
// cleanly (the cleanup checks the exit).
func TestServe_DemoPlayground(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "settle.db")
	s := startServer(t, dir, nil, "--database-url", db, "--demo")
	tokens := map[string]string{}
	for _, tenant := range []string{"acme", "globex"} {
		out, err := exec.Command(binary, "token", "create", "--name", "test client", "--new-tenant", "--tenant", tenant, "--database-url", db).Output()
		if err != nil {
			t.Fatalf("token create %s: %v", tenant, err)
		}
		tokens[tenant] = strings.TrimSpace(string(out))
	}

	want := []string{"SUCCEEDED", "UNKNOWN", "ESCALATED", "FAILED_TERMINAL"}
	waitFor(t, 60*time.Second, "operations of both tenants in every state", func() (bool, string) {
		states := map[string]int{}
		perTenant := map[string]int{}
		for tenant, token := range tokens {
			for _, op := range listOperations(t, s.URL, token) {
				if op.Tenant != tenant {
					t.Fatalf("tenant %s's token listed an operation of %s", tenant, op.Tenant)
				}
				states[op.State]++
				perTenant[tenant]++
			}
		}
		done := perTenant["acme"] > 0 && perTenant["globex"] > 0
		for _, st := range want {
			done = done && states[st] > 0
		}
		return done, fmt.Sprintf("per tenant %v, states %v", perTenant, sorted(states))
	})

	log := s.Log.String()
	if !strings.Contains(log, "console="+s.URL+"/") || !strings.Contains(log, "demo_sign_in=") {
		t.Fatalf("no start line naming the console and the demo sign-in in the log:\n%s", log)
	}
	for _, token := range tokens {
		if strings.Contains(log, token) {
			t.Fatal("the log holds an API token")
		}
	}
}

// --demo lets anyone sign in, so it is refused, in one line and with the
// usage exit status, on any address other than loopback.
func TestServe_DemoRefusedOffLoopback(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:0"} {
		t.Run(addr, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			db := "sqlite:" + filepath.Join(t.TempDir(), "settle.db")
			cmd := exec.CommandContext(ctx, binary, "serve", "--demo", "--addr", addr, "--database-url", db)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 2 {
				t.Fatalf("err = %v, want exit status 2; stderr %q", err, stderr.String())
			}
			const want = "settle serve: --demo lets anyone sign in without a password, so --addr must be a loopback address"
			if msg := stderr.String(); strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, want) || stdout.Len() != 0 {
				t.Fatalf("want one line starting %q, got %q (stdout %q)", want, msg, stdout.String())
			}
		})
	}
}

type listedOp struct {
	Tenant string `json:"tenant"`
	State  string `json:"state"`
}

// listOperations returns the newest operations the token's tenant can see.
func listOperations(t *testing.T, base, token string) []listedOp {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/operations?limit=500", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/v1/operations: %d", resp.StatusCode)
	}
	var page struct {
		Operations []listedOp `json:"operations"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		t.Fatal(err)
	}
	return page.Operations
}

// sorted renders counts in a stable order for failure messages.
func sorted(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%d ", k, m[k])
	}
	return strings.TrimSpace(b.String())
}

// Only addresses that name this machine pass; an empty or unspecified host
// listens on every interface and a name other than localhost may resolve
// anywhere.
func TestCheckDemoAddr(t *testing.T) {
	t.Parallel()
	for addr, ok := range map[string]bool{
		"127.0.0.1:8080": true, "127.0.0.2:0": true, "[::1]:0": true, "localhost:8080": true,
		"0.0.0.0:8080": false, ":8080": false, "[::]:0": false, "10.0.0.1:80": false,
		"example.com:80": false, "127.0.0.1": false, "": false,
	} {
		err := checkDemoAddr(addr)
		var usage *usageError
		if (err == nil) != ok || (err != nil && !errors.As(err, &usage)) {
			t.Errorf("checkDemoAddr(%q) = %v; want accepted %t, else a usage error", addr, err, ok)
		}
	}
}

// The demo owners own exactly the playground's targets, so that every
// escalation the playground makes has two owners who can settle it.
func TestDemo_OwnersOwnThePlaygroundTargets(t *testing.T) {
	got := []string{demoCards, demoTransfers, demoLegacy}
	if want := auth.DemoTargets(); !slices.Equal(got, want) {
		t.Fatalf("playground targets %v, demo owners own %v", got, want)
	}
}
