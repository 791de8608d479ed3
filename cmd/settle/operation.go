package main

import (
	"context"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"settle/ledger"
)

const operationUsage = `usage: settle operation show --tenant NAME REF

  REF is an operation id, intent reference, remote key or remote reference.
  Prints each matching operation of the tenant and its event log — never the payload.
`

// operation shows an operation and its timeline for on-call work before
// (and besides) the console.
func operation(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprint(stdout, operationUsage)
		return errHelp
	}
	if len(args) == 0 || args[0] != "show" {
		fmt.Fprint(stderr, operationUsage)
		return errUsage
	}
	fs := withUsage(flag.NewFlagSet("settle operation show", flag.ContinueOnError), operationUsage)
	dbURL := dbFlag(fs)
	tenant := fs.String("tenant", "", "the operation's tenant (required)")
	pos, err := parseInterspersed(fs, args[1:], stdout, stderr)
	if err != nil {
		return err
	}
	if *tenant == "" || len(pos) != 1 {
		fmt.Fprint(stderr, operationUsage)
		return errUsage
	}
	store, _, err := openStore(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	ops, err := store.Find(ctx, *tenant, pos[0])
	if err != nil {
		return err
	}
	if len(ops) == 0 {
		return ledger.Errorf(ledger.ENotFound, "no operation of tenant %s has that reference", *tenant)
	}
	for i, op := range ops {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		evs, err := store.Events(ctx, op.Tenant, op.ID)
		if err != nil {
			return err
		}
		printOperation(stdout, op, evs)
	}
	return nil
}

func printOperation(w io.Writer, op ledger.Operation, evs []ledger.Event) {
	t := func(p *time.Time) string {
		if p == nil {
			return "-"
		}
		return p.Format(time.RFC3339)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, row := range [][2]string{
		{"operation", shown(op.ID)}, {"tenant", shown(op.Tenant)}, {"target", shown(op.Target)}, {"type", shown(op.Type)},
		{"intent_ref", shown(op.IntentRef)}, {"state", fmt.Sprintf("%s (%s)", shown(string(op.State)), op.State.Plain(""))},
		{"reason", dash(op.Reason)}, {"remote_key", shown(op.RemoteKey)}, {"remote_ref", dash(op.RemoteRef)},
		{"payload_sha256", hex.EncodeToString(op.PayloadHash)}, {"fence", fmt.Sprint(op.Fence)},
		{"attempts", fmt.Sprint(op.Attempts)}, {"created", op.CreatedAt.Format(time.RFC3339)},
		{"first_claimed", t(op.FirstClaimedAt)}, {"last_sent", t(op.LastSentAt)},
		{"retry_window", replayWindow(op)}, {"retry_window_end", op.RetryWindowEnd.Format(time.RFC3339)},
		{"deadline", t(op.Deadline)}, {"next_reconcile", t(op.NextReconcileAt)}, {"lease_expires", t(op.LeaseExpiresAt)},
	} {
		fmt.Fprintf(tw, "%s\t%s\n", row[0], row[1])
	}
	_ = tw.Flush()
	fmt.Fprintln(w, "\nevents:")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AT\tFROM\tTO\tFENCE\tACTOR\tREASON\tEVIDENCE")
	for _, e := range evs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", e.At.Format(time.RFC3339Nano), dash(string(e.From)),
			shown(string(e.To)), e.Fence, shown(e.Actor), dash(e.Reason), shown(string(e.Evidence)))
	}
	_ = tw.Flush()
}

// replayWindow describes the replay window's length and where it starts: the
// first claim, or creation for an operation claimed before settle recorded
// its first claim (its window was counted from creation).
func replayWindow(op ledger.Operation) string {
	switch {
	case op.RetryWindow == 0:
		return "none (no same-key replay)"
	case op.FirstClaimedAt != nil && op.RetryWindowEnd.Before(op.FirstClaimedAt.Add(op.RetryWindow)):
		return op.RetryWindow.String() + " from the first claim, ended early: a replay was answered \"did nothing\""
	case op.FirstClaimedAt != nil:
		return op.RetryWindow.String() + " from the first claim"
	case op.State == ledger.Prepared:
		return op.RetryWindow.String() + " from the first claim (not claimed yet)"
	}
	return op.RetryWindow.String() + " from creation"
}
