package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"settle/ledger"
)

var _ ledger.ActionStore = (*Store)(nil)

// recordAction appends a to the record of human actions, in the caller's
// transaction.
func recordAction(ctx context.Context, tx *sql.Tx, a ledger.Action) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO actions (tenant_id, at, subject, actor_name, role, kind, object,
		operation_id, reason, request_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.Tenant, micros(a.At), a.Subject, a.Name, a.Role, string(a.Kind), a.Object, a.OperationID, a.Reason, a.RequestID)
	if err != nil {
		return fmt.Errorf("record action: %w", err)
	}
	return nil
}

// Actions implements ledger.ActionStore.
func (s *Store) Actions(ctx context.Context, f ledger.ActionFilter) ([]ledger.Action, error) {
	f, err := f.Validate()
	if err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT action_id, tenant_id, at, subject, actor_name, role, kind, object,
		operation_id, reason, request_id FROM actions
		WHERE tenant_id = ?1 AND (?2 = '' OR operation_id = ?2)
		ORDER BY action_id DESC LIMIT ?3`, f.Tenant, f.OperationID, f.Limit)
	if err != nil {
		return nil, fmt.Errorf("actions: %w", err)
	}
	defer rows.Close()
	var out []ledger.Action
	for rows.Next() {
		var (
			a    ledger.Action
			kind string
			at   int64
		)
		if err := rows.Scan(&a.ID, &a.Tenant, &at, &a.Subject, &a.Name, &a.Role, &kind, &a.Object,
			&a.OperationID, &a.Reason, &a.RequestID); err != nil {
			return nil, fmt.Errorf("actions: %w", err)
		}
		a.Kind, a.At = ledger.ActionKind(kind), fromMicros(at)
		out = append(out, a)
	}
	return out, rows.Err()
}

// withAction builds the action by the context's actor before anything is
// written (no actor: EInvalid, nothing written), then runs change and
// records the action in one transaction. change may fill in the action's
// object or reason.
func (s *Store) withAction(ctx context.Context, kind ledger.ActionKind, tenant, object string,
	change func(tx *sql.Tx, a *ledger.Action) error) error {
	a, err := ledger.NewAction(ctx, kind, tenant, object, "", "", s.clock())
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if err := change(tx, &a); err != nil {
			return err
		}
		return recordAction(ctx, tx, a)
	})
}
