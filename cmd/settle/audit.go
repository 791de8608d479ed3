package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"settle/reconciler"
)

// auditCmd runs `settle audit`: one full pass of the auditor over one
// target's final (SUCCEEDED and FAILED_TERMINAL) operations. It prints a
// summary line and one line per finding, and fails (exit 1) unless the pass
// was complete and clean, so that a drill or a deployment can gate on it.
type auditCmd struct {
	dbOption      `embed:""`
	targetOptions `embed:""`
}

// Help is the detail of settle audit --help.
func (auditCmd) Help() string {
	return `One full audit pass over the target's SUCCEEDED and FAILED_TERMINAL
operations (duplicates, losses, phantoms): exit 0 when clean, 1 on any
finding or failed lookup, 2 on usage errors.`
}

func (c *auditCmd) check() error { return c.load() }

func (c *auditCmd) runLedger(ctx context.Context, e *env, s *services) error {
	a := &reconciler.Auditor{Audit: s.store, Contracts: c.set, Client: targetClient(c.credentials, s.store),
		Log: slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	stdout, name := e.stdout, &c.Target
	rep, err := a.AuditTarget(ctx, *name)
	if err != nil {
		return err
	}
	printReport(stdout, rep)
	switch {
	case rep.Skipped != "":
		return fmt.Errorf("target %s was not audited: %s", rep.Target, rep.Skipped)
	case len(rep.Findings) > 0:
		return fmt.Errorf("%d duplicate(s), %d loss(es) and %d phantom(s) found in target %s",
			rep.Duplicates, rep.Losses, rep.Phantoms, rep.Target)
	case rep.LookupsFailed > 0:
		return fmt.Errorf("%d lookup(s) failed: the audit of target %s is incomplete", rep.LookupsFailed, rep.Target)
	}
	return nil
}

// printReport writes the summary line, then one line per finding and per
// failed lookup.
func printReport(w io.Writer, rep reconciler.Report) {
	if rep.Skipped != "" {
		fmt.Fprintf(w, "audit %s: skipped: %s\n", shown(rep.Target), shown(rep.Skipped))
		return
	}
	fmt.Fprintf(w, "audit %s: %d checked, %d duplicates, %d losses, %d phantoms, %d lookups failed, %d too recent to judge a loss; %d new findings\n",
		shown(rep.Target), rep.Checked, rep.Duplicates, rep.Losses, rep.Phantoms, rep.LookupsFailed, rep.TooRecent, rep.NewFindings)
	for _, f := range rep.Findings {
		ids := make([]string, len(f.RemoteIDs))
		for i, id := range f.RemoteIDs {
			ids[i] = shown(id)
		}
		state := "already open"
		if f.New {
			state = "new"
		}
		fmt.Fprintf(w, "%s tenant=%s operation=%s remote_ref=%s remote_ids=%s (%s)\n",
			shown(string(f.Kind)), shown(f.Tenant), shown(f.OperationID), dash(f.RemoteRef), dash(strings.Join(ids, ",")), state)
	}
	for _, lf := range rep.LookupFailures {
		fmt.Fprintf(w, "lookup failed tenant=%s operation=%s: %s\n", shown(lf.Tenant), shown(lf.OperationID), shown(lf.Reason))
	}
}
