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
