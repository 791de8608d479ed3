package ledgertest

import (
	"strings"
	"testing"

	"settle/ledger"
)

// testBatchIsolation: one outcome that cannot be stored — a provider's id
// with a NUL, one too long for an index entry, evidence too large, or a row
// the database itself refuses — costs only its own operation its verdict.
// Its neighbours in the same batch, other tenants' included, are recorded
// with their events, and the batch as a whole reports no error.
func testBatchIsolation(t *testing.T, h Harness) {
	t.Run("Invalid", func(t *testing.T) {
		f := setup(t, h)
		var batch []ledger.Outcome
		var good []ledger.Operation
		for _, tenant := range []string{"acme", "globex", "initech", "acme", "globex"} {
			op := f.claim(tenant)
			good = append(good, op)
			batch = append(batch, outcome(op, ledger.InFlight, ledger.Succeeded))
		}
		nul, long, big := f.claim("hostile"), f.claim("hostile"), f.claim("hostile")
		bad := []ledger.Outcome{
			outcome(nul, ledger.InFlight, ledger.Succeeded),
			outcome(long, ledger.InFlight, ledger.Succeeded),
			outcome(big, ledger.InFlight, ledger.Unknown),
		}
		bad[0].RemoteRef = "ch_\x00evil"
		bad[1].RemoteRef = "ch_" + strings.Repeat("x", 3000)
		bad[2].Evidence = map[string]any{"remote_id": strings.Repeat("y", 5000)}
		// Bad rows in the middle of the batch, between good ones.
		batch = append(batch[:2], append(bad, batch[2:]...)...)
		errs, err := f.store.RecordBatch(f.ctx, batch)
		if err != nil {
			t.Fatalf("RecordBatch failed as a whole: %v", err)
		}
		for i := 2; i < 5; i++ {
			wantCode(t, errs[i], ledger.EInvalid)
		}
		for _, op := range []ledger.Operation{nul, long, big} {
			if got := f.get(op); got.State != ledger.InFlight || got.RemoteRef != "" {
				t.Fatalf("refused outcome changed its operation: %s %q", got.State, got.RemoteRef)
			}
		}
		f.wantRecorded(good, errs[:2], errs[5:])
	})

	t.Run("RefusedByDatabase", func(t *testing.T) {
		if h.RefuseRemoteRef == nil {
			t.Skip("the harness cannot make its database refuse a row")
		}
		f := setup(t, h)
		h.RefuseRemoteRef(t, f.store, "ch_refused")
		a, b, c := f.claim("acme"), f.claim("hostile"), f.claim("globex")
		refused := outcome(b, ledger.InFlight, ledger.Succeeded)
		refused.RemoteRef = "ch_refused"
		errs, err := f.store.RecordBatch(f.ctx, []ledger.Outcome{
			outcome(a, ledger.InFlight, ledger.Succeeded), refused, outcome(c, ledger.InFlight, ledger.Succeeded),
		})
		if err != nil {
			t.Fatalf("RecordBatch failed as a whole: %v", err)
		}
		if errs[1] == nil {
			t.Fatal("the refused row reports no error")
		}
		if got := f.get(b); got.State != ledger.InFlight {
			t.Fatalf("refused row applied: %s", got.State)
		}
		f.wantRecorded([]ledger.Operation{a, c}, errs[:1], errs[2:])

		// A batch of only refused rows is the database's failure, reported
		// as such.
		if _, err := f.store.RecordBatch(f.ctx, []ledger.Outcome{refused}); err == nil {
			t.Fatal("a batch whose every row is refused reports no error")
		}
	})
}

// wantRecorded checks that every op reached SUCCEEDED with its remote
// reference and a SUCCEEDED event, and that every errs entry is nil.
func (f *fixture) wantRecorded(ops []ledger.Operation, errs ...[]error) {
	f.t.Helper()
	for _, es := range errs {
		for _, e := range es {
			if e != nil {
				f.t.Fatalf("a good neighbour was not recorded: %v", e)
			}
		}
	}
	for _, op := range ops {
		got := f.get(op)
		if got.State != ledger.Succeeded || got.RemoteRef != "remote-"+op.ID[:8] {
			f.t.Fatalf("neighbour %s of %s = %s %q, want SUCCEEDED", op.ID, op.Tenant, got.State, got.RemoteRef)
		}
		evs, err := f.store.Events(f.ctx, op.Tenant, op.ID)
		if err != nil {
			f.t.Fatal(err)
		}
		if last := evs[len(evs)-1]; last.To != ledger.Succeeded || last.From != ledger.InFlight {
			f.t.Fatalf("neighbour's last event = %s → %s", last.From, last.To)
		}
	}
}
