package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"settle/ledger"
)

// knownPeople gives each subject a console session in the store at db, as
// a verified sign-in would: the CLI's --as accepts only people settle knows.
func knownPeople(t *testing.T, db string, subjects ...string) {
	t.Helper()
	ctx := context.Background()
	st, _, err := openStoreWith(ctx, db, true, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	for _, s := range subjects {
		h := sha256.Sum256([]byte("session of " + s))
		if err := st.CreateSession(ctx, ledger.Session{IDHash: h[:], Subject: s, Name: s, CreatedAt: now,
			LastSeenAt: now, IdleExpiresAt: now.Add(time.Hour), ExpiresAt: now.Add(2 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
}

// escalatedOp registers an operation of acme and escalates it, as the
// executor does with an answer it cannot use.
func escalatedOp(t *testing.T, st store, key string) ledger.Operation {
	t.Helper()
	ctx := context.Background()
	op, _, err := st.Create(ctx, ledger.NewOperation{Tenant: "acme", Type: "charge", Target: "payments", IntentRef: key,
		Payload: []byte(`{"amount":1}`), RetryWindow: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	held, err := st.Claim(ctx, "acme", op.ID, op.PayloadHash, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	op, err = st.Record(ctx, ledger.Outcome{Tenant: "acme", OperationID: op.ID, Fence: held.Fence,
		From: ledger.InFlight, To: ledger.Escalated, Actor: ledger.ActorExecutor, Reason: "inconclusive answer"})
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// The CLI's two-person rule counts verified people, not free text: the
// person is the OS user acting --as a console person settle knows,
// normalised as the console's sign-in does, so neither a trailing space
// nor naming the console proposer gets a proposal approved by its author.
func TestEscalation_CLIActsAsKnownPerson(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := "sqlite:" + filepath.Join(t.TempDir(), "settle.db")
	knownPeople(t, db, "oidc:alice", "oidc:bob")
	st, _, err := openStore(ctx, db, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	me, err := user.Current()
	if err != nil {
		t.Skip("no OS user:", err)
	}
	cli := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := execute(ctx, append(append([]string{"escalation"}, args...), "--tenant", "acme", "--database-url", db), &out, &out)
		return out.String(), err
	}
	refused := func(what string, want ledger.Code, args ...string) {
		t.Helper()
		if out, err := cli(args...); ledger.ErrorCode(err) != want {
			t.Fatalf("%s: want %s, got %v\n%s", what, want, err, out)
		}
	}

	// A proposal made in the console by own1.
	op := escalatedOp(t, st, "by-console")
	own1 := ledger.NewContextWithActor(ctx, ledger.Actor{Subject: "oidc:own1", Name: "Own One", Role: "owner"})
	r, err := st.Propose(own1, ledger.Resolution{Tenant: "acme", OperationID: op.ID, To: ledger.FailedTerminal,
		Reason: "the provider never saw it"})
	if err != nil {
		t.Fatal(err)
	}
	id := func(r ledger.Resolution) string { return strconv.FormatInt(r.ID, 10) }
	refused("own1 approving their console proposal", ledger.EForbidden, "approve", id(r), "--as", "oidc:own1")
	refused("own1, padded", ledger.EForbidden, "approve", id(r), "--as", " oidc:own1 ")
	refused("a person settle does not know", ledger.EInvalid, "approve", id(r), "--as", "oidc:mallory")
	refused("a known person of another kind", ledger.EInvalid, "approve", id(r), "--as", "cli:bob")
	var usage *usageError
	if _, err := cli("approve", id(r), "--by", "bob"); !errors.As(err, &usage) || !strings.Contains(usage.msg, "--as") {
		t.Fatalf("--by: %v", err)
	}
	if out, err := cli("approve", id(r), "--as", "oidc:bob"); err != nil || !strings.Contains(out, "FAILED_TERMINAL") {
		t.Fatalf("approve by bob: %v\n%s", err, out)
	}
	rs, err := st.Resolutions(ctx, "acme", false)
	if err != nil || len(rs) != 1 || rs[0].DecidedBy != "cli:"+me.Username+" as oidc:bob" || rs[0].DecidedByName != "oidc:bob" {
		t.Fatalf("recorded decision: %+v %v", rs, err)
	}

	// A proposal from the CLI as "alice " cannot be approved as "alice".
	op = escalatedOp(t, st, "by-cli")
	out, err := cli("propose", op.ID, "--kind", "not-applied", "--reason", "not at the provider", "--as", "oidc:alice ")
	if err != nil {
		t.Fatalf("propose: %v\n%s", err, out)
	}
	pid := regexp.MustCompile(`proposal (\d+)`).FindStringSubmatch(out)[1]
	refused("alice approving her own, unpadded", ledger.EForbidden, "approve", pid, "--as", "oidc:alice")
	if out, err := cli("approve", pid, "--as", "oidc:own1"); err != nil {
		t.Fatalf("own1, known from their console action, approves: %v\n%s", err, out)
	}
}
