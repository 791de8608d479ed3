package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"settle/ledger"
)

// summaryCols are cols with the payload read as NULL, for reads that never
// need it (the API's get and list): the row then costs the same whatever
// the payload's size.
var summaryCols = func() string {
	s := strings.Replace(cols, "payload,", "NULL,", 1)
	if s == cols {
		panic("sqlite: summaryCols: no payload column in cols")
	}
	return s
}()

// Summary implements ledger.Store.
func (s *Store) Summary(ctx context.Context, tenant, id string) (ledger.Operation, error) {
	id, ok := ledger.ParseID(id)
	if !ok {
		return ledger.Operation{}, ledger.Errorf(ledger.ENotFound, "operation not found")
	}
	op, err := scanOperation(s.r.QueryRowContext(ctx, `SELECT `+summaryCols+` FROM operation_ledger
		WHERE tenant_id = ? AND operation_id = ?`, tenant, id))
	if errors.Is(err, sql.ErrNoRows) {
		return op, ledger.Errorf(ledger.ENotFound, "operation not found")
	}
	if err != nil {
		return op, fmt.Errorf("summary: %w", err)
	}
	return op, nil
}
