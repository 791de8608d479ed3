package main

import (
	"context"
	"flag"
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

const drillUsage = `usage: settle drill --target NAME [--contracts FILE] [--database-url URL] [--tenant drill] [--payload FILE]

  Runs the paper's six fault-injection tests, and a seventh for legitimate
  repeats, against the target its contract names (the simulator or a
  vendor's sandbox), injecting the faults on settle's own side of the
  connection. Uses operations of the drill tenant only, and never claims
  another tenant's. Stores the results for settle gonogo and prints them.
  Exit 0 when every test passed, 1 when any failed, 2 on usage errors.
`

// oneTarget is the start of a command about one target of a contracts
// file (settle drill, settle audit): both flags given, the file valid, the
// target in it, and the credentials its contracts name read from the
// environment. A usage problem is explained on stderr (errUsage).
func oneTarget(cmd, contracts, name string, stderr io.Writer) (*target.Set, *target.Contract, *target.Secrets, error) {
	switch {
	case name == "":
		fmt.Fprintf(stderr, "settle %s: --target is required\n", cmd)
		return nil, nil, nil, errUsage
	case contracts == "":
		fmt.Fprintf(stderr, "settle %s: --contracts (or SETTLE_CONTRACTS) is required\n", cmd)
		return nil, nil, nil, errUsage
	}
	set, err := target.Load(contracts)
	if err != nil {
		return nil, nil, nil, err
	}
	c, ok := set.Get(name)
	if !ok {
		fmt.Fprintf(stderr, "settle %s: no target %q in %s (targets: %s)\n", cmd, name, contracts, strings.Join(set.Names(), ", "))
		return nil, nil, nil, errUsage
	}
	credentials, err := target.ReadSecrets(set, os.Getenv)
	if err != nil {
		return nil, nil, nil, err
	}
	return set, c, credentials, nil
}

// runDrill runs `settle drill`.
func runDrill(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := withUsage(flag.NewFlagSet("settle drill", flag.ContinueOnError), drillUsage)
	dbURL := dbFlag(fs)
	contracts := fs.String("contracts", os.Getenv("SETTLE_CONTRACTS"), "target contracts file (env SETTLE_CONTRACTS)")
	name := fs.String("target", "", "the target to drill (required)")
	tenant := fs.String("tenant", "drill", "the dedicated tenant whose operations the drill creates")
	payloadFile := fs.String("payload", "", "a JSON object used as every drill operation's approved payload (default: a small charge the simulator takes)")
	if err := parse(fs, args, stdout, stderr); err != nil {
		return err
	}
	_, c, credentials, err := oneTarget("drill", *contracts, *name, stderr)
	if err != nil {
		return err
	}
	var payload []byte
	if *payloadFile != "" {
		if payload, err = os.ReadFile(*payloadFile); err != nil {
			return fmt.Errorf("read --payload: %w", err)
		}
	}
	st, _, err := openStore(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	results, err := drill.Run(ctx, drill.Config{
		Store: st, Contract: c, Secrets: credentials, Params: st, Tenant: *tenant, Payload: payload,
		Version: buildVersion(),
		Log:     slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	printDrill(stdout, c.Name, results)
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
		return fmt.Errorf("%d of %d drill tests failed against target %s", failed, len(results), c.Name)
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
