package ledger

import (
	"context"
	"fmt"
	"time"
)

// AuditBatch implements AuditStore.
func (l *Ledger) AuditBatch(ctx context.Context, target string, after Cursor, n int) ([]Operation, Cursor, error) {
	if err := CheckAuditBatch(target, after, n); err != nil {
		return nil, Cursor{}, err
	}
	if after.ID == "" {
		after = Cursor{}
	}
	ops, err := l.d.AuditFinalBatch(ctx, target, after, n)
	if err != nil {
		return nil, Cursor{}, fmt.Errorf("audit batch: %w", err)
	}
	return ops, NextAuditPosition(ops, n), nil
}

// RecordFinding implements AuditStore.
func (l *Ledger) RecordFinding(ctx context.Context, f Finding) (bool, error) {
	if err := f.Validate(); err != nil {
		return false, err
	}
	ids, evidence := f.EncodeJSON()
	found, created, err := l.d.FindingInsert(ctx, FindingInsertParams{Finding: f, RemoteIDs: ids, Evidence: evidence,
		At: l.clock()})
	switch {
	case err != nil:
		return false, fmt.Errorf("record finding: %w", err)
	case !found:
		return false, Errorf(ENotFound, "operation not found")
	}
	return created, nil
}

// Findings implements AuditStore.
func (l *Ledger) Findings(ctx context.Context, tenant string, since time.Time) ([]Finding, error) {
	fs, err := l.d.FindingsSince(ctx, tenant, since.UTC(), MaxListLimit)
	if err != nil {
		return nil, fmt.Errorf("findings: %w", err)
	}
	return fs, nil
}

// CountFindings implements AuditStore.
func (l *Ledger) CountFindings(ctx context.Context, tenant string, kind FindingKind, w Window) (int, error) {
	n, err := l.d.FindingCount(ctx, FindingCountParams{Tenant: tenant, Kind: kind, Since: w.Since.UTC(), Until: w.Until.UTC()})
	if err != nil {
		return 0, fmt.Errorf("count findings: %w", err)
	}
	return n, nil
}

// AuditPosition implements AuditStore.
func (l *Ledger) AuditPosition(ctx context.Context, target string) (Cursor, error) {
	c, found, err := l.d.AuditCursorGet(ctx, target)
	switch {
	case err != nil:
		return Cursor{}, fmt.Errorf("audit position: %w", err)
	case !found:
		return Cursor{}, Errorf(ENotFound, "no audit position for target %s", target)
	}
	return c, nil
}

// SaveAuditPosition implements AuditStore.
func (l *Ledger) SaveAuditPosition(ctx context.Context, target string, pos Cursor) error {
	if err := CheckAuditBatch(target, pos, 1); err != nil {
		return err
	}
	if pos.ID == "" {
		pos = Cursor{}
	}
	if err := l.d.AuditCursorSave(ctx, target, pos, l.clock()); err != nil {
		return fmt.Errorf("save audit position: %w", err)
	}
	return nil
}
