package ledger

import (
	"context"
	"time"
)

// AuditDriver is the SQL of the auditor's findings and position
// (AuditStore).
type AuditDriver interface {
	// FindingInsert inserts p.Finding with its operation's own target,
	// found at p.At, unless an open finding of its kind exists for the
	// operation: found is false when the tenant has no such operation,
	// created false when nothing was inserted.
	FindingInsert(ctx context.Context, p FindingInsertParams) (found, created bool, err error)
	// FindingsSince returns the tenant's findings found at or after since,
	// newest first, at most max.
	FindingsSince(ctx context.Context, tenant string, since time.Time, max int) ([]Finding, error)
	// FindingCount counts the tenant's findings of p.Kind ("" for every
	// kind) found in [p.Since, p.Until).
	FindingCount(ctx context.Context, p FindingCountParams) (int, error)
	// AuditCursorGet returns target's saved position (the zero Cursor when
	// saved as "start over"); found is false when none was saved.
	AuditCursorGet(ctx context.Context, target string) (c Cursor, found bool, err error)
	// AuditCursorSave saves target's position (the zero Cursor: NULLs) at
	// at.
	AuditCursorSave(ctx context.Context, target string, pos Cursor, at time.Time) error
	// AuditFinalBatch returns up to max final (SUCCEEDED or
	// FAILED_TERMINAL) operations of target created after position after
	// (the zero Cursor: from the start), by (created_at, operation_id).
	AuditFinalBatch(ctx context.Context, target string, after Cursor, max int) ([]Operation, error)
}

// FindingInsertParams are AuditDriver.FindingInsert's: the finding's ids
// and evidence as JSON (Finding.EncodeJSON).
type FindingInsertParams struct {
	Finding             Finding
	RemoteIDs, Evidence string
	At                  time.Time
}

// FindingCountParams are AuditDriver.FindingCount's.
type FindingCountParams struct {
	Tenant       string
	Kind         FindingKind
	Since, Until time.Time
}
