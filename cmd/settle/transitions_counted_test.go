package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"settle/auth/oidctest"
)

// Every transition is counted once, whichever entry point made it: the
// API (a creation, a refused payload conflict), the loops (claims,
// outcomes, an ambiguous answer, the reconciler's escalation), the
// console (an approved confirmation) and the CLI (an approved "not
// applied", committed by a short-lived process that serves no metrics and
// counted by the server that drains what it stored). /metrics shows each
// transition exactly as often as it was made, on both stores.
func TestServe_TransitionsCountedOnce(t *testing.T) {
	t.Parallel()
	for name, db := range map[string]func(t *testing.T) string{
		"SQLite":   func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "settle.db") },
		"Postgres": schemaURL,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testTransitionsCounted(t, db(t))
		})
	}
}

// twoSims runs two simulators — payments (class A, no faults) and
// dropping (class D, every response dropped after commit, so that its
// operations become UNKNOWN and are escalated) — and writes one contracts
// file naming both.
func twoSims(t *testing.T, dir string) string {
	t.Helper()
	var yaml strings.Builder
	yaml.WriteString("targets:\n")
	for _, s := range []struct {
		name string
		args []string
	}{{"payments", []string{"--class", "A"}}, {"dropping", []string{"--class", "D", "--drop-after-commit", "1"}}} {
		addr := freeAddr(t)
		args := append([]string{"--addr", addr, "--name", s.name}, s.args...)
		out, err := exec.Command(binary, append([]string{"sim", "--print-contract"}, args...)...).Output()
		if err != nil {
			t.Fatalf("print contract: %v", err)
		}
		_, targets, ok := strings.Cut(string(out), "targets:\n")
		if !ok {
			t.Fatalf("contract without targets:\n%s", out)
		}
		yaml.WriteString(targets)
		_, stop := startSim(t, args...)
		t.Cleanup(stop)
	}
	path := filepath.Join(dir, "contracts.yaml")
	if err := os.WriteFile(path, []byte(yaml.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func testTransitionsCounted(t *testing.T, db string) {
	dir := t.TempDir()
	contracts := twoSims(t, dir)
	p := oidctest.Start(t,
		oidctest.User{Subject: "alice", Name: "Alice", Email: "alice@example.com", Groups: []string{"owners"}},
		oidctest.User{Subject: "bob", Name: "Bob", Email: "bob@example.com", Groups: []string{"owners"}})
	addr := freeAddr(t)
	cfgPath, env := consoleConfig(t, dir, addr, p)
	yaml, _ := os.ReadFile(cfgPath)
	yaml = []byte(strings.Replace(string(yaml), "  - group: ops\n    role: admin\n    tenants: all\n",
		"  - group: owners\n    role: owner\n    tenants: [acme]\n", 1))
	if err := os.WriteFile(cfgPath, yaml, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, dir, env, "--addr", addr, "--database-url", db, "--contracts", contracts,
		"--console-config", cfgPath, "--lease", "10s")
	base := srv.URL
	token := newToken(t, db)

	// The API and the loops.
	create := func(target, intent, payload string) apiOp {
		t.Helper()
		status, op := apiCall(t, http.MethodPost, base+"/api/v1/operations", token,
			fmt.Sprintf(`{"target":%q,"operation_type":"charge","intent_ref":%q,"payload":%s}`, target, intent, payload))
		if status != http.StatusCreated {
			t.Fatalf("POST %s: %d", intent, status)
		}
		return op
	}
	ok := create("payments", "count-ok", `{"amount":500,"currency":"EUR"}`)
	// No amount: refused with 400, documented as without side effect.
	refused := create("payments", "count-refused", `{"currency":"EUR"}`)
	byConsole := create("dropping", "count-console", `{"amount":700,"currency":"EUR"}`)
	byCLI := create("dropping", "count-cli", `{"amount":800,"currency":"EUR"}`)
	if status, _ := apiCall(t, http.MethodPost, base+"/api/v1/operations", token,
		`{"target":"payments","operation_type":"charge","intent_ref":"count-ok","payload":{"amount":501,"currency":"EUR"}}`); status != http.StatusConflict {
		t.Fatalf("conflicting POST: %d", status)
	}
	waitState(t, base, token, ok.ID, "SUCCEEDED", 20*time.Second)
	waitState(t, base, token, refused.ID, "FAILED_TERMINAL", 20*time.Second)
	waitState(t, base, token, byConsole.ID, "ESCALATED", 20*time.Second)
	waitState(t, base, token, byCLI.ID, "ESCALATED", 20*time.Second)

	// The console: Alice proposes the object she found, Bob approves.
	alice, bob := signIn(t, p, base, "alice"), signIn(t, p, base, "bob")
	if msg := alice.post(t, "/escalations/acme/"+byConsole.ID+"/propose", url.Values{
		"kind": {string(kindNames["confirm"])}, "remote_ref": {"ch_seen"}, "reason": {"seen at the provider"}}); msg != "" {
		t.Fatalf("console propose: %s", msg)
	}
	if msg := bob.post(t, "/escalations/acme/"+byConsole.ID+"/approve", url.Values{
		"proposal": {bob.openProposal(t, byConsole.ID)}, "reason": {"checked"}, "checked_at_target": {"yes"}}); msg != "" {
		t.Fatalf("console approve: %s", msg)
	}
	waitState(t, base, token, byConsole.ID, "SUCCEEDED", 5*time.Second)

	// The CLI, two people.
	cli := func(who string, args ...string) string {
		t.Helper()
		out, err := exec.Command(binary, append(append([]string{"escalation"}, args...),
			"--tenant", "acme", "--database-url", db, "--contracts", contracts, "--as", "oidc:"+who)...).CombinedOutput()
		if err != nil {
			t.Fatalf("settle escalation %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	m := regexp.MustCompile(`proposal (\d+):`).FindStringSubmatch(
		cli("alice", "propose", byCLI.ID, "--kind", "not-applied", "--reason", "the provider holds nothing"))
	if m == nil {
		t.Fatal("settle escalation propose printed no proposal id")
	}
	cli("bob", "approve", m[1])
	waitState(t, base, token, byCLI.ID, "FAILED_TERMINAL", 5*time.Second)

	// Counted as made: four claims, the loops' outcomes, two escalations,
	// one approval by each door, one refused conflict. The CLI's arrives
	// when the server drains it.
	want := []string{
		`settle_transitions_total{from="ESCALATED",to="FAILED_TERMINAL"} 1`,
		`settle_transitions_total{from="ESCALATED",to="SUCCEEDED"} 1`,
		`settle_transitions_total{from="IN_FLIGHT",to="FAILED_TERMINAL"} 1`,
		`settle_transitions_total{from="IN_FLIGHT",to="SUCCEEDED"} 1`,
		`settle_transitions_total{from="IN_FLIGHT",to="UNKNOWN"} 2`,
		`settle_transitions_total{from="PREPARED",to="IN_FLIGHT"} 4`,
		`settle_transitions_total{from="UNKNOWN",to="ESCALATED"} 2`,
	}
	counted := func() string {
		return seriesOf(scrape(t, base), "settle_transitions_total")
	}
	waitFor(t, 15*time.Second, "every transition counted", func() (bool, string) {
		got := counted()
		return got == strings.Join(want, "\n"), got
	})
	// Nothing is left to drain, so nothing is counted twice later.
	st, _, err := openStoreWith(context.Background(), db, false, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	left, err := st.DrainObservations(context.Background(), 100)
	st.Close()
	if err != nil || left.Len() != 0 {
		t.Fatalf("observations left undrained: %+v %v", left, err)
	}
	page := scrape(t, base)
	if got := counted(); got != strings.Join(want, "\n") {
		t.Fatalf("counted\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	for _, w := range []string{
		`settle_payload_conflicts_total 1`,
		`settle_unknown_entries_total{target="dropping"} 2`,
		`settle_resolution_seconds_count{target="dropping",to="ESCALATED"} 2`,
	} {
		if !strings.Contains(page, "\n"+w+"\n") {
			t.Errorf("lacks %s: %s", w, metricLines(page, "settle_"))
		}
	}
}

// seriesOf is the sorted lines of page for the metric name.
func seriesOf(page, name string) string {
	var out []string
	for _, l := range strings.Split(page, "\n") {
		if strings.HasPrefix(l, name+"{") || strings.HasPrefix(l, name+" ") {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}
