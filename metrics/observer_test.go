package metrics_test

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/metrics"
)

// The store's observer counts, on both stores: a refused payload conflict
// once, a creation and a reconciler looking again not at all, an approved
// replay as a transition out of ESCALATED and an entry into UNKNOWN, and
// the reconciler's verdict with its time since that entry.
func TestObserver_CountsWhatTheStoreCommits(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		t.Parallel()
		clk := ledgertest.NewClock()
		s := h.New(t, clk.Now)
		reg := prometheus.NewRegistry()
		s.(ledger.Observable).SetObserver(metrics.Observer{Metrics: metrics.New(reg, metrics.Options{}), Events: s,
			Log: slog.New(slog.DiscardHandler)})
		as := func(subject string) context.Context {
			return ledger.NewContextWithActor(context.Background(), ledger.Actor{Subject: subject, Name: subject, Role: "owner"})
		}
		ctx := as("cli:test")
		n := ledger.NewOperation{Tenant: "acme", Type: "charge", IntentRef: "i-1", Target: "payments",
			Payload: []byte(`{"amount":1}`), RetryWindow: 24 * time.Hour}
		op, _, err := s.Create(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		n.Payload = []byte(`{"amount":2}`)
		if _, _, err := s.Create(ctx, n); ledger.ErrorCode(err) != ledger.EPayloadConflict {
			t.Fatalf("conflict: %v", err)
		}
		held, err := s.Claim(ctx, op.Tenant, op.ID, op.PayloadHash, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Record(ctx, ledger.Outcome{Tenant: op.Tenant, OperationID: op.ID, Fence: held.Fence,
			From: ledger.InFlight, To: ledger.Escalated, Actor: ledger.ActorExecutor, Reason: "answer lost"}); err != nil {
			t.Fatal(err)
		}
		rs := s.(ledger.ResolutionStore)
		r, err := rs.Propose(as("oidc:alice"), ledger.Resolution{Tenant: op.Tenant, OperationID: op.ID,
			Kind: ledger.KindReplay, To: ledger.KindTo(ledger.KindReplay), Reason: "the provider has nothing"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rs.Approve(as("oidc:bob"), op.Tenant, r.ID); err != nil {
			t.Fatal(err)
		}
		look := func(to ledger.State) {
			t.Helper()
			leased, err := s.LeaseUnknown(ctx, 10, time.Minute)
			if err != nil || len(leased) != 1 {
				t.Fatalf("lease: %d %v", len(leased), err)
			}
			o := ledger.Outcome{Tenant: op.Tenant, OperationID: op.ID, Fence: leased[0].Fence,
				From: ledger.Unknown, To: to, Actor: ledger.ActorReconciler, Reason: "looked"}
			if to == ledger.Succeeded {
				o.RemoteRef = "ch_1"
			}
			if _, err := s.Record(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		clk.Advance(time.Minute)
		look(ledger.Unknown)
		clk.Advance(time.Minute)
		look(ledger.Succeeded)

		want := []string{
			`settle_payload_conflicts_total{} 1`,
			`settle_resolution_seconds{target=payments,to=SUCCEEDED} 1 120`,
			`settle_transitions_total{from=ESCALATED,to=UNKNOWN} 1`,
			`settle_transitions_total{from=IN_FLIGHT,to=ESCALATED} 1`,
			`settle_transitions_total{from=PREPARED,to=IN_FLIGHT} 1`,
			`settle_transitions_total{from=UNKNOWN,to=SUCCEEDED} 1`,
			`settle_unknown_entries_total{target=payments} 1`,
		}
		if got := series(t, reg); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("series:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// series is every series of reg, sorted: counters with their value,
// histograms with their count and sum.
func series(t *testing.T, reg *prometheus.Registry) []string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			v := fmt.Sprint(m.GetCounter().GetValue())
			if hi := m.GetHistogram(); hi != nil {
				v = fmt.Sprint(hi.GetSampleCount(), " ", hi.GetSampleSum())
			}
			out = append(out, fmt.Sprintf("%s{%s} %s", mf.GetName(), strings.Join(labels, ","), v))
		}
	}
	sort.Strings(out)
	return out
}
