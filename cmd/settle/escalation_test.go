package main

import (
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// A class D target cannot confirm a dropped response, so the operation is
// escalated; one person proposes SUCCEEDED with the object id found at the
// provider, a second approves, and the operation is confirmed.
func TestEscalation_TwoPersonResolution(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	simBase, contracts := simWithContract(t, dir, "--class", "D", "--drop-after-commit", "1")
	db := "sqlite:" + filepath.Join(dir, "settle.db")
	base := start(t, dir, nil, "--database-url", db, "--contracts", contracts, "--lease", "10s")
	token := newToken(t, db)
	_, op := apiCall(t, http.MethodPost, base+"/api/v1/operations", token, chargeBody)
	esc := waitState(t, base, token, op.ID, "ESCALATED", 10*time.Second)
	if !strings.HasPrefix(esc.Status, "Under review by ") {
		t.Fatalf("status %q", esc.Status)
	}
	if simObjects(t, simBase, op.RemoteKey) != 1 {
		t.Fatal("the provider should hold the charge")
	}
	cli := func(args ...string) (string, error) {
		out, err := exec.Command(binary, append(append([]string{"escalation"}, args...), "--tenant", "acme", "--database-url", db)...).CombinedOutput()
		return string(out), err
	}
	knownPeople(t, db, "demo:alice", "demo:bob")
	if out, _ := cli("list"); !strings.Contains(out, op.ID) {
		t.Fatalf("list:\n%s", out)
	}
	// An object id no store or screen can take is refused, naming the field.
	if out, err := cli("propose", op.ID, "--kind", "confirm", "--remote-ref", "ch_"+strings.Repeat("x", 3000),
		"--reason", "seen in the provider dashboard", "--as", "demo:alice"); err == nil || !strings.Contains(out, "remote_ref is 3003 bytes") {
		t.Fatalf("a 3,000-character object id: %v\n%.300s", err, out)
	}
	out, err := cli("propose", op.ID, "--kind", "confirm", "--remote-ref", "ch_found", "--reason", "seen in the provider dashboard", "--as", "demo:alice")
	if err != nil {
		t.Fatalf("propose: %v\n%s", err, out)
	}
	id := regexp.MustCompile(`proposal (\d+)`).FindStringSubmatch(out)[1]
	if out, err := cli("approve", id, "--as", "demo:alice"); err == nil || !strings.Contains(out, "own proposal") {
		t.Fatalf("self-approval: %v\n%s", err, out)
	}
	// This CLI loads no contract, so no lookup checks ch_found: Bob must
	// say he checked it at the target, as the console's approver ticks.
	if out, err := cli("approve", id, "--as", "demo:bob"); err == nil || !strings.Contains(out, "Confirm that you checked object ch_found") {
		t.Fatalf("approved unchecked: %v\n%s", err, out)
	}
	if out, err := cli("approve", id, "--as", "demo:bob", "--checked-at-target"); err != nil || !strings.Contains(out, "SUCCEEDED") {
		t.Fatalf("approve: %v\n%s", err, out)
	}
	// The queue shows people by name; the record keeps their subjects.
	if out, err := cli("list", "--all"); err != nil || !strings.Contains(out, "approved by demo:bob") || !strings.Contains(out, "demo:alice") {
		t.Fatalf("list --all: %v\n%s", err, out)
	}
	got := waitState(t, base, token, op.ID, "SUCCEEDED", 5*time.Second)
	if got.RemoteRef != "ch_found" || got.Status != "Confirmed" {
		t.Fatalf("resolved operation %+v", got)
	}
	// The manager's figures, as CSV.
	if status, _ := apiCall(t, http.MethodPost, base+"/api/v1/operations", token, strings.Replace(chargeBody, "500", "400", 1)); status != http.StatusConflict {
		t.Fatalf("conflicting POST: %d", status)
	}
	csvOut, err := exec.Command(binary, "figures", "--tenant", "acme", "--csv", "--database-url", db).CombinedOutput()
	if err != nil {
		t.Fatalf("figures: %v\n%s", err, csvOut)
	}
	today := time.Now().UTC().Format(time.DateOnly)
	// tenant,target,day,metric,value,counts: the episode began today and
	// was resolved by people, not automatically.
	for _, row := range []string{
		"acme,payments," + today + ",episodes_started,1,", "acme,payments," + today + ",resolved,1,",
		"acme,payments,,resolved_by_people,1,", "acme,payments,,resolved_automatically,0,", "acme,payments,,escalations,1,",
		"acme,,,open_escalations,0,", "acme,,,payload_conflicts,1,", "acme,,,duplicates,0,",
	} {
		if !strings.Contains(string(csvOut), "\n"+row) {
			t.Fatalf("figures lack %q:\n%s", row, csvOut)
		}
	}
	if out, err := exec.Command(binary, "figures", "--tenant", "acme", "--database-url", db).CombinedOutput(); err != nil ||
		!strings.Contains(string(out), "payments") {
		t.Fatalf("figures table: %v\n%s", err, out)
	}
	for _, args := range [][]string{{}, {"frob"}, {"approve", "1"}, {"propose", "x", "--tenant", "acme"}} {
		err := exec.Command(binary, append([]string{"escalation"}, args...)...).Run()
		if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 2 {
			t.Fatalf("escalation %v: %v, want exit 2", args, err)
		}
	}
}
