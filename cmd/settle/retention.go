package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"settle/ledger"
	"settle/reconciler"
)

// retentionDuration is a flag.Value for a retention period: a Go duration
// ("720h") or a whole number of days ("30d"); "0" means never.
type retentionDuration struct{ d *time.Duration }

func (r retentionDuration) String() string {
	if r.d == nil || *r.d == 0 {
		return "0"
	}
	if *r.d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", *r.d/(24*time.Hour))
	}
	return r.d.String()
}

func (r retentionDuration) Set(s string) error {
	d, err := parseRetentionDuration(s)
	if err != nil {
		return err
	}
	*r.d = d
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

// retentionFlags registers the retention policy's flags on fs; the policy
// is filled in as fs parses, and checked with Validate afterwards. The
// owner defaults to $SETTLE_RETENTION_OWNER.
func retentionFlags(fs *flag.FlagSet) *ledger.RetentionPolicy {
	p := &ledger.RetentionPolicy{Owner: os.Getenv("SETTLE_RETENTION_OWNER")}
	fs.StringVar(&p.Owner, "retention-owner", p.Owner,
		"team or person who owns retention and deletion of settle's data (env SETTLE_RETENTION_OWNER)")
	fs.Var(retentionDuration{&p.RedactPayloadsAfter}, "redact-payloads-after",
		"redact the payload of operations final for this long (e.g. 30d; 0 = never; the hash stays)")
	fs.Var(retentionDuration{&p.DeleteOperationsAfter}, "delete-operations-after",
		"delete operations final for this long, with their events (e.g. 400d; 0 = never; at least redact-payloads-after)")
	fs.Var(retentionDuration{&p.PurgeReviewedAfter}, "purge-reviewed-after",
		"delete quarantine items resolved, and webhook deliveries processed, this long ago (e.g. 90d; 0 = never)")
	return p
}

// checkRetention validates the parsed policy; the error is one line naming
// the flag, for start-up.
func checkRetention(cmd string, p *ledger.RetentionPolicy, stderr io.Writer) error {
	if err := p.Validate(); err != nil {
		fmt.Fprintf(stderr, "settle %s: --%s\n", cmd, ledger.ErrorMessage(err))
		return errUsage
	}
	return nil
}

const purgeUsage = `usage: settle purge [--dry-run] [retention flags] [--database-url URL]

Applies the retention policy once and prints, per kind, how many rows went;
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

D is a Go duration (720h) or whole days (30d); 0 means never.
`

// purge runs `settle purge`.
func purge(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := withUsage(flag.NewFlagSet("settle purge", flag.ContinueOnError), purgeUsage)
	dbURL := dbFlag(fs)
	dry := fs.Bool("dry-run", false, "print what would go; change nothing")
	policy := retentionFlags(fs)
	if err := parse(fs, args, stdout, stderr); err != nil {
		return err
	}
	if err := checkRetention("purge", policy, stderr); err != nil {
		return err
	}
	if !policy.Enabled() {
		fmt.Fprintln(stderr, "settle purge: no rule given: set --redact-payloads-after, --delete-operations-after or --purge-reviewed-after")
		return errUsage
	}
	st, _, err := openStore(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	var counts ledger.RetentionCounts
	verb := "removed"
	if *dry {
		verb = "would remove"
		counts, err = st.CountRetention(ctx, policy.Cutoffs(time.Now()))
	} else {
		var rep reconciler.RetentionReport
		rep, err = (&reconciler.Retention{Store: st, Policy: *policy}).Pass(ctx)
		counts = rep.Counts
	}
	// What went before an error is still reported.
	if werr := printCounts(stdout, fmt.Sprintf("settle purge: %s (%s)", verb, policy), counts, retentionKinds); werr != nil {
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
