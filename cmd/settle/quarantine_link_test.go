package main

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"settle/ledger"
)

// settle quarantine link is the console's link through resolve.Quarantine:
// on both stores it records the link as the item's resolution and as an
// action of cli:NAME in role owner, and refuses what the console refuses,
// in its words, with exit 1, one line and nothing changed.
func TestQuarantineCLI_Link(t *testing.T) {
	t.Parallel()
	for name, db := range map[string]func(t *testing.T) string{
		"SQLite":   func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "settle.db") },
		"Postgres": schemaURL,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testQuarantineLink(t, db(t))
		})
	}
}

func testQuarantineLink(t *testing.T, db string) {
	ctx := context.Background()
	st, _, err := openStoreWith(ctx, db, true, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	newOp := func(tenant, ref string) ledger.Operation {
		t.Helper()
		op, _, err := st.Create(ctx, ledger.NewOperation{Tenant: tenant, Type: "charge", Target: "payments", IntentRef: ref,
			Payload: []byte(`{"amount":1}`), RetryWindow: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		return op
	}
	ours, theirs := newOp("acme", "order-1"), newOp("globex", "order-9")
	item, err := st.Quarantine(ctx, ledger.QuarantineItem{Target: "payments", Reason: "the object names no operation",
		EventID: "evt_1", Tenant: "acme", Reference: "order-1", RemoteID: "ch_1"})
	if err != nil {
		t.Fatal(err)
	}
	stray, err := st.Quarantine(ctx, ledger.QuarantineItem{Target: "payments", Reason: "the object names no tenant", EventID: "evt_2"})
	if err != nil {
		t.Fatal(err)
	}
	id := strconv.FormatInt(item, 10)
	dir := t.TempDir()
	link := func(args ...string) (int, string, string) {
		t.Helper()
		return runIn(t, dir, nil, append([]string{"quarantine", "link", "--database-url", db, "--by", "alice"}, args...)...)
	}
	open := func() {
		t.Helper()
		q, err := st.QuarantineItem(ctx, "acme", item)
		if err != nil || q.ResolvedAt != nil {
			t.Fatalf("the item changed: %+v %v", q, err)
		}
		if as, err := st.Actions(ctx, ledger.ActionFilter{Tenant: "acme"}); err != nil || len(as) != 0 {
			t.Fatalf("actions recorded: %+v %v", as, err)
		}
	}
	refusals := []struct {
		name string
		args []string
		want string
	}{
		{"AnotherTenantsOperation", []string{"--id", id, "--operation", theirs.ID, "--reason", "same charge"},
			"No operation of tenant acme has that id or reference."},
		{"AnotherTenantsOperationNamingTheTenant", []string{"--tenant", "acme", "--id", id, "--operation", theirs.ID, "--reason", "same charge"},
			"No operation of tenant acme has that id or reference."},
		{"UnknownOperation", []string{"--id", id, "--operation", "3f0c9a6e-0000-4000-8000-000000000000", "--reason", "same charge"},
			"No operation of tenant acme has that id or reference."},
		{"NoOperation", []string{"--id", id, "--reason", "same charge"}, "Name the operation: its id or one of its references."},
		{"NoReason", []string{"--id", id, "--operation", ours.ID}, "Give the reason the event belongs to the operation: "},
		{"UnknownItem", []string{"--id", "999999", "--operation", ours.ID, "--reason", "x"}, "no such quarantined event"},
		{"ItemOfAnotherTenant", []string{"--tenant", "globex", "--id", id, "--operation", theirs.ID, "--reason", "x"}, "no such quarantined event"},
		{"Unattributed", []string{"--id", strconv.FormatInt(stray, 10), "--operation", ours.ID, "--reason", "x"},
			"An event of no tenant cannot be linked to an operation."},
	}
	for _, r := range refusals {
		code, out, errOut := link(r.args...)
		if code != 1 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "settle quarantine: "+r.want) {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q; want exit 1 and %q", r.name, code, out, errOut, r.want)
		}
		open()
	}

	// Named by one of its references, as a person pastes it.
	code, out, errOut := link("--id", id, "--operation", "order-1", "--reason", "the webhook of the first charge")
	if code != 0 || out != "linked "+id+" to operation "+ours.ID+"\n" {
		t.Fatalf("link: exit %d\n%s%s", code, out, errOut)
	}
	q, err := st.QuarantineItem(ctx, "acme", item)
	if err != nil || q.ResolvedAt == nil || q.ResolvedAs != ledger.QuarantineLinked || q.OperationID != ours.ID ||
		q.ResolvedBy != "cli:alice" || q.ResolvedByRole != "owner" || q.Resolution != "the webhook of the first charge" {
		t.Fatalf("the item: %+v %v", q, err)
	}
	as, err := st.Actions(ctx, ledger.ActionFilter{Tenant: "acme"})
	if err != nil || len(as) != 1 || as[0].Kind != ledger.ActionQuarantineLink || as[0].Object != id ||
		as[0].OperationID != ours.ID || as[0].Subject != "cli:alice" || as[0].Role != "owner" || as[0].Reason != "the webhook of the first charge" {
		t.Fatalf("the action: %+v %v", as, err)
	}

	// Again, with or without the tenant: refused as resolved, saying how.
	for _, args := range [][]string{{"--id", id}, {"--tenant", "acme", "--id", id}} {
		code, out, errOut = link(append(args, "--operation", ours.ID, "--reason", "again")...)
		want := "settle quarantine: This event has already been resolved. It was linked to operation " + ours.ID + " by alice at "
		if code != 1 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, want) {
			t.Fatalf("linking again %v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	if as, _ := st.Actions(ctx, ledger.ActionFilter{Tenant: "acme"}); len(as) != 1 {
		t.Fatalf("linking again recorded an action: %+v", as)
	}
	// And dismissing it after the link says so too.
	code, _, errOut = runIn(t, dir, nil, "quarantine", "resolve", id, "--database-url", db, "--by", "bob", "--note", "noise")
	if code != 1 || !strings.Contains(errOut, "already been resolved. It was linked to operation "+ours.ID) {
		t.Fatalf("resolve after link: exit %d %q", code, errOut)
	}

	// What is not a usage is exit 2, before the store.
	for _, args := range [][]string{{"--operation", ours.ID, "--reason", "x"}, {"--id", "x", "--operation", ours.ID, "--reason", "x"}} {
		if code, _, _ := link(args...); code != 2 {
			t.Fatalf("link %v: exit %d, want 2", args, code)
		}
	}
}
