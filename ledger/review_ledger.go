package ledger

import (
	"context"
	"fmt"
	"strconv"
)

// LinkQuarantine implements ReviewStore. The operation is held under the
// tenant while the link is made: another tenant's operation is simply not
// found, and the operation cannot vanish or change tenant meanwhile.
func (l *Ledger) LinkQuarantine(ctx context.Context, tenant string, id int64, operationID, reason string) error {
	if err := CheckLink(tenant, operationID, reason); err != nil {
		return err
	}
	err := l.withAction(ctx, ActionQuarantineLink, tenant, strconv.FormatInt(id, 10), func(tx Driver, a *Action) error {
		a.Reason, a.OperationID = reason, operationID
		held, err := tx.OperationHold(ctx, tenant, operationID)
		if err != nil {
			return err
		}
		if !held {
			return Errorf(ENotFound, "operation not found")
		}
		found, err := tx.QuarantineLink(ctx, QuarantineResolveParams{ScopeTenant: tenant, ID: id,
			OperationID: operationID, Action: *a})
		if err != nil {
			return err
		}
		if !found {
			return Errorf(ENotFound, "no open quarantine item %d", id)
		}
		// Evidence, not a verdict: an UNKNOWN operation no reconciler holds
		// becomes due now; its state is the reconciler's to change.
		return tx.OperationDue(ctx, OperationDueParams{Tenant: tenant, ID: operationID, At: a.At})
	})
	if err != nil {
		return fmt.Errorf("link quarantine: %w", err)
	}
	return nil
}

// ListFindings implements ReviewStore.
func (l *Ledger) ListFindings(ctx context.Context, f FindingFilter) ([]Finding, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	p := FindingListParams{AllTenants: f.AllTenants, Tenants: f.Tenants, OperationID: f.OperationID,
		OpenOnly: f.Open, ResolvedOnly: f.Resolved, Target: f.Target, Kind: f.Kind, Before: f.Before,
		AfterID: f.After, Limit: f.LimitArg()}
	if p.Tenants == nil {
		p.Tenants = []string{}
	}
	p.Ref, p.OpPrefix = SearchRef(f.Ref)
	if p.Before != nil {
		p.Before = new(p.Before.UTC())
	}
	fs, err := l.d.FindingList(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("list findings: %w", err)
	}
	return fs, nil
}

// AcknowledgeFinding implements ReviewStore.
func (l *Ledger) AcknowledgeFinding(ctx context.Context, tenant string, id int64, note string) error {
	if err := CheckReviewNote("note", note); err != nil {
		return err
	}
	err := l.withAction(ctx, ActionFindingAcknowledge, tenant, strconv.FormatInt(id, 10), func(tx Driver, a *Action) error {
		a.Reason = note
		opID, found, err := tx.FindingAcknowledge(ctx, FindingAcknowledgeParams{Tenant: tenant, ID: id, Action: *a})
		if err != nil {
			return err
		}
		if !found {
			return Errorf(ENotFound, "no unacknowledged finding %d", id)
		}
		a.OperationID = opID
		return nil
	})
	if err != nil {
		return fmt.Errorf("acknowledge finding: %w", err)
	}
	return nil
}

// QuarantineItem implements ReviewStore.
func (l *Ledger) QuarantineItem(ctx context.Context, tenant string, id int64) (QuarantineItem, error) {
	q, found, err := l.d.QuarantineItemGet(ctx, tenant, id)
	switch {
	case err != nil:
		return QuarantineItem{}, fmt.Errorf("quarantine item: %w", err)
	case !found:
		return QuarantineItem{}, Errorf(ENotFound, "no quarantine item %d", id)
	}
	return q, nil
}

// Finding implements ReviewStore.
func (l *Ledger) Finding(ctx context.Context, tenant string, id int64) (Finding, error) {
	f, found, err := l.d.FindingGet(ctx, tenant, id)
	switch {
	case err != nil:
		return Finding{}, fmt.Errorf("finding: %w", err)
	case !found:
		return Finding{}, Errorf(ENotFound, "no finding %d", id)
	}
	return f, nil
}
