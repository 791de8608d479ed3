package ledger_test

import (
	"errors"
	"testing"
	"time"

	"settle/ledger"
)

// A Bind that explains a clash with the payload (a *ledger.Error) is the
// caller's answer as it stands; any other Bind failure is internal, not a
// 422 saying "internal error".
func TestPrepare_BindErrors(t *testing.T) {
	n := ledger.NewOperation{Tenant: "acme", Type: "charge", IntentRef: "a-1", Target: "payments",
		Payload: []byte(`{"metadata":"x"}`)}
	n.Bind = func([]byte, string, string) ([]byte, error) {
		return nil, ledger.Errorf(ledger.EInvalid, "payload.metadata is a string, not an object")
	}
	_, err := ledger.Prepare(n, time.Now())
	if ledger.ErrorCode(err) != ledger.EInvalid || ledger.ErrorMessage(err) != "payload.metadata is a string, not an object" {
		t.Fatalf("clash: %v", err)
	}
	n.Bind = func([]byte, string, string) ([]byte, error) { return nil, errors.New("broken contract") }
	if _, err := ledger.Prepare(n, time.Now()); ledger.ErrorCode(err) != ledger.EInternal {
		t.Fatalf("bind failure: %v, want internal", err)
	}
}
