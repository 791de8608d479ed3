package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"text/tabwriter"

	"settle/drill"
	"settle/ledger"
	"settle/target"
)

// targetOptions name one target of a contracts file (settle drill,
// settle audit): load checks both are given, the file valid, the target in
// it, and reads the credentials its contracts name from the environment.
type targetOptions struct {
	Contracts   string `env:"SETTLE_CONTRACTS" help:"target contracts file"`
	Target      string `help:"the target (required)"`
	set         *target.Set
	contract    *target.Contract
	credentials *target.Secrets
}

func (o *targetOptions) load() error {
	switch {
	case o.Target == "":
		return usagef("--target is required")
	case o.Contracts == "":
		return usagef("--contracts (or SETTLE_CONTRACTS) is required")
	}
	set, err := target.Load(o.Contracts)
	if err != nil {
		return err
	}
	c, ok := set.Get(o.Target)
	if !ok {
		return usagef("no target %q in %s (targets: %s)", o.Target, o.Contracts, strings.Join(set.Names(), ", "))
	}
	credentials, err := target.ReadSecrets(set, os.Getenv)
	if err != nil {
		return err
	}
	o.set, o.contract, o.credentials = set, c, credentials
	return nil
}

// drillCmd is `settle drill`.
type drillCmd struct {
	dbOption      `embed:""`
	targetOptions `embed:""`
	Tenant        string `default:"drill" help:"the dedicated tenant whose operations the drill creates"`
	Payload       string `help:"a JSON object used as every drill operation's approved payload (default: a small charge the simulator takes)"`
	payload       []byte
}

// Help is the detail of settle drill --help.
func (drillCmd) Help() string {
	return `Runs the paper's six fault-injection tests, and a seventh for legitimate
repeats, against the target its contract names (the simulator or a
vendor's sandbox), injecting the faults on settle's own side of the
connection. Uses operations of the drill tenant only, and never claims
another tenant's. Stores the results for settle gonogo and prints them.
Exit 0 when every test passed, 1 when any failed, 2 on usage errors.`
}

func (c *drillCmd) check() error {
	if err := c.load(); err != nil {
		return err
	}
	if c.Payload != "" {
		var err error
		if c.payload, err = os.ReadFile(c.Payload); err != nil {
			return fmt.Errorf("read --payload: %w", err)
		}
	}
	return nil
}

func (c *drillCmd) runLedger(ctx context.Context, e *env, s *services) error {
	st := s.store
	results, err := drill.Run(ctx, drill.Config{
		Store: st, Contract: c.contract, Secrets: c.credentials, Params: st, Tenant: c.Tenant, Payload: c.payload,
		Version: buildVersion(),
		Log:     slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	printDrill(e.stdout, c.contract.Name, results)
	if err != nil {
		return err
	}
	failed := 0
	for _, r := range results {
		if !r.Passed {
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d drill tests failed against target %s", failed, len(results), c.contract.Name)
	}
	return nil
}

// printDrill writes the result table: one row per test.
func printDrill(w io.Writer, name string, results []ledger.DrillResult) {
	if len(results) == 0 {
		return
	}
	fmt.Fprintf(w, "drill %s run %s at %s\n", shown(name), results[0].RunID, results[0].RanAt.Format("2006-01-02 15:04:05Z07:00"))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range results {
		verdict := "PASS"
		switch {
		case r.NotApplicable && r.Passed:
			verdict = "N/A (pass)"
		case r.NotApplicable:
			verdict = "N/A (FAIL)"
		case !r.Passed:
			verdict = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t#%d %s\t%s\n", verdict, r.Number, r.Name, shown(r.Reason))
	}
	tw.Flush()
}

// buildVersion is the settle build: the module version and VCS revision
// the binary was built from, "" when the build recorded neither.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v += " " + s.Value
		case "vcs.modified":
			if s.Value == "true" {
				v += " (modified)"
			}
		}
	}
	return strings.TrimSpace(v)
}
