package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Invariant 8: payloads, API tokens and secrets never appear in logs. One
// settle serve with the demo target goes through creation, conflicts, bad
// requests, sending, confirmation, a failing-then-succeeding client callback
// and a forged webhook; its whole log must hold none of them, in either
// format. The JSON log is also read line by line: each is one object, the
// part of settle that wrote it is its component attribute, never in the
// message, and health probes are DEBUG.
func TestLogs_NoPayloadsTokensOrSecrets(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			testLogs(t, format)
		})
	}
}

func testLogs(t *testing.T, format string) {
	dir := t.TempDir()
	db := migratedSQLite(t, dir)
	var calls atomic.Int32
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusInternalServerError) // the first delivery fails: a retry is logged
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()
	out, err := exec.Command(binary, "callback", "set", "--tenant", "acme", "--url", receiver.URL, "--database-url", db, "--callbacks-allow-http", "--callbacks-allow-net", "127.0.0.1").Output()
	if err != nil {
		t.Fatalf("callback set: %v", err)
	}
	callbackSecret := strings.TrimSpace(string(out))

	// The level comes from the environment here, the format from the flag.
	base, logs := startLogged(t, dir, []string{"SETTLE_LOG_LEVEL=debug"}, "--database-url", db, "--demo-target", "--log-format", format, "--callbacks-allow-http", "--callbacks-allow-net", "127.0.0.1")
	healthy(t, base)
	token := newToken(t, db)
	const marker, amount = "PAYLOAD-MARKER-7f3a", "987654"
	body := `{"target":"demo","operation_type":"charge","intent_ref":"log-1","payload":{"amount":` + amount +
		`,"currency":"EUR","note":"` + marker + `"}}`
	status, op := apiCall(t, http.MethodPost, base+"/api/v1/operations", token, body)
	if status != http.StatusCreated {
		t.Fatalf("POST: %d", status)
	}
	apiCall(t, http.MethodPost, base+"/api/v1/operations", token, strings.Replace(body, amount, "111", 1))  // 409
	apiCall(t, http.MethodPost, base+"/api/v1/operations", token, `{"payload":{"note":"`+marker+`"`)        // 400
	apiCall(t, http.MethodPost, base+"/api/v1/operations", token+"x", body)                                 // 401
	apiCall(t, http.MethodPost, base+"/api/v1/operations", token, strings.Replace(body, "demo", "nope", 1)) // 422
	waitState(t, base, token, op.ID, "SUCCEEDED", 10*time.Second)
	forged, _ := http.Post(base+"/webhooks/demo", "application/json", strings.NewReader(`{"data":{"note":"`+marker+`"}}`))
	if forged != nil {
		forged.Body.Close()
	}
	waitFor(t, 15*time.Second, "the callback retried to success", func() (bool, string) {
		n := calls.Load()
		return n >= 2, fmt.Sprintf("%d calls", n)
	})
	log := logs.String()
	for name, secret := range map[string]string{
		"payload text": marker, "payload amount": amount, "API token": token,
		"callback secret": callbackSecret, "authorization header": "Bearer",
	} {
		if strings.Contains(log, secret) {
			t.Fatalf("the log contains the %s:\n%s", name, log)
		}
	}
	if format == "text" {
		if !strings.Contains(log, "msg=sent component=executor ") || !strings.Contains(log, `msg="webhook refused" component=http `) {
			t.Fatalf("the log is missing the lines this test relies on:\n%s", log)
		}
		return
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("a log line is not JSON: %v: %s", err, line)
		}
		msg, _ := rec["msg"].(string)
		comp, _ := rec["component"].(string)
		if comp == "" {
			t.Errorf("a log line without a component: %s", line)
		}
		for _, c := range []string{"executor", "sweeper", "reconciler", "inbox", "notifier", "auditor", "leader", "http", "serve"} {
			if strings.HasPrefix(msg, c+":") {
				t.Errorf("the component is in the message, not an attribute: %s", line)
			}
		}
		switch {
		case msg == "sent" && comp == "executor":
			seen["sent"] = true
		case msg == "webhook refused" && comp == "http" && rec["request_id"] != "" && rec["request_id"] != nil:
			seen["webhook refused, with its request id"] = true
		case msg == "request" && rec["route"] == "/healthz":
			seen["health probe"] = true
			if rec["level"] != "DEBUG" {
				t.Errorf("a health probe logged at %v, want DEBUG: %s", rec["level"], line)
			}
		case msg == "request" && rec["route"] == "/api/v1/operations" && rec["level"] != "INFO":
			t.Errorf("an API request logged at %v, want INFO: %s", rec["level"], line)
		}
	}
	for _, want := range []string{"sent", "webhook refused, with its request id", "health probe"} {
		if !seen[want] {
			t.Errorf("no %s line in the JSON log:\n%s", want, log)
		}
	}
	// What the retention and erasure commands print (they do not log)
	// holds counts, never the data they count or remove.
	var printed strings.Builder
	for _, args := range [][]string{
		{"purge", "--dry-run", "--redact-payloads-after", "1h", "--database-url", db},
		{"tenant", "erase", "--tenant", "acme", "--force", "--by", "ops", "--database-url", db},
	} {
		code, out, errOut := settleCmd(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		printed.WriteString(out + errOut)
	}
	for name, secret := range map[string]string{
		"payload text": marker, "payload amount": amount, "API token": token, "callback secret": callbackSecret,
	} {
		if strings.Contains(printed.String(), secret) {
			t.Fatalf("purge or erase printed the %s:\n%s", name, printed.String())
		}
	}
	if !strings.Contains(printed.String(), "  operations     1\n") {
		t.Fatalf("the erasure did not count the operation:\n%s", printed.String())
	}
}
