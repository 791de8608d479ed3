package ledger_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"settle/ledger"
)

func TestCallbackState(t *testing.T) {
	for _, s := range ledger.States {
		want := s == ledger.Succeeded || s == ledger.FailedTerminal || s == ledger.Escalated
		if ledger.CallbackState(s) != want {
			t.Errorf("CallbackState(%s) = %v", s, !want)
		}
	}
	for _, s := range ledger.CallbackStates() {
		if !ledger.CallbackState(s) {
			t.Errorf("CallbackStates lists %s", s)
		}
	}
}

func TestNewCallbackSecret(t *testing.T) {
	a, err := ledger.NewCallbackSecret()
	b, _ := ledger.NewCallbackSecret()
	if err != nil || a == b || !strings.HasPrefix(a, "scs_") || len(a) != 4+43 {
		t.Fatalf("secrets %q %q, %v", a, b, err)
	}
	if ledger.ValidateCallback("acme", "https://h.example/x", []byte(a)) != nil {
		t.Fatal("a fresh secret is refused")
	}
}

func TestTrimCallbackError(t *testing.T) {
	for _, s := range []string{"", "short", strings.Repeat("a", 600), strings.Repeat("é", 300), "a" + strings.Repeat("€", 200)} {
		got := ledger.TrimCallbackError(s)
		if len(got) > ledger.MaxCallbackError || !utf8.ValidString(got) || !strings.HasPrefix(s, got) ||
			(len(s) <= ledger.MaxCallbackError && got != s) {
			t.Errorf("TrimCallbackError(%d bytes) = %d bytes, valid %v", len(s), len(got), utf8.ValidString(got))
		}
	}
}

// The recorded URL keeps scheme, host and path, never the query a receiver
// may put a token in.
func TestCallbackActionURL(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"https://hooks.example.com/acme":             "https://hooks.example.com/acme",
		"https://hooks.example.com/a?token=s3cr3t#x": "https://hooks.example.com/a?…",
		"https://hooks.example.com:8443/a%20b":       "https://hooks.example.com:8443/a%20b",
	} {
		if got := ledger.CallbackActionURL(raw); got != want {
			t.Errorf("%q: %q, want %q", raw, got, want)
		}
	}
}
