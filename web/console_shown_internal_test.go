package web

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"settle/views"
)

// A provider id holding an ESC, a newline or a right-to-left override is
// shown escaped, as the CLI shows it, and marked; a plain id is neither.
func TestShownRef_EscapesAndMarksProviderIDs(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{"ch_\x1b[31mred", "ch_1\nFAKE: refunded", "ch_\u202egnp.exe"} {
		r := shownRef("remote-ref", "Target's reference", raw)
		if !r.Escaped || strings.ContainsAny(r.Text, "\x1b\n\u202e") {
			t.Fatalf("%q shown as %+v", raw, r)
		}
		var b bytes.Buffer
		if err := views.Operation(views.OperationPage{ID: "op1", Refs: []views.Ref{r}}).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		if !strings.Contains(page, `data-testid="ref-remote-ref-escaped"`) || strings.ContainsAny(page, "\x1b\u202e") ||
			!strings.Contains(page, `data-testid="ref-remote-ref">`+strings.ReplaceAll(r.Text, `"`, "&#34;")+`<`) {
			t.Fatalf("%q rendered:\n%s", raw, page)
		}
	}
	r := shownRef("remote-ref", "Target's reference", "ch_3Nc9")
	var b bytes.Buffer
	if err := views.Operation(views.OperationPage{ID: "op1", Refs: []views.Ref{r}}).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	if r.Escaped || r.Text != "ch_3Nc9" || strings.Contains(b.String(), "ref-remote-ref-escaped") {
		t.Fatalf("a plain id: %+v", r)
	}
}
