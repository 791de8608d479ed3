package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"text/tabwriter"
	"time"

	"settle/auth"
	"settle/internal/timing"
	"settle/web"
)

// benchConsoleCmd is `settle bench console`.
type benchConsoleCmd struct {
	DatabaseURL string `name:"database-url" help:"postgres://… of a ledger settle bench seed loaded; empty means the SQLite file --sqlite names"`
	SQLite      string `name:"sqlite" placeholder:"FILE" help:"SQLite file settle bench seed loaded, when --database-url is empty"`
	Runs        int    `default:"40" help:"requests per measure (after one untimed warm-up)"`
}

// Help is the detail of settle bench console --help.
func (benchConsoleCmd) Help() string {
	return `Serves the real console (routes, sign-in sessions, authorisation,
rendering) on a loopback port over the ledger settle bench seed loaded,
signs in through the demo sign-in (POST /login/demo) a manager and an
owner bound to every tenant, and sends --runs requests for each measure
over keep-alive: the look-up of an operation by its id, intent reference,
remote reference and remote key (the search answering 303 to the
operation, a different operation each request) and the operation's page;
the operations list unfiltered and by each filter the console offers
(state, target, age, tenant); the escalation queue, unfiltered and by
tenant and target; one tenant's 30-day figures; every tenant's figures.

The time is the client's, from sending the request to the last byte of
the response on loopback: the server's time plus a loopback round trip.
Each row prints median and p95 against the target of issue 27 (look-up
20 ms, lists and queue 100 ms, one tenant's figures 200 ms, all tenants
500 ms) and PASS or OVER by the p95. Every response is checked (status,
where a look-up leads, rows on the page); one that fails stops the run.
It measures; it does not fail on a target.`
}

func (c *benchConsoleCmd) check() error {
	switch {
	case c.DatabaseURL != "" && !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://"):
		return usagef("--database-url must be a postgres:// URL (for SQLite, use --sqlite FILE)")
	case c.DatabaseURL == "" && c.SQLite == "":
		return usagef("name the seeded database: --database-url postgres://… or --sqlite FILE")
	case c.DatabaseURL != "" && c.SQLite != "":
		return usagef("--database-url and --sqlite exclude each other")
	case c.Runs < 1:
		return usagef("--runs must be positive")
	}
	return nil
}

// consoleTargets are the seeded targets as the console's Targets.
type consoleTargets struct{}

func (consoleTargets) Target(name string) (web.Target, bool) {
	for _, t := range seedTargets {
		if t.name == name {
			return web.Target{RetryWindow: seedRetryWindow, Owner: t.name + " team"}, true
		}
	}
	return web.Target{}, false
}

func (consoleTargets) Names() []string {
	var ns []string
	for _, t := range seedTargets {
		ns = append(ns, t.name)
	}
	return ns
}

func (c *benchConsoleCmd) run(ctx context.Context, e *env) error {
	dbURL, where := c.DatabaseURL, "PostgreSQL"
	if dbURL == "" {
		dbURL, where = "sqlite:"+c.SQLite, "SQLite "+c.SQLite
	}
	st, _, err := openStoreWith(ctx, dbURL, false, func(string) {})
	if err != nil {
		return err
	}
	defer st.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	console, err := auth.NewDemoConsole(st, auth.WithRender(web.RenderSignIn), auth.WithLogger(quiet),
		auth.WithListenAddr(ln.Addr().String()), auth.WithInsecureCookie())
	if err != nil {
		ln.Close()
		return err
	}
	// The demo's manager and owners, bound to every tenant and target
	// instead of the demo's two tenants.
	console.SetBindings([]auth.BindingRule{{Group: "demo-managers", Role: auth.Manager}, {Group: "demo-owners", Role: auth.Owner}})
	srv := web.NewHTTPServer(web.New(web.Config{Store: st, Targets: consoleTargets{}, Logger: quiet,
		SignIn: console, InsecureCookies: true}), web.ServerLimits{})
	srv.SetErrorLog(quiet)
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	base := "http://" + ln.Addr().String()

	s, err := sampleSeeded(ctx, st, c.Runs)
	if err != nil {
		return err
	}
	manager, err := benchSignIn(base, "manager")
	if err != nil {
		return fmt.Errorf("sign in the manager: %w", err)
	}
	owner, err := benchSignIn(base, "owner-ada")
	if err != nil {
		return fmt.Errorf("sign in the owner: %w", err)
	}
	fmt.Fprintf(e.stdout, "settle bench console on %s (%d tenants): %d requests a measure over loopback HTTP, time to the last byte\n",
		where, len(s.tenants), c.Runs)
	var rows []consoleRow
	for _, m := range consoleMeasures(s) {
		cl := manager
		if m.owner {
			cl = owner
		}
		t, err := m.time(ctx, cl, base, c.Runs)
		if err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
		rows = append(rows, consoleRow{m, t})
	}
	printConsoleBench(e.stdout, rows)
	return nil
}

// benchSignIn signs user in through the demo sign-in's form and returns
// a client carrying the session that neither follows redirects (a
// look-up's answer is one) nor closes connections.
func benchSignIn(base, user string) (*http.Client, error) {
	jar, _ := cookiejar.New(nil)
	cl := &http.Client{Jar: jar, Timeout: time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := cl.Get(base + auth.LoginPath)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	m := csrfInput.FindSubmatch(body)
	if m == nil {
		return nil, fmt.Errorf("GET %s: %d, no CSRF field", auth.LoginPath, resp.StatusCode)
	}
	resp, err = cl.PostForm(base+auth.DemoLoginPath, url.Values{"user": {user}, "return": {"/"}, web.CSRFField: {string(m[1])}})
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		return nil, fmt.Errorf("POST %s: %d, want 303", auth.DemoLoginPath, resp.StatusCode)
	}
	return cl, nil
}

var csrfInput = regexp.MustCompile(`name="` + web.CSRFField + `" value="([^"]+)"`)

// consoleMeasure is one row of settle bench console: the request of run
// k (0 the warm-up) and what its response must show.
type consoleMeasure struct {
	name   string
	target time.Duration
	owner  bool // the owner's session (the queue), else the manager's
	path   func(k int) string
	check  func(k int, resp *http.Response, body string) error
}

// time sends the warm-up and runs requests, checking each response.
func (m consoleMeasure) time(ctx context.Context, cl *http.Client, base string, runs int) (timing.Times, error) {
	var ts []time.Duration
	for k := range runs + 1 {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+m.path(k), nil)
		if err != nil {
			return nil, err
		}
		t0 := time.Now()
		resp, err := cl.Do(req)
		if err != nil {
			return nil, err
		}
		body, err := io.ReadAll(resp.Body)
		took := time.Since(t0)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		if err := m.check(k, resp, string(body)); err != nil {
			return nil, fmt.Errorf("GET %s: %w", m.path(k), err)
		}
		if k > 0 {
			ts = append(ts, took)
		}
	}
	return timing.Sorted(ts), nil
}

// consoleRow is one measure's times.
type consoleRow struct {
	m consoleMeasure
	t timing.Times
}

func printConsoleBench(w io.Writer, rows []consoleRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "measure\ttarget\tmedian\tp95\t")
	over := 0
	for _, r := range rows {
		verdict := "PASS"
		if r.t.P95() > r.m.target {
			verdict, over = "OVER", over+1
		}
		fmt.Fprintf(tw, "%s\t≤ %d ms\t%s\t%s\t%s\n", r.m.name, r.m.target.Milliseconds(),
			timing.Short(r.t.Median()), timing.Short(r.t.P95()), verdict)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "%d measures, %d over target by their p95\n", len(rows), over)
}

// errStatus is a response with another status than the measure expects.
var errStatus = errors.New("unexpected status")
