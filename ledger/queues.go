package ledger

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
)

// OperationLister lists a tenant's operations (Store.List).
type OperationLister interface {
	List(ctx context.Context, f ListFilter) (Page, error)
}

// FigureSource is what Figures reads: the transitions, the refused payload
// conflicts, the audit's findings and the ESCALATED operations.
type FigureSource interface {
	FigureStore
	OperationLister
	PayloadConflicts(ctx context.Context, tenant string, w Window) (int, error)
	CountFindings(ctx context.Context, tenant string, kind FindingKind, w Window) (int, error)
}

// Figures assembles a tenant's manager figures over the window w (EInvalid
// unless w.Validate passes): the per-target figures (from the daily
// rollups when s keeps them and w is whole UTC days, otherwise from the
// transitions; the same numbers either way), its payload conflicts and
// duplicates found by audit in w, and its open escalations now with the
// oldest one, tenant-wide and per target, counted over every page.
func Figures(ctx context.Context, s FigureSource, tenant string, w Window) (TenantFigures, error) {
	if err := w.Validate(); err != nil {
		return TenantFigures{}, err
	}
	f, err := targetFigures(ctx, s, tenant, w)
	if err != nil {
		return f, err
	}
	if f.PayloadConflicts, err = s.PayloadConflicts(ctx, tenant, w); err != nil {
		return f, err
	}
	if f.Duplicates, err = s.CountFindings(ctx, tenant, FindingDuplicate, w); err != nil {
		return f, err
	}
	for cursor := ""; ; {
		page, err := s.List(ctx, ListFilter{Tenant: tenant, State: Escalated, Limit: MaxListLimit, Cursor: cursor})
		if err != nil {
			return f, err
		}
		for _, op := range page.Operations {
			at := op.UpdatedAt
			f.OpenEscalations++
			if f.OldestEscalation == nil || at.Before(*f.OldestEscalation) {
				f.OldestEscalation = &at
			}
			t := targetOf(&f, op.Target)
			t.OpenEscalations++
			if t.OldestEscalation == nil || at.Before(*t.OldestEscalation) {
				t.OldestEscalation = &at
			}
		}
		if cursor = page.Next; cursor == "" {
			return f, nil
		}
	}
}

// targetOf returns f's figures of the target name, adding a target
// without figures in the window (one with open escalations only) in order.
func targetOf(f *TenantFigures, name string) *TargetFigures {
	i, found := slices.BinarySearchFunc(f.Targets, name, func(t TargetFigures, name string) int { return strings.Compare(t.Target, name) })
	if !found {
		f.Targets = slices.Insert(f.Targets, i, TargetFigures{Target: name, StartedPerDay: map[string]int{},
			FinalPerDay: map[string]Measure{}, EscalatedPerDay: map[string]int{}})
	}
	return &f.Targets[i]
}

func targetFigures(ctx context.Context, s FigureSource, tenant string, w Window) (TenantFigures, error) {
	if rs, ok := s.(RollupStore); ok && w.WholeDays() {
		r, err := rs.FigureRollup(ctx, tenant, w)
		if err != nil {
			return TenantFigures{}, err
		}
		return ComputeRollup(tenant, w, r), nil
	}
	ts, err := s.Transitions(ctx, tenant, w)
	if err != nil {
		return TenantFigures{}, err
	}
	return ComputeFigures(tenant, w, ts), nil
}

// overviewWorkers bounds how many tenants' figures FiguresOf reads at
// once: enough to overlap round trips, few enough to leave the pool to
// the executor.
const overviewWorkers = 4

// FiguresOf reads the figures of several tenants over the same window, in
// the order of tenants: the all-tenants overview. A *Ledger reads them in a
// few statements for all tenants (Ledger.FiguresOf); any other source is
// read tenant by tenant, a few at a time.
func FiguresOf(ctx context.Context, s FigureSource, tenants []string, w Window) ([]TenantFigures, error) {
	if l, ok := s.(interface {
		FiguresOf(context.Context, []string, Window) ([]TenantFigures, error)
	}); ok {
		return l.FiguresOf(ctx, tenants, w)
	}
	return figuresEach(ctx, s, tenants, w)
}

// figuresEach reads the figures of tenants with Figures, a few tenants at
// a time.
func figuresEach(ctx context.Context, s FigureSource, tenants []string, w Window) ([]TenantFigures, error) {
	out := make([]TenantFigures, len(tenants))
	errs := make([]error, len(tenants))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(overviewWorkers, len(tenants)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i], errs[i] = Figures(ctx, s, tenants[i], w)
			}
		}()
	}
	for i := range tenants {
		next <- i
	}
	close(next)
	wg.Wait()
	return out, errors.Join(errs...)
}
