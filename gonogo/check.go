package gonogo

import (
	"context"
	"fmt"
	"time"

	"settle/ledger"
	"settle/target"
)

// Options are the deployment's settings the gate weighs.
type Options struct {
	Now         time.Time
	MaxDrillAge time.Duration // 0: DefaultMaxDrillAge
	Retention   ledger.RetentionPolicy
}

// Check gathers the facts of each contract from ds (the live schema, read
// once, and each target's newest drill) and evaluates them. A schema that
// cannot be read fails the controls that need it, with the reason; a
// drill store that cannot answer is an error.
func Check(ctx context.Context, ds ledger.DrillStore, contracts []*target.Contract, o Options) ([]Report, error) {
	schema, err := ds.SchemaFacts(ctx)
	schemaErr := ""
	if err != nil {
		schemaErr = ledger.ErrorMessage(err)
	}
	reports := make([]Report, 0, len(contracts))
	for _, c := range contracts {
		f := Facts{Contract: c, Now: o.Now, Schema: schema, SchemaErr: schemaErr, MaxDrillAge: o.MaxDrillAge, Retention: o.Retention}
		f.Drill, err = ds.LatestDrill(ctx, c.Name)
		switch {
		case ledger.ErrorCode(err) == ledger.ENotFound:
			f.Drill = nil
		case err != nil:
			return nil, fmt.Errorf("read the last drill of %s: %w", c.Name, err)
		}
		reports = append(reports, Evaluate(f))
	}
	return reports, nil
}
