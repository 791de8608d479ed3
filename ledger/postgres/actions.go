package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"settle/ledger"
	"settle/ledger/postgres/internal/dbsqlc"
)

// recordAction appends a to the record of human actions, in the caller's
// transaction.
func recordAction(ctx context.Context, q querier, a ledger.Action) error {
	if err := dbsqlc.New(q).ActionInsert(ctx, actionParams(a)); err != nil {
		return fmt.Errorf("record action: %w", err)
	}
	return nil
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
