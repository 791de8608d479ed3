package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An operation settle records as FAILED_TERMINAL ("Not applied") whose
// object turns up at the target: `settle audit` exits 1 and names it as a
// phantom.
func TestAudit_FindsPhantom(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	simBase, contracts := simWithContract(t, dir, "--class", "B")
	db := "sqlite:" + filepath.Join(dir, "settle.db")
	base := start(t, dir, nil, "--database-url", db, "--contracts", contracts)
	token := newToken(t, db)
	// No amount: the simulator refuses it with 400, documented as having no
	// side effect, so the operation is FAILED_TERMINAL.
	status, op := apiCall(t, http.MethodPost, base+"/api/v1/operations", token,
		`{"target":"payments","operation_type":"charge","intent_ref":"order-9","payload":{"currency":"EUR"}}`)
	if status != http.StatusCreated {
		t.Fatalf("POST: %d", status)
	}
	waitState(t, base, token, op.ID, "FAILED_TERMINAL", 20*time.Second)

	args := []string{"--contracts", contracts, "--database-url", db, "--target", "payments"}
	if code, out, errOut := runAudit(t, args...); code != 0 {
		t.Fatalf("clean audit: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	body := fmt.Sprintf(`{"amount":500,"currency":"EUR","metadata":{"settle_ref":%q,"settle_tenant":"acme"}}`, op.RemoteKey)
	resp, err := http.Post(simBase+"/v1/charges", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("object behind settle's back: %d", resp.StatusCode)
	}
	code, out, errOut := runAudit(t, args...)
	if code != 1 || !strings.Contains(out, "1 checked, 0 duplicates, 0 losses, 1 phantoms") ||
		!strings.Contains(out, "phantom tenant=acme operation="+op.ID+" remote_ref=- remote_ids=ch_") ||
		!strings.Contains(errOut, "1 phantom(s)") {
		t.Fatalf("audit after the object appeared: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}
