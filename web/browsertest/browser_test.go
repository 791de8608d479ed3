package browsertest

import (
	"bytes"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// The policy the console is meant to serve: no inline script or style.
const strictCSP = "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

const goodPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Find an operation</title>
<link rel="stylesheet" href="/style.css"></head>
<body><main>
<h1>Find an operation</h1>
<form method="post" action="/result">
  <label for="q">Reference</label>
  <input id="q" name="q" type="search">
  <button type="submit" data-testid="search">Search</button>
</form>
</main>
<script>document.body.dataset.inline = "ran"</script>
</body></html>`

// badPage breaks two WCAG AA rules: an input without a label and grey
// text on white (2.3:1, below 4.5:1, from bad.css). It is served under the
// same strict policy, so finding its faults shows axe-core runs under it.
const badPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Find an operation</title>
<link rel="stylesheet" href="/bad.css"></head>
<body><main>
<h1>Find an operation</h1>
<input id="q" name="q">
<p class="faint">Enter a reference</p>
</main></body></html>`

// darkPage is accessible in the light scheme only: its dark scheme (from
// dark.css) writes grey on black-ish grey. twoRegions has two region
// landmarks of one name, which only landmark-unique (a best-practice rule
// Axe runs besides the WCAG ones) reports.
const (
	darkPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Schemes</title>
<link rel="stylesheet" href="/dark.css"></head>
<body><main><h1>Schemes</h1><p>Read me in either scheme.</p></main></body></html>`
	twoRegions = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Regions</title></head>
<body><main><h1>Regions</h1>
<section aria-label="Finding"><p>One</p></section>
<section aria-label="Finding"><p>Two</p></section>
</main></body></html>`
)

func site(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	page := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Security-Policy", strictCSP)
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, body)
		}
	}
	mux.HandleFunc("GET /{$}", page(goodPage))
	mux.HandleFunc("GET /bad", page(badPage))
	mux.HandleFunc("GET /dark", page(darkPage))
	mux.HandleFunc("GET /regions", page(twoRegions))
	mux.HandleFunc("GET /dark.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		fmt.Fprint(w, "body { color: #1a1a1a; background: #fff } @media (prefers-color-scheme: dark) { body { color: #555; background: #222 } }")
	})
	mux.HandleFunc("GET /style.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		fmt.Fprint(w, "body { font-family: sans-serif; color: #1a1a1a; background: #fff }")
	})
	mux.HandleFunc("GET /bad.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		fmt.Fprint(w, ".faint { color: #aaaaaa; background: #ffffff }")
	})
	mux.HandleFunc("POST /result", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", strictCSP)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusAccepted) // distinct, so the test sees Submit return this page's status
		fmt.Fprintf(w, `<!doctype html><html lang="en"><head><title>Result</title></head><body><main>`+
			`<h1>Result</h1><p data-testid="echo">%s</p></main></body></html>`, html.EscapeString(r.FormValue("q")))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// An accessible page under a strict CSP (in force: its inline script does
// not run) passes axe, so axe-core got in despite the policy and ran; a form is filled and submitted, text is read
// by data-testid and a screenshot is written.
func TestBrowser_GoodPage(t *testing.T) {
	t.Parallel()
	srv := site(t)
	b := New(t)

	if got := b.Navigate(srv.URL + "/"); got != http.StatusOK {
		t.Fatalf("Navigate: %d", got)
	}
	if vs := b.Axe(); len(vs) != 0 {
		t.Fatalf("the accessible page: %s", Report(srv.URL, vs))
	}
	b.RequireAccessible()
	if n := b.Count(`body[data-inline]`); n != 0 {
		t.Fatal("the page's inline script ran: the policy is not in force, so this test proves nothing about it")
	}
	if n := b.Count(`script`); n != 1 {
		t.Fatalf("%d script elements, want the page's one: axe-core must come in through DevTools, not a <script>", n)
	}

	b.Fill("#q", "order-1042")
	if got := b.Submit(TestID("search")); got != http.StatusAccepted {
		t.Fatalf("Submit: %d, want the result page's 202", got)
	}
	if got := b.TextByTestID("echo"); got != "order-1042" {
		t.Fatalf("echo = %q", got)
	}
	if n := b.Count(TestID("search")); n != 0 {
		t.Fatalf("the search button is still there (%d): Submit did not wait for the next page", n)
	}

	path := b.Screenshot("result page")
	png, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) || len(png) < 1000 {
		t.Fatalf("%s is not a PNG screenshot (%d bytes)", path, len(png))
	}
	dir, err := ArtifactsDir()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "TestBrowser_GoodPage", "01-result_page.png"); path != want {
		t.Fatalf("screenshot at %s, want %s", path, want)
	}
}

// On the inaccessible page axe finds the missing label and the low
// contrast, and the report names rule, impact, element and help.
func TestBrowser_BadPage(t *testing.T) {
	t.Parallel()
	srv := site(t)
	b := New(t)
	b.Navigate(srv.URL + "/bad")

	vs := b.Axe()
	found := map[string]Violation{}
	for _, v := range vs {
		found[v.ID] = v
	}
	for id, target := range map[string]string{"label": "#q", "color-contrast": "p"} {
		v, ok := found[id]
		if !ok {
			t.Fatalf("axe did not report %s; it reported %s", id, Report(srv.URL+"/bad", vs))
		}
		if len(v.Nodes) == 0 || v.Nodes[0].Target != target || v.Impact == "" || v.Help == "" {
			t.Fatalf("%s: incomplete violation %+v", id, v)
		}
	}
	report := Report(srv.URL+"/bad", vs)
	for _, want := range []string{"accessibility violations", "label (critical): ", "\n    at #q: ", "color-contrast (serious): ", "\n    at p: "} {
		if !strings.Contains(report, want) {
			t.Fatalf("report lacks %q:\n%s", want, report)
		}
	}

	// RequireAccessible fails the test with that report.
	rec := &recorder{TB: t}
	rec.run(func() { (&Browser{t: rec, ctx: b.ctx, Timeout: b.Timeout}).RequireAccessible() })
	if !strings.Contains(rec.failure, "label (critical)") || !strings.Contains(rec.failure, "color-contrast") {
		t.Fatalf("RequireAccessible on the bad page: failure %q", rec.failure)
	}
}

// PreferDark switches the page to its dark scheme, where axe finds the
// contrast the light scheme does not have.
func TestBrowser_PreferDark(t *testing.T) {
	t.Parallel()
	srv := site(t)
	b := New(t)
	b.Navigate(srv.URL + "/dark")
	if got := b.Style("body", "background-color"); got != "rgb(255, 255, 255)" {
		t.Fatalf("light background %q", got)
	}
	if vs := b.Axe(); len(vs) != 0 {
		t.Fatalf("light scheme: %s", Report(srv.URL+"/dark", vs))
	}
	b.PreferDark()
	b.Navigate(srv.URL + "/dark")
	if got := b.Style("body", "background-color"); got != "rgb(34, 34, 34)" {
		t.Fatalf("dark background %q", got)
	}
	vs := b.Axe()
	if len(vs) != 1 || vs[0].ID != "color-contrast" {
		t.Fatalf("dark scheme: want the contrast fault, got %s", Report(srv.URL+"/dark", vs))
	}
}

// Two region landmarks of one name break landmark-unique.
func TestBrowser_LandmarkUnique(t *testing.T) {
	t.Parallel()
	srv := site(t)
	b := New(t)
	b.Navigate(srv.URL + "/regions")
	vs := b.Axe()
	if len(vs) != 1 || vs[0].ID != "landmark-unique" {
		t.Fatalf("want landmark-unique, got %s", Report(srv.URL+"/regions", vs))
	}
}

// A missing browser or axe-core fails the test with an install hint; it
// never skips.
func TestBrowser_MissingPrerequisitesFail(t *testing.T) {
	t.Parallel()
	rec := &recorder{TB: t}
	rec.run(func() { newBrowser(rec, filepath.Join(t.TempDir(), "no-chromium")) })
	if !strings.Contains(rec.failure, "no Chromium at") || !strings.Contains(rec.failure, "apt-get install -y chromium") {
		t.Fatalf("missing Chromium: failure %q", rec.failure)
	}
	if rec.skipped {
		t.Fatal("missing Chromium skipped the test")
	}
}

func TestBrowser_MissingAxeFails(t *testing.T) {
	t.Setenv(AxeEnv, filepath.Join(t.TempDir(), "axe.min.js"))
	rec := &recorder{TB: t}
	rec.run(func() { axeSource(rec) })
	if !strings.Contains(rec.failure, "reading axe-core") || !strings.Contains(rec.failure, "scripts/test installs it") {
		t.Fatalf("missing axe-core: failure %q", rec.failure)
	}
}

// recorder is a testing.TB whose Fatal records the message and ends only
// the goroutine that run started, so that a test can check how the
// harness fails.
type recorder struct {
	testing.TB
	mu      sync.Mutex
	failure string
	skipped bool
}

func (r *recorder) Fatal(args ...any) { r.fail(fmt.Sprint(args...)) }
func (r *recorder) Fatalf(format string, args ...any) {
	r.fail(fmt.Sprintf(format, args...))
}
func (r *recorder) Skip(args ...any) { r.mu.Lock(); r.skipped = true; r.mu.Unlock(); runtime.Goexit() }

func (r *recorder) fail(msg string) {
	r.mu.Lock()
	r.failure = msg
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *recorder) run(f func()) {
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	<-done
}

// downloadSite serves a page linking a file the server sends as an
// attachment and a page that is no download.
func downloadSite(t *testing.T, body []byte) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", strictCSP)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html lang="en"><head><title>Files</title></head><body><main><h1>Files</h1>`+
			`<a href="/export?window=7d" download data-testid="export">Export</a> `+
			`<a href="/other" data-testid="other">Another page</a></main></body></html>`)
	})
	mux.HandleFunc("GET /export", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="export-`+r.FormValue("window")+`.csv"`)
		w.Write(body)
	})
	mux.HandleFunc("GET /other", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html lang="en"><head><title>Other</title></head><body><p>no file here</p></body></html>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// Download saves what the link serves, byte for byte, under the name the
// server gave it; a second download in the same browser is its own file;
// a link that loads a page fails the test, naming the page, at once
// rather than at the timeout.
func TestBrowser_Download(t *testing.T) {
	t.Parallel()
	body := []byte("tenant,target,metric,value\r\nacme,\"pay, \"\"ments\"\"\",unknown_entries:2030-01-02,3\r\nacmé,,n,0\n")
	srv := downloadSite(t, body)
	b := New(t)
	b.Navigate(srv.URL + "/")

	var paths []string
	for range 2 {
		d := b.Download(TestID("export"))
		if !bytes.Equal(d.Body, body) {
			t.Fatalf("downloaded %q, want %q", d.Body, body)
		}
		if d.Name != "export-7d.csv" || filepath.Base(d.Path) != d.Name || d.URL != srv.URL+"/export?window=7d" {
			t.Fatalf("download %+v: want export-7d.csv from /export?window=7d", d)
		}
		onDisk, err := os.ReadFile(d.Path)
		if err != nil || !bytes.Equal(onDisk, body) {
			t.Fatalf("the file on disk: %q, %v", onDisk, err)
		}
		paths = append(paths, d.Path)
	}
	if paths[0] == paths[1] {
		t.Fatalf("both downloads are %s: the second may be the first's file", paths[0])
	}

	rec := &recorder{TB: t}
	rec.run(func() { (&Browser{t: rec, ctx: b.ctx, Timeout: b.Timeout}).Download(TestID("other")) })
	if !strings.Contains(rec.failure, "the click loaded "+srv.URL+"/other instead") {
		t.Fatalf("a link to a page: failure %q", rec.failure)
	}
}

// Browsers share one Chromium but not its state: a cookie and local
// storage set in one test's tab are absent from another's on the same
// origin, and a Browser still works after another has closed.
func TestBrowser_TabsAreIsolated(t *testing.T) {
	t.Parallel()
	srv := site(t)
	a := New(t)
	a.Navigate(srv.URL + "/")
	a.Eval(`(document.cookie = "who=a; path=/", localStorage.setItem("who", "a"), "ok")`)
	if got := a.Eval(`document.cookie + "|" + localStorage.getItem("who")`); got != "who=a|a" {
		t.Fatalf("the first tab's own state: %q", got)
	}
	t.Run("another", func(t *testing.T) {
		b := New(t)
		b.Navigate(srv.URL + "/")
		if got := b.Eval(`document.cookie + "|" + localStorage.getItem("who")`); got != "|null" {
			t.Fatalf("a second test's tab sees the first's state: %q", got)
		}
	})
	// The second Browser has closed; the first is still served.
	if got := a.Eval(`document.cookie`); got != "who=a" {
		t.Fatalf("the first tab after the second closed: %q", got)
	}
}
