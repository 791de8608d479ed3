package main

import (
	"bytes"
	"errors"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runAudit runs `settle audit` and returns its exit status and output.
func runAudit(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"audit"}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatal(err)
	}
	if strings.Contains(errOut.String(), `unknown command "audit"`) {
		t.Fatal("settle audit is not wired into run() in main.go")
	}
	return code, out.String(), errOut.String()
}

// The drill: a confirmed charge audits clean (exit 0); after the simulator
// creates a duplicate behind settle's back, `settle audit` exits 1 and
// names the operation and both objects.
func TestAudit_FindsDuplicate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	simBase, contracts := simWithContract(t, dir, "--class", "B")
	db := "sqlite:" + filepath.Join(dir, "settle.db")
	base := start(t, dir, nil, "--database-url", db, "--contracts", contracts, "--lease", "10s")
	token := newToken(t, db)
	status, op := apiCall(t, http.MethodPost, base+"/api/v1/operations", token, chargeBody)
	if status != http.StatusCreated {
		t.Fatalf("POST: %d", status)
	}
	op = waitState(t, base, token, op.ID, "SUCCEEDED", 20*time.Second)

	args := []string{"--contracts", contracts, "--database-url", db, "--target", "payments"}
	code, out, errOut := runAudit(t, args...)
	if code != 0 || !strings.HasPrefix(out, "audit payments: 1 checked, 0 duplicates, 0 losses, 0 phantoms, 0 lookups failed") {
		t.Fatalf("clean audit: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}

	resp, err := http.Post(simBase+"/_sim/duplicate?reference="+op.RemoteKey, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || simObjects(t, simBase, op.RemoteKey) != 2 {
		t.Fatalf("duplicate: %d", resp.StatusCode)
	}
	code, out, errOut = runAudit(t, args...)
	if code != 1 || !strings.Contains(out, "1 duplicates") ||
		!strings.Contains(out, "duplicate tenant=acme operation="+op.ID+" remote_ref="+op.RemoteRef+" remote_ids="+op.RemoteRef+",") ||
		!strings.Contains(errOut, "settle audit: 1 duplicate(s)") {
		t.Fatalf("audit after the duplicate: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if strings.Contains(errOut, `"amount"`) || strings.Contains(out, `"amount"`) {
		t.Fatal("the audit printed a payload")
	}
}

func TestAudit_Usage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, contracts := simWithContract(t, dir, "--class", "B")
	db := "sqlite:" + filepath.Join(dir, "settle.db")
	for name, args := range map[string][]string{
		"NoTarget":      {"--contracts", contracts, "--database-url", db},
		"NoContracts":   {"--target", "payments", "--database-url", db},
		"UnknownTarget": {"--contracts", contracts, "--database-url", db, "--target", "nope"},
		"Positional":    {"--contracts", contracts, "--target", "payments", "extra"},
	} {
		if code, _, errOut := runAudit(t, args...); code != 2 {
			t.Errorf("%s: exit %d, want 2; stderr: %s", name, code, errOut)
		}
	}
}
