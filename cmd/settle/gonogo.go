package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"settle/gonogo"
	"settle/target"
)

const gonogoUsage = `usage: settle gonogo [--contracts FILE] [--target NAME] [--format text|json] [--database-url URL]
                     [--max-drill-age 90d] [--retention-owner TEAM --redact-payloads-after 30d ...]

  Evaluates the paper's eleven go/no-go controls for every target (or one),
  from the contract, the live database's schema, the target's last drill
  and the retention rule, and prints one line per control:
  PASS|FAIL  #n name — evidence. There is no score: one FAIL is a no-go.
  Exit 0 when every control of every target passed, 1 otherwise, 2 on
  usage errors.
`

// runGonogo runs `settle gonogo`.
func runGonogo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := withUsage(flag.NewFlagSet("settle gonogo", flag.ContinueOnError), gonogoUsage)
	dbURL := dbFlag(fs)
	contracts := fs.String("contracts", os.Getenv("SETTLE_CONTRACTS"), "target contracts file (env SETTLE_CONTRACTS)")
	name := fs.String("target", "", "evaluate this target only (default: every target)")
	format := fs.String("format", "text", "text, or json for machines")
	maxAge := gonogo.DefaultMaxDrillAge
	fs.Var(retentionDuration{&maxAge}, "max-drill-age", "a drill older than this no longer counts (e.g. 90d)")
	retention := retentionFlags(fs)
	if err := parse(fs, args, stdout, stderr); err != nil {
		return err
	}
	switch {
	case *contracts == "":
		fmt.Fprintln(stderr, "settle gonogo: --contracts (or SETTLE_CONTRACTS) is required")
		return errUsage
	case *format != "text" && *format != "json":
		fmt.Fprintf(stderr, "settle gonogo: --format must be text or json, not %q\n", *format)
		return errUsage
	case maxAge <= 0:
		fmt.Fprintln(stderr, "settle gonogo: --max-drill-age must be positive")
		return errUsage
	}
	set, err := target.Load(*contracts)
	if err != nil {
		return err
	}
	names := set.Names()
	if *name != "" {
		if _, ok := set.Get(*name); !ok {
			fmt.Fprintf(stderr, "settle gonogo: no target %q in %s (targets: %s)\n", *name, *contracts, strings.Join(names, ", "))
			return errUsage
		}
		names = []string{*name}
	}
	st, _, err := openStore(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	list := make([]*target.Contract, len(names))
	for i, n := range names {
		list[i], _ = set.Get(n)
	}
	reports, err := gonogo.Check(ctx, st, list, gonogo.Options{Now: time.Now(), MaxDrillAge: maxAge, Retention: *retention})
	if err != nil {
		return err
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(reports); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
	} else {
		printGonogo(stdout, reports)
	}
	var nogo []string
	for _, r := range reports {
		if !r.Go {
			nogo = append(nogo, fmt.Sprintf("%s (%d failed)", r.Target, r.Failed()))
		}
	}
	if len(nogo) > 0 {
		return fmt.Errorf("no-go for %s", strings.Join(nogo, ", "))
	}
	return nil
}

// printGonogo writes each target's verdict and one line per control.
func printGonogo(w io.Writer, reports []gonogo.Report) {
	for i, r := range reports {
		if i > 0 {
			fmt.Fprintln(w)
		}
		verdict := "GO"
		if !r.Go {
			verdict = fmt.Sprintf("NO-GO (%d of %d controls failed)", r.Failed(), len(r.Controls))
		}
		fmt.Fprintf(w, "target %s: %s\n", shown(r.Target), verdict)
		for _, c := range r.Controls {
			fmt.Fprintf(w, "%s  #%d %s — %s\n", c.Verdict(), c.Number, c.Name, shown(c.Evidence))
		}
	}
}
