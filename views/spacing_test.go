package views

import (
	"regexp"
	"strings"
	"testing"
	"unicode"
)

var (
	inlineRE = regexp.MustCompile(`</?(span|a|time|strong|em|code|abbr|label|b|i|kbd|mark|small)\b[^>]*>`)
	tagRE    = regexp.MustCompile(`<[^>]*>`)
)

// text is what a reader sees of page: inline tags removed with nothing
// added, so a name glued to the next word shows glued; a block's edge
// separates like a space.
func text(page string) string {
	return tagRE.ReplaceAllString(inlineRE.ReplaceAllString(page, ""), " ")
}

// gluedAfter fails when name, anywhere in page's text, runs straight into
// a following letter or digit ("Ada Ownerjust now").
func gluedAfter(t *testing.T, what, page, name string) {
	t.Helper()
	s := text(page)
	if !strings.Contains(s, name) {
		t.Fatalf("%s: %q not shown in %s", what, name, s)
	}
	for rest := s; ; {
		i := strings.Index(rest, name)
		if i < 0 {
			return
		}
		rest = rest[i+len(name):]
		if r := []rune(rest); len(r) > 0 && (unicode.IsLetter(r[0]) || unicode.IsDigit(r[0])) {
			t.Errorf("%s: %q glued to the next word: %.40q", what, name, rest)
		}
	}
}

// A person's name is never glued to the word after it: on the proposals
// list (theirs and others'), the decision page's open proposal and the
// operation's timeline.
func TestNames_NotGlued(t *testing.T) {
	t.Parallel()
	at := Time{ISO: "2026-12-01T03:04:05Z", UTC: "2026-12-01 03:04:05 UTC", Relative: "just now", Absolute: "2026-12-01 03:04 UTC"}
	p := ProposalView{ID: "1", What: "Confirm succeeded", ProposedBy: "Ada Owner", ProposedAt: at, Tenant: "acme", Target: "payments", Intent: "order-1", Href: "/e", Action: "/e"}
	gluedAfter(t, "proposals", render(t, Proposals(ProposalsPage{Awaiting: []ProposalView{p}, Mine: []ProposalView{p}})), "Ada Owner")
	page := render(t, Operation(OperationPage{Events: []Event{{Kind: "action", Title: "Proposed: confirm succeeded with ch_1", By: "Ada Owner (owner)", When: at}}}))
	gluedAfter(t, "timeline", page, "Ada Owner (owner)")
	gluedAfter(t, "timeline", page, "ch_1")
}

// A quarantined event's page and list never glue words: its heading (once
// "Eventevt_…"), who resolved it and the operation it was linked to.
func TestQuarantine_NotGlued(t *testing.T) {
	t.Parallel()
	at := Time{ISO: "2026-12-01T03:04:05Z", UTC: "2026-12-01 03:04:05 UTC", Relative: "just now", Absolute: "2026-12-01 03:04 UTC"}
	linked := QuarantineResolution{Kind: "linked", Verb: "Linked", By: "Grace Owner (owner)", At: at, Operation: "op-1",
		OperationHref: "/operations/acme/op-1", Reason: "carries our reference"}
	dismissed := QuarantineResolution{Kind: "dismissed", Verb: "Dismissed", By: "Ada Admin (admin)", At: at, Reason: "a test event"}
	for name, r := range map[string]QuarantineResolution{"linked": linked, "dismissed": dismissed} {
		page := render(t, QuarantineItem(QuarantineItemPage{Heading: "Quarantined event evt_1", EventID: Shown{Text: "evt_1"},
			Resolved: &r, Already: "Already " + name + " by " + r.By + " at 2026-12-01 03:04 UTC."}))
		if s := text(page); !strings.Contains(s, "Quarantined event evt_1") || !strings.Contains(s, r.Verb+" ") {
			t.Errorf("%s: heading or verb glued: %s", name, s)
		}
		gluedAfter(t, name+" item", page, "evt_1")
		gluedAfter(t, name+" item", page, r.By)
		list := render(t, Quarantine(QuarantinePage{Rows: []QuarantineRow{{ID: "1", Href: "/q", EventID: Shown{Text: "evt_1"},
			RemoteID: Shown{Text: "ch_1"}, Resolved: &r}}}))
		gluedAfter(t, name+" list", list, r.By)
		gluedAfter(t, name+" list", list, r.Verb)
	}
	gluedAfter(t, "linked item", render(t, QuarantineItem(QuarantineItemPage{Resolved: &linked})), "op-1")
}
