package ledger_test

import (
	"strings"
	"testing"

	"settle/ledger"
)

func TestPlainText(t *testing.T) {
	for in, want := range map[string]string{
		"":                       "",
		"order-1":                "order-1",
		"zählung 1":              "zählung 1",
		"ab\x00cd":               `"ab\x00cd"`,
		"a\nb":                   `"a\nb"`,
		"a\xffb":                 `"a\xffb"`,
		"abc\u202edef":           `"abc\u202edef"`,
		strings.Repeat("x", 10):  strings.Repeat("x", 10),
		strings.Repeat("y", 11):  `"yyyyyyyyyy"… (11 bytes)`,
		"\x00" + "123456789abcd": `"\x00123456789"… (14 bytes)`,
	} {
		if got := ledger.PlainText(in, 10); got != want {
			t.Errorf("PlainText(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestCheckProviderText(t *testing.T) {
	ok := []string{"ch_123", "zählung-1", "a b", strings.Repeat("x", ledger.MaxProviderText), "42"}
	for _, s := range ok {
		if err := ledger.CheckProviderText("remote id", s); err != nil {
			t.Errorf("CheckProviderText(%q) = %v, want nil", s, err)
		}
	}
	bad := map[string]string{
		"":          "remote id is empty",
		"ch_\x00":   "remote id contains U+0000",
		"ch\n1":     "remote id contains U+000A",
		"ch\u202e1": "remote id contains U+202E",
		"ch\u200b1": "remote id contains U+200B",
		"ch\u00a01": "remote id contains U+00A0",
		"ch\xff":    "remote id is not valid UTF-8",
		strings.Repeat("x", ledger.MaxProviderText+1): "remote id is 257 bytes long; at most 256",
		strings.Repeat("é", 129):                      "remote id is 258 bytes long",
	}
	for s, want := range bad {
		err := ledger.CheckProviderText("remote id", s)
		if ledger.ErrorCode(err) != ledger.EInvalid || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckProviderText(%q) = %v, want EInvalid containing %q", s, err, want)
		}
		// The value itself is never repeated, escaped or not.
		if len(s) > 2 && strings.Contains(err.Error(), s[:3]) {
			t.Errorf("CheckProviderText(%q) repeats the value: %v", s, err)
		}
	}
}

func TestOutcomeRefusesUnstorableText(t *testing.T) {
	base := ledger.Outcome{Tenant: "acme", OperationID: "x", From: ledger.InFlight, To: ledger.Succeeded,
		RemoteRef: "ch_1", Actor: ledger.ActorExecutor}
	if _, err := base.EvidenceJSON(); err != nil {
		t.Fatalf("valid outcome: %v", err)
	}
	for name, o := range map[string]ledger.Outcome{
		"NUL id":       func(o ledger.Outcome) ledger.Outcome { o.RemoteRef = "ch_\x00"; return o }(base),
		"3 KB id":      func(o ledger.Outcome) ledger.Outcome { o.RemoteRef = strings.Repeat("a", 3000); return o }(base),
		"NUL reason":   func(o ledger.Outcome) ledger.Outcome { o.Reason = "a\x00b"; return o }(base),
		"bad UTF-8":    func(o ledger.Outcome) ledger.Outcome { o.Reason = "a\xffb"; return o }(base),
		"NUL evidence": func(o ledger.Outcome) ledger.Outcome { o.Evidence = map[string]any{"id": "a\x00"}; return o }(base),
	} {
		if _, err := o.EvidenceJSON(); ledger.ErrorCode(err) != ledger.EInvalid {
			t.Errorf("%s: EvidenceJSON = %v, want EInvalid", name, err)
		}
	}
	// An escaped backslash followed by "u0000" is no NUL.
	o := base
	o.Evidence = map[string]any{"note": `\u0000`}
	if _, err := o.EvidenceJSON(); err != nil {
		t.Errorf("literal backslash-u0000 refused: %v", err)
	}
}
