// Package browsertest drives Debian's headless Chromium from Go tests
// (through chromedp) so that the console can be tested as a person uses it:
// navigate, fill and submit forms, read text by data-testid, download
// what a link serves (Browser.Download), take full-page screenshots as test
// artifacts, and check each page with axe-core (see
// Browser.RequireAccessible).
//
// The browser is never downloaded and a missing one never skips a test: New
// fails with an install hint. scripts/test installs Chromium (when
// /usr/bin/chromium is missing) and axe-core, and exports SETTLE_CHROMIUM
// and SETTLE_AXE_JS.
package browsertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// Environment variables the harness reads.
const (
	// ChromiumEnv names the Chromium binary; empty means DefaultChromium.
	ChromiumEnv = "SETTLE_CHROMIUM"
	// ArtifactsEnv names the directory screenshots are written under; empty
	// means test-artifacts/ at the repository root (git-ignored).
	ArtifactsEnv = "SETTLE_ARTIFACTS"
	// AxeEnv names axe-core's axe.min.js, read by RequireAccessible.
	AxeEnv = "SETTLE_AXE_JS"
	// DefaultChromium is where Debian's chromium package installs it.
	DefaultChromium = "/usr/bin/chromium"
)

// installHint ends every message about a missing prerequisite.
const installHint = "scripts/test installs it; the browser tests never skip"

// DefaultTimeout bounds each action of a Browser (a navigation, a click and
// the page it loads, an axe run).
const DefaultTimeout = 30 * time.Second

// Browser is one tab of headless Chromium, owned by one test and closed at
// its cleanup. Its methods fail the test on any error, so a test reads as
// the steps a person takes.
//
// The tests of one binary share one Chromium process (started at the first
// New, stopped when the last open Browser closes): starting Chromium costs
// about 2.8 CPU-seconds, more than most of a test's pages. Each Browser has
// a browser context of its own, as an incognito window does, so no two
// tests share cookies, storage, cache or a renderer.
type Browser struct {
	t   testing.TB
	ctx context.Context // the tab; actions run in contexts derived from it
	// Timeout bounds each action; New sets DefaultTimeout.
	Timeout time.Duration
	shots   int
	noJS    bool // DisableJavaScript was called
}

// New opens a tab of Chromium ($SETTLE_CHROMIUM, else /usr/bin/chromium)
// headless for t and closes it when t ends. It fails t, with an install
// hint, when the binary is missing or does not start.
func New(t testing.TB) *Browser {
	t.Helper()
	path := os.Getenv(ChromiumEnv)
	if path == "" {
		path = DefaultChromium
	}
	return newBrowser(t, path)
}

func newBrowser(t testing.TB, path string) *Browser {
	t.Helper()
	if fi, err := os.Stat(path); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		t.Fatalf("browsertest: no Chromium at %s (set %s to use another binary): install Debian's chromium "+
			"(as root: apt-get install -y chromium); %s", path, ChromiumEnv, installHint)
	}
	browser, err := chromium.acquire(path)
	if err != nil {
		t.Fatalf("browsertest: starting Chromium %s: %v (%s)", path, err, installHint)
	}
	ctx, cancelTab := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	t.Cleanup(func() { cancelTab(); chromium.release() })
	// The first action opens the tab; it must not run under a timeout,
	// which would close the tab when it expires.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("browsertest: opening a tab of Chromium %s: %v (%s)", path, err, installHint)
	}
	return &Browser{t: t, ctx: ctx, Timeout: DefaultTimeout}
}

// chromium is the Chromium process the open Browsers share.
var chromium sharedBrowser

// sharedBrowser starts Chromium for its first user and stops it when its
// last user releases it, so that a test binary leaves no process or
// profile directory behind.
type sharedBrowser struct {
	mu     sync.Mutex
	users  int
	path   string
	ctx    context.Context // the browser's first context: its lifetime
	cancel func()
}

// acquire returns a context of the running Chromium at path, starting it
// when nobody uses one; every successful acquire is paired with a release.
func (s *sharedBrowser) acquire(path string) (context.Context, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.users > 0 && s.path != path {
		return nil, fmt.Errorf("another test runs Chromium %s; one binary uses one Chromium", s.path)
	}
	if s.users == 0 {
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(path),
			chromedp.Headless,
			chromedp.DisableGPU,
			chromedp.WindowSize(1280, 900),
		)
		if os.Geteuid() == 0 {
			// Chromium refuses to start as root with its sandbox on.
			opts = append(opts, chromedp.NoSandbox)
		}
		actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancelBrowser := chromedp.NewContext(actx)
		// The first action starts the browser; it must not run under a
		// timeout, which would stop the browser when it expires.
		if err := chromedp.Do(ctx); err != nil {
			cancelBrowser()
			cancelAlloc()
			return nil, err
		}
		s.ctx, s.path = ctx, path
		s.cancel = func() { cancelBrowser(); cancelAlloc() }
	}
	s.users++
	return s.ctx, nil
}

func (s *sharedBrowser) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.users--; s.users == 0 {
		s.cancel()
		s.ctx, s.cancel = nil, nil
	}
}

// do runs actions under the browser's timeout and fails the test with what
// and the error.
func (b *Browser) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, b.Timeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("browsertest: %s: %v", what, err)
	}
}

// load runs actions that cause a navigation and returns the HTTP status of
// the document it loads.
func (b *Browser) load(what string, actions ...chromedp.Action[chromedp.Void]) int {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, b.Timeout)
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, actions...)
	if err != nil {
		b.t.Fatalf("browsertest: %s: %v", what, err)
	}
	return int(resp.Status)
}

// PreferDark makes the tab report prefers-color-scheme: dark, as a person
// whose system is set to the dark scheme sees the console, for this and
// every later page until the browser closes.
func (b *Browser) PreferDark() {
	b.t.Helper()
	b.do("emulate prefers-color-scheme: dark", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
		return err
	}))
}

// DisableJavaScript turns the pages' own scripts off in this tab, for this
// and every later page, as for a person whose browser runs none: forms
// must then work by plain HTML. The harness's own reads (Count, Text,
// axe) still run, through the DevTools protocol.
func (b *Browser) DisableJavaScript() {
	b.t.Helper()
	b.do("disable JavaScript", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	}))
	b.noJS = true
}

// scripting switches the page's script execution on or off (the harness
// needs it on while axe runs; the page's own scripts, skipped at load,
// do not run again).
func (b *Browser) scripting(on bool) {
	b.t.Helper()
	b.do("switch script execution", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: !on})
		return err
	}))
}

// ScriptsRun reports whether the current page's own scripts run.
func (b *Browser) ScriptsRun() bool {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, b.Timeout)
	defer cancel()
	// A <noscript> element's content is parsed as text only while
	// scripting is enabled.
	on, err := chromedp.Run(ctx, chromedp.Evaluate[bool](
		"(() => { const n = document.createElement('div'); n.innerHTML = '<noscript><p></p></noscript>'; return n.querySelector('p') === null; })()"))
	if err != nil {
		b.t.Fatalf("browsertest: scripting state: %v", err)
	}
	return on
}

// Viewport sets the tab's viewport to width × height CSS pixels, as a
// phone (390 × 844) or a small laptop shows pages, for this and later
// pages; New starts at 1280 × 900.
func (b *Browser) Viewport(width, height int64) {
	b.t.Helper()
	b.do(fmt.Sprintf("set the viewport to %d×%d", width, height), chromedp.EmulateViewport(width, height))
}

// ScrollsSideways reports whether the current page is wider than its
// viewport, so that a person must scroll sideways to read it.
func (b *Browser) ScrollsSideways() bool {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, b.Timeout)
	defer cancel()
	wide, err := chromedp.Run(ctx, chromedp.Evaluate[bool](
		"document.documentElement.scrollWidth > document.documentElement.clientWidth"))
	if err != nil {
		b.t.Fatalf("browsertest: page width: %v", err)
	}
	return wide
}

// Overlaps counts the pairs of elements matching selector whose boxes,
// as drawn, overlap: date labels of a chart that run into each other.
func (b *Browser) Overlaps(selector string) int {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, b.Timeout)
	defer cancel()
	sel, _ := json.Marshal(selector)
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`(() => {
		const r = [...document.querySelectorAll(`+string(sel)+`)].map(e => e.getBoundingClientRect());
		let n = 0;
		for (let i = 0; i < r.length; i++) for (let j = i + 1; j < r.length; j++)
			if (r[i].left < r[j].right && r[j].left < r[i].right && r[i].top < r[j].bottom && r[j].top < r[i].bottom) n++;
		return n;
	})()`))
	if err != nil {
		b.t.Fatalf("browsertest: overlaps of %s: %v", selector, err)
	}
	return n
}

// Navigate opens url and returns the HTTP status of the page.
func (b *Browser) Navigate(url string) int {
	b.t.Helper()
	return b.load("navigate to "+url, chromedp.Navigate(url))
}

// Fill types value into the form field selector (CSS) matches, replacing
// what it held.
func (b *Browser) Fill(selector, value string) {
	b.t.Helper()
	sel := chromedp.CSS(selector)
	b.do("fill "+selector, chromedp.WaitVisible(sel), chromedp.Clear(sel), chromedp.SendKeys(sel, value))
}

// Submit clicks the submit button selector (CSS) matches, waits for the
// page the form leads to and returns its HTTP status.
func (b *Browser) Submit(selector string) int {
	b.t.Helper()
	return b.load("submit with "+selector, chromedp.Click(chromedp.CSS(selector)))
}

// Click clicks the element selector (CSS) matches and does not wait for a
// navigation; use Submit, or Navigate, for one that loads a page.
func (b *Browser) Click(selector string) {
	b.t.Helper()
	b.do("click "+selector, chromedp.Click(chromedp.CSS(selector)))
}

// Text returns the rendered text of the first element selector (CSS)
// matches, waiting for it to appear.
func (b *Browser) Text(selector string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, b.Timeout)
	defer cancel()
	for {
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(selector)))
		if err == nil {
			return strings.TrimSpace(s)
		}
		// A live page may replace the node between finding it and reading
		// it; the next element the selector matches is the one to read.
		if !strings.Contains(err.Error(), "No node with given id") || ctx.Err() != nil {
			b.t.Fatalf("browsertest: text of %s: %v", selector, err)
		}
	}
}

// TextByTestID returns the rendered text of the element whose data-testid
// is id.
func (b *Browser) TextByTestID(id string) string {
	b.t.Helper()
	return b.Text(TestID(id))
}

// Count returns how many elements selector (CSS) matches now, without
// waiting: 0 is how a test shows that a control is absent.
func (b *Browser) Count(selector string) int {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, b.Timeout)
	defer cancel()
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](
		"document.querySelectorAll("+strconv.Quote(selector)+").length"))
	if err != nil {
		b.t.Fatalf("browsertest: count %s: %v", selector, err)
	}
	return n
}

// Attr returns the attribute name of the first element selector (CSS)
// matches now, "" when none does or it has none: a hidden field's value,
// for a request a test makes by hand (Post).
func (b *Browser) Attr(selector, name string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, b.Timeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](
		"(e => e ? (e.getAttribute("+strconv.Quote(name)+") || '') : '')(document.querySelector("+strconv.Quote(selector)+"))"))
	if err != nil {
		b.t.Fatalf("browsertest: attribute %s of %s: %v", name, selector, err)
	}
	return v
}

// Style returns the computed value of the CSS property of the first
// element selector matches ("" when none does), e.g. a background colour
// as "rgb(21, 24, 28)".
func (b *Browser) Style(selector, property string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, b.Timeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](
		"(e => e ? getComputedStyle(e).getPropertyValue("+strconv.Quote(property)+") : '')(document.querySelector("+
			strconv.Quote(selector)+"))"))
	if err != nil {
		b.t.Fatalf("browsertest: style %s of %s: %v", property, selector, err)
	}
	return v
}

// testIDRE keeps TestID's selector free of quoting problems.
var testIDRE = regexp.MustCompile(`^[A-Za-z0-9._:-]+$`)

// TestID returns the CSS selector of the element whose data-testid is id.
// It panics on an id with characters other than letters, digits, '.', '_',
// ':' and '-', a programming error in the test.
func TestID(id string) string {
	if !testIDRE.MatchString(id) {
		panic(fmt.Sprintf("browsertest: data-testid %q has characters a test id should not", id))
	}
	return `[data-testid="` + id + `"]`
}

// Screenshot writes a full-page PNG of the current page to
// <artifacts>/<test name>/<nn>-<name>.png and returns its path. The
// artifacts directory is $SETTLE_ARTIFACTS, else test-artifacts/ at the
// repository root.
func (b *Browser) Screenshot(name string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, b.Timeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100 means PNG
	if err != nil {
		b.t.Fatalf("browsertest: screenshot %s: %v", name, err)
	}
	dir, err := ArtifactsDir()
	if err != nil {
		b.t.Fatalf("browsertest: %v", err)
	}
	dir = filepath.Join(dir, fileName(b.t.Name()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatalf("browsertest: %v", err)
	}
	b.shots++
	path := filepath.Join(dir, fmt.Sprintf("%02d-%s.png", b.shots, fileName(name)))
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatalf("browsertest: %v", err)
	}
	b.t.Logf("screenshot %s", path)
	return path
}

// ArtifactsDir returns $SETTLE_ARTIFACTS or, when it is empty,
// test-artifacts/ in the repository root (the nearest directory above the
// working directory holding go.mod).
func ArtifactsDir() (string, error) {
	if dir := os.Getenv(ArtifactsEnv); dir != "" {
		return dir, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "test-artifacts"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory: set " + ArtifactsEnv)
		}
		dir = parent
	}
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// fileName turns a test or screenshot name into one path element.
func fileName(s string) string {
	return strings.Trim(unsafeName.ReplaceAllString(s, "_"), "_.")
}

// Post submits from the current page a form the page did not offer: a POST
// to action with fields, carrying this browser's cookies and origin — what
// a forged or hand-made request looks like to the server. It returns the
// status of the page the post leads to.
func (b *Browser) Post(action string, fields map[string]string) int {
	b.t.Helper()
	js := `(() => { const f = document.createElement("form"); f.method = "post"; f.action = ` + strconv.Quote(action) + `;`
	for name, value := range fields {
		js += ` { const i = document.createElement("input"); i.type = "hidden"; i.name = ` + strconv.Quote(name) +
			`; i.value = ` + strconv.Quote(value) + `; f.appendChild(i); }`
	}
	js += ` document.body.appendChild(f); f.submit(); })()`
	return b.load("post to "+action, chromedp.Evaluate[chromedp.Void](js))
}

// Eval runs the JavaScript expression js in the page and returns its value
// as a string (String(value)): for what a person's browser does that no
// form or link shows, such as the tab being hidden, or which element holds
// the focus.
func (b *Browser) Eval(js string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, b.Timeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string]("String((() => { return ("+js+"); })())"))
	if err != nil {
		b.t.Fatalf("browsertest: eval %s: %v", js, err)
	}
	return v
}
