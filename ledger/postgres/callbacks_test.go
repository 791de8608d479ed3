package postgres_test

import (
	"context"
	"testing"

	"settle/ledger/ledgertest"
)

// The notification is written by the statement that records the
// transition: when it cannot be written, the transition is not applied
// either, so a final state never exists without its notification.
func TestStore_CallbackSameStatement(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ledgertest.CallbackAtomicity(t, s, func() {
		_, err := s.Pool().Exec(context.Background(), `
CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'outbox refused'; END; $$;
CREATE TRIGGER refuse BEFORE INSERT ON callback_outbox FOR EACH ROW EXECUTE FUNCTION refuse();`)
		if err != nil {
			t.Fatal(err)
		}
	})
}
