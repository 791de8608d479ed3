package ledger

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// QuarantineDriver is the quarantine list's SQL (InboxStore.ListQuarantine).
type QuarantineDriver interface {
	// QuarantineList returns the items p selects, newest first by id, at
	// most p.Limit.
	QuarantineList(ctx context.Context, p QuarantineListParams) ([]QuarantineItem, error)
	// QuarantineIDBoundBefore returns the newest id of the items
	// quarantined before before, whatever their tenant or resolution (0:
	// none), read from an index of the times.
	QuarantineIDBoundBefore(ctx context.Context, before time.Time) (int64, error)
}

// QuarantineListParams are QuarantineDriver.QuarantineList's: a
// QuarantineFilter with every narrowing resolved to a value, where "",
// 0 or nil is any.
type QuarantineListParams struct {
	OpenOnly, ResolvedOnly bool
	// The reviewer's tenants (AllTenants: every tenant's), and whether
	// unattributed items are among them.
	AllTenants   bool
	Tenants      []string
	Unattributed bool
	// AnyItem is false when only the items naming one operation (the
	// About… values; "" matches nothing) are asked.
	AnyItem                                     bool
	AboutOperation, AboutReference, AboutRemote string
	Target                                      string
	Ref, OpPrefix                               string // QuarantineFilter.RefArgs
	Reason                                      string // trimmed words of the reason
	Before                                      *time.Time
	AfterID                                     int64
	Limit                                       int
}

// ListQuarantine implements InboxStore.ListQuarantine over the driver.
func (l *Ledger) ListQuarantine(ctx context.Context, f QuarantineFilter) ([]QuarantineItem, error) {
	p := QuarantineListParams{OpenOnly: f.Open, ResolvedOnly: f.Resolved, AllTenants: f.AllTenants,
		Tenants: f.Tenants, Unattributed: f.Unattributed, Target: f.Target, Reason: strings.TrimSpace(f.Reason),
		Before: f.Before, AfterID: f.After, Limit: f.LimitArg()}
	if p.Tenants == nil {
		p.Tenants = []string{}
	}
	p.AnyItem, p.AboutOperation, p.AboutReference, p.AboutRemote = f.AboutArgs()
	p.Ref, p.OpPrefix = f.RefArgs()
	if p.Before != nil {
		p.Before = new(p.Before.UTC())
		// The age as a bound on the id, too: no item older than the
		// cutoff has a newer id than the newest of them, so the walk by id
		// starts there instead of passing every newer item.
		bound, err := l.d.QuarantineIDBoundBefore(ctx, *p.Before)
		if err != nil {
			return nil, fmt.Errorf("list quarantine: %w", err)
		}
		if bound == 0 {
			return []QuarantineItem{}, nil
		}
		if p.AfterID == 0 || bound < p.AfterID {
			p.AfterID = bound + 1
		}
	}
	items, err := l.d.QuarantineList(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("list quarantine: %w", err)
	}
	return items, nil
}
