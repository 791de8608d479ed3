package main

import (
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
// and a forged webhook; its whole log must hold none of them.
func TestLogs_NoPayloadsTokensOrSecrets(t *testing.T) {
	t.Parallel()
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
	out, err := exec.Command(binary, "callback", "set", "--tenant", "acme", "--url", receiver.URL, "--database-url", db).Output()
	if err != nil {
		t.Fatalf("callback set: %v", err)
	}
	callbackSecret := strings.TrimSpace(string(out))

	base, logs := startLogged(t, dir, nil, "--database-url", db, "--demo-target")
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
	if !strings.Contains(log, "executor: sent") || !strings.Contains(log, "webhook refused") {
		t.Fatalf("the log is missing the lines this test relies on:\n%s", log)
	}
}
