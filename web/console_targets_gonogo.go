package web

import (
	"context"
	"fmt"

	"settle/gonogo"
	"settle/target"
	"settle/views"
)

// goNoGo evaluates the go/no-go gate for contracts with the same package,
// facts and settings as `settle gonogo`, by target name. It is nil when the
// store failed (logged): the pages then say the gate was not evaluated
// rather than guess.
func (tp *targetPages) goNoGo(ctx context.Context, contracts ...*target.Contract) map[string]gonogo.Report {
	if len(contracts) == 0 {
		return nil
	}
	reports, err := gonogo.Check(ctx, tp.drills, contracts, gonogo.Options{Now: tp.now(), MaxDrillAge: tp.maxDrillAge, Retention: tp.retention})
	if err != nil {
		tp.log.Error("go/no-go not evaluated", "component", "console", "err", err)
		return nil
	}
	out := make(map[string]gonogo.Report, len(reports))
	for _, r := range reports {
		out[r.Target] = r
	}
	return out
}

// verdictText is a report's one-line verdict.
func verdictText(r gonogo.Report) string {
	if r.Go {
		return "GO"
	}
	return fmt.Sprintf("NO-GO: %d of %d controls failed", r.Failed(), len(r.Controls))
}

// goNoGoView is the target page's gate section.
func (tp *targetPages) goNoGoView(r gonogo.Report) *views.GoNoGo {
	age := tp.maxDrillAge
	if age <= 0 {
		age = gonogo.DefaultMaxDrillAge
	}
	v := &views.GoNoGo{Verdict: verdictText(r), Go: r.Go,
		Note: fmt.Sprintf("Every control must pass; there is no score. A drill older than %d days no longer counts (settle drill --target %s), and documentation checked more than 180 days ago fails control 1. The command line shows the same: settle gonogo --target %s.",
			int(age.Hours()/24), r.Target, r.Target)}
	for _, c := range r.Controls {
		v.Controls = append(v.Controls, views.ControlRow{Number: c.Number, Name: c.Name, Pass: c.Pass,
			Verdict: c.Verdict(), Evidence: c.Evidence})
	}
	return v
}
