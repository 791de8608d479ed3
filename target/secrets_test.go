package target

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestReadSecrets(t *testing.T) {
	t.Parallel()
	const value = "sk_live_51HxAbCdEfGh"
	yaml := edit("    auth: {header: Authorization, scheme: Basic, secret_env: T1_KEY}\n")
	set, err := Parse("c.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, env, err string }{
		{"unset", "", "target t1: auth secret environment variable T1_KEY is not set"},
		{"blank", "  ", "target t1: auth secret environment variable T1_KEY is not set"},
		{"line break", value + ":\n", "target t1: auth secret environment variable T1_KEY holds a line break or another control character; a header cannot carry it"},
		{"basic without a colon", value, "target t1: auth secret environment variable T1_KEY must hold user:password for the Basic scheme (settle base64-encodes it)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ReadSecrets(set, func(k string) string { return map[string]string{"T1_KEY": tt.env}[k] })
			if s != nil || err == nil || err.Error() != tt.err {
				t.Errorf("ReadSecrets = %v, %v; want error %q", s, err, tt.err)
			}
			if err != nil && strings.Contains(err.Error(), value) {
				t.Errorf("error quotes the secret: %v", err)
			}
		})
	}
	s, err := ReadSecrets(set, func(k string) string { return map[string]string{"T1_KEY": value + ":"}[k] })
	if err != nil || s.secret("t1") != value+":" || s.secret("t2") != "" {
		t.Fatalf("ReadSecrets = %v, %v", s, err)
	}
	if _, err := ReadSecrets(set, nil); err == nil {
		t.Error("nil getenv: no error")
	}
}

// An owner.notify signing key is required at start-up, at least 32 bytes,
// and never quoted.
func TestReadSecrets_OwnerNotify(t *testing.T) {
	t.Parallel()
	yaml := strings.Replace(base, "owner: {team: T, escalation_contact: t@example.com}",
		"owner: {team: T, escalation_contact: t@example.com, notify: {url: \"https://hooks.example.com/x\", secret_env: T1_NOTIFY, format: slack}}", 1)
	set, err := Parse("c.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := set.Get("t1")
	if n := c.Owner.Notify; n == nil || n.URL != "https://hooks.example.com/x" || n.SecretEnv != "T1_NOTIFY" || n.Format != NotifySlack {
		t.Fatalf("notify %+v", c.Owner.Notify)
	}
	const short = "too-short-secret"
	s, err := ReadSecrets(set, func(k string) string { return map[string]string{"T1_NOTIFY": short}[k] })
	want := "target t1: owner notify secret environment variable T1_NOTIFY is not set or shorter than 32 bytes"
	if s != nil || err == nil || err.Error() != want || strings.Contains(err.Error(), short) {
		t.Fatalf("ReadSecrets = %v, %v; want %q", s, err, want)
	}
	const key = "0123456789abcdef0123456789abcdef-team"
	s, err = ReadSecrets(set, func(k string) string { return map[string]string{"T1_NOTIFY": key}[k] })
	if err != nil || string(s.NotifySecret("t1")) != key || s.NotifySecret("t2") != nil {
		t.Fatalf("ReadSecrets = %v, %v", s, err)
	}
	if strings.Contains(fmt.Sprintf("%v %+v %#v", s, s, *s), key) {
		t.Fatal("Secrets prints the notify key")
	}
	var unset *Secrets
	if unset.NotifySecret("t1") != nil {
		t.Fatal("nil Secrets has a key")
	}
	if _, err := ReadSecrets(set, nil); err == nil {
		t.Error("nil getenv: no error")
	}
	// A contract without auth needs no variable.
	none, err := ReadSecrets(mustParse(t, base), func(string) string { return "" })
	if err != nil || none.secret("t1") != "" {
		t.Errorf("no auth: %v, %v", none, err)
	}
	var nilSecrets *Secrets
	if nilSecrets.secret("t1") != "" {
		t.Error("nil Secrets holds a secret")
	}
}

// However a Secrets is printed, marshalled or logged, the value never
// appears.
func TestSecrets_Redacted(t *testing.T) {
	t.Parallel()
	const value = "sk_live_51HxAbCdEfGh"
	set := mustParse(t, edit("    auth: {header: Authorization, scheme: Bearer, secret_env: T1_KEY}\n"))
	s, err := ReadSecrets(set, func(string) string { return value })
	if err != nil {
		t.Fatal(err)
	}
	type config struct {
		Name    string
		Secrets *Secrets
		Value   Secrets
	}
	cfg := config{Name: "x", Secrets: s, Value: *s}
	var outs []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
		outs = append(outs, fmt.Sprintf(verb, s), fmt.Sprintf(verb, *s), fmt.Sprintf(verb, cfg))
	}
	outs = append(outs, s.String(), s.GoString(), fmt.Sprint(s), fmt.Sprintln(*s))
	for _, v := range []any{s, *s, cfg} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, string(b))
	}
	var logs bytes.Buffer
	for _, h := range []slog.Handler{slog.NewTextHandler(&logs, nil), slog.NewJSONHandler(&logs, nil)} {
		slog.New(h).Info("config", "secrets", s, "value", *s, "cfg", cfg)
	}
	outs = append(outs, logs.String())
	for _, out := range outs {
		if strings.Contains(out, value) || strings.Contains(out, "51HxAbC") {
			t.Errorf("output holds the secret: %s", out)
		}
	}
	if got := fmt.Sprintf("%v", s); got != "target.Secrets{1 redacted}" {
		t.Errorf("%%v = %q", got)
	}
}

func mustParse(t *testing.T, yaml string) *Set {
	t.Helper()
	set, err := Parse("c.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return set
}
