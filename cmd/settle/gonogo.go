package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"settle/gonogo"
	"settle/target"
)

// gonogoCmd is `settle gonogo`.
type gonogoCmd struct {
	dbOption         `embed:""`
	Contracts        string          `env:"SETTLE_CONTRACTS" help:"target contracts file"`
	Target           string          `help:"evaluate this target only (default: every target)"`
	Format           string          `default:"text" help:"text, or json for machines"`
	MaxDrillAge      retentionPeriod `name:"max-drill-age" default:"${max_drill_age}" help:"a drill older than this no longer counts (e.g. 90d)"`
	retentionOptions `embed:""`
	set              *target.Set
	names            []string
}

// Help is the detail of settle gonogo --help.
func (gonogoCmd) Help() string {
	return `Evaluates the paper's eleven go/no-go controls for every target (or one),
from the contract, the live database's schema, the target's last drill
and the retention rule, and prints one line per control:
PASS|FAIL  #n name — evidence. There is no score: one FAIL is a no-go.
Exit 0 when every control of every target passed, 1 otherwise, 2 on
usage errors.`
}

func (c *gonogoCmd) check() error {
	switch {
	case c.Contracts == "":
		return usagef("--contracts (or SETTLE_CONTRACTS) is required")
	case c.Format != "text" && c.Format != "json":
		return usagef("--format must be text or json, not %q", c.Format)
	case c.MaxDrillAge <= 0:
		return usagef("--max-drill-age must be positive")
	}
	set, err := target.Load(c.Contracts)
	if err != nil {
		return err
	}
	c.set, c.names = set, set.Names()
	if c.Target != "" {
		if _, ok := set.Get(c.Target); !ok {
			return usagef("no target %q in %s (targets: %s)", c.Target, c.Contracts, strings.Join(c.names, ", "))
		}
		c.names = []string{c.Target}
	}
	return nil
}

func (c *gonogoCmd) runLedger(ctx context.Context, e *env, s *services) error {
	st, set, names, stdout := s.store, c.set, c.names, e.stdout
	maxAge, retention, format := time.Duration(c.MaxDrillAge), c.policy(), &c.Format
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
