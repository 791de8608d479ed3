package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"settle/ledger"
	"settle/ledger/sqlite/internal/dbsqlc"
)

// recordAction appends a to the record of human actions, in the caller's
// transaction.
func recordAction(ctx context.Context, tx *sql.Tx, a ledger.Action) error {
	if err := dbsqlc.New(tx).ActionInsert(ctx, actionParams(a)); err != nil {
		return fmt.Errorf("record action: %w", err)
	}
	return nil
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
