package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"settle/ledger"
	"settle/reconciler"
)

// retentionPeriod is a retention period as the flags take it: a Go
// duration ("720h") or a whole number of days ("30d"); "0" means never.
type retentionPeriod time.Duration

func (r retentionPeriod) String() string {
	d := time.Duration(r)
	if d == 0 {
		return "0"
	}
	if d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return d.String()
}

// UnmarshalText reads a period for kong.
func (r *retentionPeriod) UnmarshalText(b []byte) error {
	d, err := parseRetentionDuration(string(b))
	if err != nil {
		return err
	}
	*r = retentionPeriod(d)
	return nil
}

// parseRetentionDuration reads "30d" as 30 days, anything else as a Go
// duration ("0" is never).
func parseRetentionDuration(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > 100*365 {
			return 0, fmt.Errorf("want a whole number of days such as 30d, or a duration such as 720h")
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("want a whole number of days such as 30d, or a duration such as 720h")
	}
	return d, nil
}

// retentionOptions are the retention policy's flags (settle serve, purge
// and gonogo); policy is the policy they give, checked with Validate.
type retentionOptions struct {
	RetentionOwner        string          `name:"retention-owner" env:"SETTLE_RETENTION_OWNER" help:"team or person who owns retention and deletion of settle's data"`
	RedactPayloadsAfter   retentionPeriod `name:"redact-payloads-after" default:"0" help:"redact the payload of operations final for this long (e.g. 30d; 0 = never; the hash stays)"`
	DeleteOperationsAfter retentionPeriod `name:"delete-operations-after" default:"0" help:"delete operations final for this long, with their events (e.g. 400d; 0 = never; at least redact-payloads-after)"`
	PurgeReviewedAfter    retentionPeriod `name:"purge-reviewed-after" default:"0" help:"delete quarantine items resolved, and webhook deliveries processed, this long ago (e.g. 90d; 0 = never)"`
}

func (o retentionOptions) policy() *ledger.RetentionPolicy {
	return &ledger.RetentionPolicy{Owner: o.RetentionOwner, RedactPayloadsAfter: time.Duration(o.RedactPayloadsAfter),
		DeleteOperationsAfter: time.Duration(o.DeleteOperationsAfter), PurgeReviewedAfter: time.Duration(o.PurgeReviewedAfter)}
}

// checkRetention validates the policy; the error names the flag.
func (o retentionOptions) checkRetention() error {
	if err := o.policy().Validate(); err != nil {
		return usagef("--%s", ledger.ErrorMessage(err))
	}
	return nil
}

// purgeCmd is `settle purge`.
type purgeCmd struct {
	dbOption         `embed:""`
	DryRun           bool `name:"dry-run" help:"print what would go; change nothing"`
	retentionOptions `embed:""`
}

// Help is the detail of settle purge --help.
func (purgeCmd) Help() string {
	return `Applies the retention policy once and prints, per kind, how many rows went;
with --dry-run, how many would go, changing nothing. The policy is given by
the same flags as settle serve's background retention loop:

  --redact-payloads-after D    payloads of operations final for D are replaced
                               by an empty marker; the hash stays, so a repeated
                               registration is still checked against it
  --delete-operations-after D  operations final for D are deleted with their
                               events, notifications, decided resolutions,
                               acknowledged findings and payload conflicts
  --purge-reviewed-after D     quarantine items resolved, and webhook deliveries
                               processed, D ago are deleted

D is a Go duration (720h) or whole days (30d); 0 means never.`
}

func (c *purgeCmd) check() error {
	if err := c.checkRetention(); err != nil {
		return err
	}
	if !c.policy().Enabled() {
		return usagef("no rule given: set --redact-payloads-after, --delete-operations-after or --purge-reviewed-after")
	}
	return nil
}

func (c *purgeCmd) runLedger(ctx context.Context, e *env, s *services) error {
	st, policy := s.store, c.policy()
	var (
		counts ledger.RetentionCounts
		err    error
	)
	verb := "removed"
	if c.DryRun {
		verb = "would remove"
		counts, err = st.CountRetention(ctx, policy.Cutoffs(time.Now()))
	} else {
		var rep reconciler.RetentionReport
		rep, err = (&reconciler.Retention{Store: st, Policy: *policy}).Pass(ctx)
		counts = rep.Counts
	}
	// What went before an error is still reported.
	if werr := printCounts(e.stdout, fmt.Sprintf("settle purge: %s (%s)", verb, policy), counts, retentionKinds); werr != nil {
		return werr
	}
	return err
}

// retentionKinds are the kinds a retention pass touches, in print order.
var retentionKinds = []string{"payloads_redacted", "operations", "events", "notifications", "findings",
	"resolutions", "conflicts", "quarantine", "deliveries"}

// printCounts prints a heading and one KIND COUNT line per kind listed.
func printCounts(w io.Writer, heading string, c ledger.RetentionCounts, kinds []string) error {
	fmt.Fprintln(w, heading)
	by := map[string]int{}
	for _, k := range c.Kinds() {
		by[k.Kind] = k.Count
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, k := range kinds {
		fmt.Fprintf(tw, "  %s\t%d\n", k, by[k])
	}
	return tw.Flush()
}
