package ledgertest

import (
	"testing"
	"time"
)

// testInboxFailures: each claim counts a failed attempt, a deferral gives
// it back, FailDelivery keeps the count, records the error (escaped when
// it is not plain text) and makes the delivery due at the time it names.
func testInboxFailures(t *testing.T, h Harness) {
	f := setup(t, h)
	in := inboxOf(t, f)
	id, _, err := in.Receive(f.ctx, "payments", []byte(`{"id":"evt_poison"}`))
	if err != nil {
		t.Fatal(err)
	}
	claim := func(want int) {
		t.Helper()
		ds, err := in.ClaimDeliveries(f.ctx, 10, time.Minute)
		if err != nil || len(ds) != 1 || ds[0].ID != id {
			t.Fatalf("claim: %+v %v", ds, err)
		}
		if ds[0].Failures != want {
			t.Fatalf("failed attempts %d, want %d", ds[0].Failures, want)
		}
	}
	claim(1)
	if err := in.DeferDelivery(f.ctx, id, f.clk.Now(), "operation in flight"); err != nil {
		t.Fatal(err)
	}
	claim(1) // the deferral gave the first claim back
	if err := in.FailDelivery(f.ctx, id, f.clk.Now().Add(10*time.Second), "refused: ab\x00cd"); err != nil {
		t.Fatal(err)
	}
	if ds, _ := in.ClaimDeliveries(f.ctx, 10, time.Minute); len(ds) != 0 {
		t.Fatal("a failed delivery is due before the time FailDelivery named")
	}
	f.clk.Advance(11 * time.Second)
	ds, err := in.ClaimDeliveries(f.ctx, 10, time.Minute)
	if err != nil || len(ds) != 1 || ds[0].Failures != 2 || ds[0].LastError != `"refused: ab\x00cd"` {
		t.Fatalf("after a failure: %+v %v", ds, err)
	}
	f.clk.Advance(2 * time.Minute) // a claim whose processor died still counts
	claim(3)
	if err := in.FinishDelivery(f.ctx, id, "quarantined"); err != nil {
		t.Fatal(err)
	}
	if err := in.FailDelivery(f.ctx, id, f.clk.Now(), "late"); err != nil {
		t.Fatal(err)
	}
	if ds, _ := in.ClaimDeliveries(f.ctx, 10, time.Minute); len(ds) != 0 {
		t.Fatal("FailDelivery revived a finished delivery")
	}
}
