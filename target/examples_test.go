package target_test

import (
	"path/filepath"
	"testing"

	"settle/target"
)

// The example contracts in examples/contracts are what a newcomer copies:
// they must load, and say what their comments say.
func TestExamples_Load(t *testing.T) {
	t.Parallel()
	stripe := loadExample(t, "stripe.yaml", "stripe")
	switch {
	case stripe.Auth == nil || stripe.Auth.SecretEnv != "STRIPE_SECRET_KEY",
		stripe.Encoding != target.EncodingForm,
		stripe.Classify(200) != target.Succeeded,
		stripe.Classify(402) != target.RejectedWithoutSideEffect,
		stripe.Classify(409) != target.InProgress,
		stripe.Classify(500) != target.Unknown,
		stripe.RetryWindow().Hours() != 24,
		!stripe.HasLookup() || stripe.Lookup.PropagationLimit.Hours() != 1,
		stripe.LateRequestsRejected:
		t.Errorf("stripe example: %+v", stripe)
	}
	if err := stripe.CheckReplayRoom(); err != nil {
		t.Error(err)
	}
	inst := loadExample(t, "provisioning.yaml", "instances")
	if inst.Encoding != target.EncodingJSON || !inst.HasLookup() || inst.Idempotency != nil ||
		inst.Classify(202) != target.AcceptedPending {
		t.Errorf("provisioning example: %+v", inst)
	}
}

func loadExample(t *testing.T, file, name string) *target.Contract {
	t.Helper()
	set, err := target.Load(filepath.Join("..", "examples", "contracts", file))
	if err != nil {
		t.Fatal(err)
	}
	c, ok := set.Get(name)
	if !ok {
		t.Fatalf("%s: no target %s in %v", file, name, set.Names())
	}
	return c
}
