package postgres

import (
	"context"
	"fmt"

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
