package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"settle/ledger"
	"settle/ledger/sqlite"
)

func TestQuarantineCLI(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "settle.db")
	db := "sqlite:" + path
	s, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.Quarantine(context.Background(), ledger.QuarantineItem{Target: "payments", Reason: "the object names no tenant",
		EventID: "evt_42", Reference: "ref-1", RemoteID: "ch_9"})
	if err != nil {
		t.Fatal(err)
	}
	// Claims globex, concerns acme's operation: acme's item.
	cross, err := s.Quarantine(context.Background(), ledger.QuarantineItem{Target: "payments", Reason: "tenant mismatch",
		EventID: "evt_77", Tenant: "globex", OperationID: "op-acme", OpTenant: "acme"})
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		out, err := exec.Command(binary, append(append([]string{"quarantine"}, args...), "--database-url", db)...).CombinedOutput()
		return string(out), err
	}
	out, err := run("list")
	if err != nil || !strings.Contains(out, "evt_42") || !strings.Contains(out, "names no tenant") {
		t.Fatalf("list: %v\n%s", err, out)
	}
	if out, err := run("resolve", strconv.FormatInt(id, 10), "--by", "alice", "--note", "provider test event"); err != nil {
		t.Fatalf("resolve: %v\n%s", err, out)
	}
	if out, _ := run("list"); strings.Contains(out, "evt_42") {
		t.Fatalf("a resolved item is still open:\n%s", out)
	}
	if out, _ := run("list", "--all"); !strings.Contains(out, "by alice: provider test event") {
		t.Fatalf("list --all:\n%s", out)
	}
	if _, err := run("resolve", strconv.FormatInt(id, 10), "--by", "bob", "--note", "again"); err == nil {
		t.Fatal("resolved twice")
	}
	if out, _ := run("list", "--tenant", "globex"); strings.Contains(out, "evt_77") {
		t.Fatalf("globex sees acme's item:\n%s", out)
	}
	if out, _ := run("list", "--tenant", "acme"); !strings.Contains(out, "evt_77") || strings.Contains(out, "evt_42") {
		t.Fatalf("list --tenant acme:\n%s", out)
	}
	crossID := strconv.FormatInt(cross, 10)
	if out, err := run("resolve", crossID, "--tenant", "globex", "--by", "gil", "--note", "ours?"); err == nil {
		t.Fatalf("globex resolved acme's item:\n%s", out)
	}
	if out, err := run("resolve", crossID, "--tenant", "acme", "--by", "ann", "--note", "checked the operation"); err != nil {
		t.Fatalf("resolve in acme: %v\n%s", err, out)
	}
	for _, args := range [][]string{{}, {"frob"}, {"resolve", "1"}, {"resolve", "x", "--by", "a", "--note", "n"}} {
		err := exec.Command(binary, append([]string{"quarantine"}, args...)...).Run()
		if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 2 {
			t.Fatalf("quarantine %v: %v, want exit 2", args, err)
		}
	}
}
