package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"settle/ledger"
)

var _ ledger.ActionStore = (*Store)(nil)

// recordAction appends a to the record of human actions, in the caller's
// transaction.
func recordAction(ctx context.Context, q querier, a ledger.Action) error {
	_, err := q.Exec(ctx, `INSERT INTO actions (tenant_id, at, subject, actor_name, role, kind, object,
		operation_id, reason, request_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		a.Tenant, a.At, a.Subject, a.Name, a.Role, string(a.Kind), a.Object, a.OperationID, a.Reason, a.RequestID)
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
	rows, err := s.pool.Query(ctx, `SELECT action_id, tenant_id, at, subject, actor_name, role, kind, object,
		operation_id, reason, request_id FROM actions
		WHERE tenant_id = $1 AND ($2 = '' OR operation_id = $2)
		ORDER BY action_id DESC LIMIT $3`, f.Tenant, f.OperationID, f.Limit)
	if err != nil {
		return nil, fmt.Errorf("actions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Action, error) {
		var (
			a    ledger.Action
			kind string
		)
		err := r.Scan(&a.ID, &a.Tenant, &a.At, &a.Subject, &a.Name, &a.Role, &kind, &a.Object,
			&a.OperationID, &a.Reason, &a.RequestID)
		a.Kind, a.At = ledger.ActionKind(kind), a.At.UTC()
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("actions: %w", err)
	}
	return out, nil
}

// withAction builds the action by the context's actor before anything is
// written (no actor: EInvalid, nothing written), then runs change and
// records the action in one transaction. change may fill in the action's
// object or reason.
func (s *Store) withAction(ctx context.Context, kind ledger.ActionKind, tenant, object string,
	change func(tx pgx.Tx, a *ledger.Action) error) error {
	a, err := ledger.NewAction(ctx, kind, tenant, object, "", "", s.clock())
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := change(tx, &a); err != nil {
			return err
		}
		return recordAction(ctx, tx, a)
	})
}
