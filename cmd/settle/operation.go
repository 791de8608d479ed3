package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"settle/ledger"
)

// operationCmd is `settle operation`: on-call work on one operation before
// (and besides) the console.
type operationCmd struct {
	Show operationShow `cmd:"" help:"print each matching operation of the tenant and its event log, never the payload"`
}

type operationShow struct {
	Ref      string `arg:"" help:"an operation id, intent reference, remote key or remote reference"`
	dbOption `embed:""`
	Tenant   string `help:"the operation's tenant (required)"`
}

func (c *operationShow) check() error {
	if c.Tenant == "" {
		return usagef("--tenant is required")
	}
	return nil
}

func (c *operationShow) runLedger(ctx context.Context, e *env, s *services) error {
	store, stdout, tenant := s.store, e.stdout, &c.Tenant
	pos := []string{c.Ref}
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
