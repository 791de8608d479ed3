package main

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"settle/auth/oidctest"
	"settle/ledger"
)

// The console and the CLI are two doors onto one set of rules (package
// resolve): every action, driven once through the console over HTTP and
// once through the real binary on a twin operation, on both stores, ends
// the same way — the same state, the same event, the same refusal.
func TestEscalation_ConsoleAndCLIAgree(t *testing.T) {
	t.Parallel()
	for name, db := range map[string]func(t *testing.T) string{
		"SQLite":   func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "settle.db") },
		"Postgres": schemaURL,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testParity(t, db(t))
		})
	}
}

// parityCase is one action, taken by the console on one operation and by
// the CLI on its twin.
type parityCase struct {
	name string
	// steps: who acts (alice or bob), the verb, the kind, the object id,
	// and whether it must be refused.
	steps []parityStep
}

type parityStep struct {
	who, verb, kind, ref string
	refused              bool
}

func testParity(t *testing.T, db string) {
	dir := t.TempDir()
	if _, err := user.Current(); err != nil {
		t.Fatal("the CLI records the operating-system user, and there is none:", err)
	}
	cases := []parityCase{
		{"not applied, approved by another", []parityStep{
			{"alice", "propose", "not-applied", "", false},
			{"alice", "approve", "", "", true}, // her own
			{"bob", "approve", "", "", false},
		}},
		{"confirm an object the target does not hold", []parityStep{{"alice", "propose", "confirm", "ch_nowhere", true}}},
		{"confirm without an object id", []parityStep{{"alice", "propose", "confirm", "", true}}},
		{"replay inside the window", []parityStep{
			{"alice", "propose", "replay", "", false},
			{"bob", "approve", "", "", false},
		}},
		{"supersede while a replay is still possible", []parityStep{{"alice", "propose", "supersede", "", true}}},
		{"withdrawn by the proposer only", []parityStep{
			{"alice", "propose", "not-applied", "", false},
			{"alice", "withdraw", "", "", false},
		}},
		{"rejected", []parityStep{
			{"alice", "propose", "not-applied", "", false},
			{"bob", "reject", "", "", false},
		}},
	}

	_, contracts := simWithContract(t, dir, "--class", "A")
	// Two escalated operations per case, made before settle serves, so
	// that no executor claims them first.
	st, _, err := openStoreWith(context.Background(), db, true, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	twins := make([][2]ledger.Operation, len(cases))
	for i := range cases {
		for j := range 2 {
			twins[i][j] = escalatedOp(t, st, fmt.Sprintf("parity-%d-%d", i, j))
		}
	}
	st.Close()

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
	srv := startServer(t, dir, env, "--addr", addr, "--database-url", db, "--contracts", contracts, "--console-config", cfgPath)
	browsers := map[string]*consoleSession{"alice": signIn(t, p, srv.URL, "alice"), "bob": signIn(t, p, srv.URL, "bob")}

	cli := func(who string, args ...string) (string, error) {
		c := exec.Command(binary, append(append([]string{"escalation"}, args...),
			"--tenant", "acme", "--database-url", db, "--contracts", contracts, "--as", "oidc:"+who)...)
		out, err := c.CombinedOutput()
		return string(out), err
	}

	for i, pc := range cases {
		byConsole, byCLI := twins[i][0], twins[i][1]
		var proposal [2]string
		for _, step := range pc.steps {
			// The console.
			b := browsers[step.who]
			var consoleSays string
			switch step.verb {
			case "propose":
				consoleSays = b.post(t, "/escalations/acme/"+byConsole.ID+"/propose", url.Values{
					"kind": {string(kindNames[step.kind])}, "remote_ref": {step.ref}, "reason": {"parity: " + pc.name}})
			default:
				if proposal[0] == "" {
					proposal[0] = b.openProposal(t, byConsole.ID)
				}
				path := map[string]string{"approve": "approve", "reject": "reject", "withdraw": "reject"}[step.verb]
				consoleSays = b.post(t, "/escalations/acme/"+byConsole.ID+"/"+path, url.Values{
					"proposal": {proposal[0]}, "reason": {"parity: " + pc.name}})
			}
			// The CLI.
			var out string
			var err error
			switch step.verb {
			case "propose":
				args := []string{"propose", byCLI.ID, "--kind", step.kind, "--reason", "parity: " + pc.name}
				if step.ref != "" {
					args = append(args, "--remote-ref", step.ref)
				}
				out, err = cli(step.who, args...)
				if m := regexp.MustCompile(`proposal (\d+):`).FindStringSubmatch(out); m != nil {
					proposal[1] = m[1]
				}
			default:
				args := []string{step.verb, proposal[1]}
				if step.verb != "approve" {
					args = append(args, "--reason", "parity: "+pc.name)
				}
				out, err = cli(step.who, args...)
			}
			cliSays := ""
			if err != nil {
				cliSays = cliRefusal(out)
			}
			t.Logf("%s / %s %s: console %q, CLI %q", pc.name, step.who, step.verb, consoleSays, cliSays)
			if (consoleSays != "") != step.refused || (cliSays != "") != step.refused {
				t.Fatalf("%s: %s %s: refused by the console: %q, by the CLI: %q (%v); want refused %v",
					pc.name, step.who, step.verb, consoleSays, cliSays, err, step.refused)
			}
			if norm(consoleSays, byConsole, byCLI) != norm(cliSays, byConsole, byCLI) {
				t.Errorf("%s: %s %s: the console says %q, the CLI %q", pc.name, step.who, step.verb, consoleSays, cliSays)
			}
		}
		// The same end: state, last event (but who and when), proposals.
		st, _, err := openStoreWith(context.Background(), db, false, func(string) {})
		if err != nil {
			t.Fatal(err)
		}
		a, b := outcomeOf(t, st, byConsole), outcomeOf(t, st, byCLI)
		st.Close()
		if a != b {
			t.Errorf("%s: the console left\n  %s\nthe CLI\n  %s", pc.name, a, b)
		}
	}
}

// outcomeOf describes what people did to an operation — its manual
// resolution's event, or its last event when none, and its proposals —
// leaving out what differs between twins by nature: ids, times, who
// acted. (What the reconciler does after an approved replay is its own
// affair and may differ in timing.)
func outcomeOf(t *testing.T, st store, op ledger.Operation) string {
	t.Helper()
	ctx := context.Background()
	events, err := st.Events(ctx, "acme", op.ID)
	if err != nil {
		t.Fatal(err)
	}
	ev := events[len(events)-1]
	var evidence map[string]any
	for _, e := range events {
		var m map[string]any
		_ = json.Unmarshal(e.Evidence, &m)
		if m["resolution_id"] != nil {
			ev, evidence = e, m
		}
	}
	if evidence == nil {
		_ = json.Unmarshal(ev.Evidence, &evidence)
	}
	var keys []string
	for k := range evidence {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	rs, err := st.Resolutions(ctx, "acme", false)
	if err != nil {
		t.Fatal(err)
	}
	var decisions []string
	for _, r := range rs {
		if r.OperationID == op.ID {
			decisions = append(decisions, string(r.Kind)+":"+r.Decision+":"+r.DecisionWhy)
		}
	}
	return fmt.Sprintf("event %s→%s %q, evidence %v kind %v role %v; proposals %v",
		ev.From, ev.To, ev.Reason, keys, evidence["kind"], evidence["role"], decisions)
}

var timestamp = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)

// norm makes one twin's message comparable with the other's: the twins
// differ in ids and in when they were made.
func norm(s string, a, b ledger.Operation) string {
	s = strings.NewReplacer(a.ID, "OP", b.ID, "OP", a.IntentRef, "INTENT", b.IntentRef, "INTENT").Replace(s)
	return timestamp.ReplaceAllString(s, "TIME")
}

var cliError = regexp.MustCompile(`^settle escalation[a-z ]*: (.*)$`)

// cliRefusal is the message a failed CLI command printed.
func cliRefusal(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if m := cliError.FindStringSubmatch(line); m != nil {
			return m[1]
		}
	}
	return strings.TrimSpace(out)
}

// consoleSession is a signed-in browser without JavaScript.
type consoleSession struct {
	base string
	c    *http.Client
}

func signIn(t *testing.T, p *oidctest.Provider, base, subject string) *consoleSession {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	_, _, resp := getPage(t, c, base+"/login")
	p.SignInAs(t, subject)
	_, _, resp = getPage(t, c, resp.Header.Get("Location"))
	if code, body, _ := getPage(t, c, resp.Header.Get("Location")); code != http.StatusSeeOther {
		t.Fatalf("sign-in of %s: %d %s", subject, code, body)
	}
	return &consoleSession{base: base, c: c}
}

var (
	csrfField    = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)
	proposalForm = regexp.MustCompile(`name="proposal" value="(\d+)"`)
	errorMessage = regexp.MustCompile(`(?s)data-testid="error-message">(.*?)</p>`)
)

// page returns the page at path, failing the test unless it is 200.
func (s *consoleSession) page(t *testing.T, path string) string {
	t.Helper()
	code, body, _ := getPage(t, s.c, s.base+path)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d\n%.2000s", path, code, body)
	}
	return body
}

// openProposal is the id the escalation page's decision forms carry.
func (s *consoleSession) openProposal(t *testing.T, id string) string {
	t.Helper()
	m := proposalForm.FindStringSubmatch(s.page(t, "/escalations/acme/"+id))
	if m == nil {
		t.Fatalf("no open proposal on the escalation page of %s", id)
	}
	return m[1]
}

// post submits a form from the escalation page as the browser would and
// returns the refusal the console showed, "" when it was accepted.
func (s *consoleSession) post(t *testing.T, path string, form url.Values) string {
	t.Helper()
	page := s.page(t, "/escalations/acme/"+strings.Split(path, "/")[3])
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF field on %s", path)
	}
	form.Set("_csrf", html.UnescapeString(m[1]))
	req, _ := http.NewRequest(http.MethodPost, s.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", s.base)
	resp, err := s.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusSeeOther {
		return ""
	}
	if resp.StatusCode >= 500 {
		t.Fatalf("POST %s: %d\n%.2000s", path, resp.StatusCode, body)
	}
	if e := errorMessage.FindSubmatch(body); e != nil {
		return html.UnescapeString(strings.TrimSpace(string(e[1])))
	}
	return "HTTP " + strconv.Itoa(resp.StatusCode)
}
