package main

import (
	"bytes"
	"context"
	"database/sql"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"settle/ledger"
	"settle/ledger/sqlite"
	"settle/reconciler"
)

func TestShown(t *testing.T) {
	for in, want := range map[string]string{
		"approval-7731":       "approval-7731",
		"café №7 請求":          "café №7 請求",
		"":                    "",
		"a b":                 "a b",
		"\x1b[31mred":         `"\x1b[31mred"`,
		"line\nforged":        `"line\nforged"`,
		"tab\there":           `"tab\there"`,
		"bidi\u202eevil":      `"bidi\u202eevil"`,
		"zero\u200bwidth":     `"zero\u200bwidth"`,
		"bad\xffbyte":         `"bad\xffbyte"`,
		`"already quoted"`:    `"\"already quoted\""`,
		"bell\a":              `"bell\a"`,
		"osc\x1b]0;title\x07": `"osc\x1b]0;title\a"`,
	} {
		if got := shown(in); got != want {
			t.Errorf("shown(%q) = %s, want %s", in, got, want)
		}
	}
	if dash("") != "-" || dash("x\n") != `"x\n"` {
		t.Error("dash")
	}
}

// Item 9 of issue 9: no newline or terminal escape that a tenant, a
// provider or an older row supplied reaches an operator's terminal, in any
// command that prints such text.
func TestCLI_EscapesSuppliedText(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "settle.db")
	db := "sqlite:" + path
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	const evil = "\x1b[31mFORGED\nFORGED"
	if _, err := s.Quarantine(ctx, ledger.QuarantineItem{Target: "payments", Reason: "reason " + evil,
		EventID: "evt " + evil, Reference: "ref\r" + evil, Tenant: "acme\u202e", RemoteID: "ch_\x1b]0;title\x07"}); err != nil {
		t.Fatal(err)
	}
	op, _, err := s.Create(ctx, ledger.NewOperation{Tenant: "acme", Type: "charge", IntentRef: "legacy-1",
		Target: "payments", Payload: []byte(`{"amount":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	// A row written before references were checked, or by a provider: the
	// intent reference, the remote reference and the reason carry escapes.
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`UPDATE operation_ledger SET intent_ref = ?, remote_ref = ?, reason = ?, state = 'ESCALATED'
		WHERE operation_id = ?`, "intent "+evil, "ch_"+evil, "why "+evil, op.ID); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	for _, args := range [][]string{
		{"operation", "show", "--tenant", "acme", op.ID},
		{"quarantine", "list"},
		{"escalation", "list", "--tenant", "acme"},
	} {
		out, err := exec.Command(binary, append(args, "--database-url", db)...).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		text := string(out)
		if strings.ContainsAny(text, "\x1b\x07\r\u202e") {
			t.Errorf("%v printed a raw control or format character:\n%q", args, text)
		}
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "FORGED") {
				t.Errorf("%v: supplied text started a line of its own:\n%s", args, text)
			}
		}
		if !strings.Contains(text, `\x1b[31mFORGED\nFORGED`) {
			t.Errorf("%v does not show the supplied text escaped:\n%s", args, text)
		}
	}
}

// The audit report prints the target's own object ids and lookup reasons:
// provider-supplied text, escaped like the rest.
func TestPrintReport_EscapesProviderText(t *testing.T) {
	var b bytes.Buffer
	printReport(&b, reconciler.Report{Target: "payments", Checked: 1, Duplicates: 1, LookupsFailed: 1,
		Findings: []reconciler.Found{{Finding: ledger.Finding{Tenant: "acme", OperationID: "op-1",
			Kind: ledger.FindingDuplicate, RemoteIDs: []string{"ch_1", "ch_\x1b[31m\nFORGED"}}, RemoteRef: "ch_1"}},
		LookupFailures: []reconciler.LookupFailure{{Tenant: "acme", OperationID: "op-2", Reason: "lookup answered 500: \x1b[2J"}},
	})
	if out := b.String(); strings.Contains(out, "\x1b") || strings.Contains(out, "\nFORGED") || !strings.Contains(out, `ch_\x1b[31m\nFORGED`) {
		t.Fatalf("report:\n%s", out)
	}
}
