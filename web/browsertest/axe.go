package browsertest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// axeTags are the axe-core rule tags Axe runs, as a JavaScript array: WCAG
// 2.0, 2.1 and 2.2 at levels A and AA (2.2 adds AA rules only).
const axeTags = `["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]`

// axeRules are best-practice rules Axe runs besides the tagged ones, as a
// JavaScript object: landmarks a screen-reader user tells apart (each
// landmark's role and name unique on the page).
const axeRules = `{"landmark-unique": {enabled: true}}`

// Violation is one axe-core rule a page breaks, with the elements that
// break it.
type Violation struct {
	ID     string          `json:"id"`     // the rule, e.g. "label"
	Impact string          `json:"impact"` // minor, moderate, serious or critical
	Help   string          `json:"help"`   // what the rule asks, in one sentence
	Nodes  []ViolationNode `json:"nodes"`
}

// ViolationNode is one element that breaks a rule.
type ViolationNode struct {
	Target  string `json:"target"`  // a CSS selector for the element
	Summary string `json:"summary"` // how to fix it
}

// axeRun runs axe over the document and keeps only what a report needs.
// Targets inside shadow roots or frames are lists of selectors, joined here.
const axeRun = `axe.run(document, {runOnly: {type: "tag", values: %s}, rules: %s, resultTypes: ["violations"]})
  .then(r => r.violations.map(v => ({
    id: v.id, impact: v.impact || "", help: v.help,
    nodes: v.nodes.map(n => ({
      target: n.target.map(t => Array.isArray(t) ? t.join(" >>> ") : String(t)).join(" "),
      summary: n.failureSummary || ""}))})))`

// Axe checks the current page with axe-core ($SETTLE_AXE_JS) against the
// WCAG 2.0, 2.1 and 2.2 A and AA rules and returns the violations it finds. It fails the test when
// axe-core is missing or cannot run, never when the page breaks a rule:
// that is RequireAccessible.
//
// axe-core is put into the page with the DevTools protocol
// (Runtime.evaluate), which the page's Content-Security-Policy does not
// govern, so a page with a strict policy and no inline script is checked
// as served.
func (b *Browser) Axe() []Violation {
	b.t.Helper()
	src := axeSource(b.t)
	if b.noJS {
		// axe is a script: it runs with scripting on for its run only.
		b.scripting(true)
		defer b.scripting(false)
	}
	ctx, cancel := context.WithTimeout(b.ctx, b.Timeout)
	defer cancel()
	loaded, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`typeof axe === "object"`))
	if err != nil {
		b.t.Fatalf("browsertest: axe: %v", err)
	}
	if !loaded {
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](src)); err != nil {
			b.t.Fatalf("browsertest: injecting axe-core: %v", err)
		}
	}
	vs, err := chromedp.Run(ctx, chromedp.Evaluate[[]Violation](fmt.Sprintf(axeRun, axeTags, axeRules), chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("browsertest: running axe-core: %v", err)
	}
	return vs
}

// RequireAccessible fails the test, listing every violation (rule id,
// impact, element, help), when axe-core finds any on the current page.
func (b *Browser) RequireAccessible() {
	b.t.Helper()
	if vs := b.Axe(); len(vs) > 0 {
		b.t.Fatal(Report(b.location(), vs))
	}
}

// location returns the current page's URL, for reports.
func (b *Browser) location() string {
	ctx, cancel := context.WithTimeout(b.ctx, b.Timeout)
	defer cancel()
	url, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		return "the current page"
	}
	return url
}

// Report renders violations readably, one rule and then its elements:
//
//	2 accessibility violations (axe-core, WCAG 2.0/2.1/2.2 A and AA) on http://…/:
//	  label (critical): Form elements must have labels
//	    at #q: Fix any of the following: …
func Report(page string, vs []Violation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d accessibility violation", len(vs))
	if len(vs) != 1 {
		b.WriteString("s")
	}
	fmt.Fprintf(&b, " (axe-core, WCAG 2.0/2.1/2.2 A and AA) on %s:", page)
	for _, v := range vs {
		fmt.Fprintf(&b, "\n  %s (%s): %s", v.ID, v.Impact, v.Help)
		for _, n := range v.Nodes {
			fmt.Fprintf(&b, "\n    at %s", n.Target)
			if s := strings.Join(strings.Fields(n.Summary), " "); s != "" {
				fmt.Fprintf(&b, ": %s", s)
			}
		}
	}
	return b.String()
}

// axeSource reads axe.min.js from $SETTLE_AXE_JS, failing t with an
// install hint when it is unset or unreadable.
func axeSource(t testing.TB) string {
	t.Helper()
	path := os.Getenv(AxeEnv)
	if path == "" {
		t.Fatalf("browsertest: %s is not set: it names axe-core's axe.min.js (npm package axe-core 4.x); %s",
			AxeEnv, installHint)
	}
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("browsertest: reading axe-core (%s): %v; %s", AxeEnv, err, installHint)
	}
	return string(src)
}
