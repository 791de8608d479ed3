package web_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"settle/ledger"
	"settle/reconciler"
	"settle/target"
	"settle/web"
)

// The quarantine counter lives with the quarantine decision, in the inbox
// processor (reconciler.Inbox); this test runs that processor against the
// deliveries the HTTP receiver stored and reads the counters the way
// Prometheus does, from GET /metrics. A delivery that cannot be attributed
// counts once; a verified, matched delivery confirms its operation and
// counts nothing; a refused signature never reaches the inbox.
func TestWebhook_QuarantineCounter(t *testing.T) {
	t.Parallel()
	set, err := target.Parse("hooks.yaml", []byte(hookContract))
	if err != nil {
		t.Fatal(err)
	}
	payments, _ := set.Get("payments")
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		s := open(t)
		inbox := s.(ledger.InboxStore)
		reg := prometheus.NewRegistry()
		e := serve(t, s, web.Config{Metrics: reg, Contracts: set,
			WebhookSecrets: map[string][]byte{"payments": hookSecret},
			Targets:        targets{"payments": {Deadline: time.Hour, Owner: "Payments team", Bind: payments.Bind}}})
		processor := &reconciler.Inbox{Store: s, Inbox: inbox, Contracts: set, Metrics: reg,
			Log: slog.New(slog.DiscardHandler), Lease: time.Minute}
		ctx := context.Background()

		quarantined := seriesOf("settle_quarantined_events_total", "target", "payments")
		asQuarantined := seriesOf("settle_webhook_events_processed_total", "target", "payments", "outcome", "quarantined")
		asFinished := seriesOf("settle_webhook_events_processed_total", "target", "payments", "outcome", "finished")
		// deliver posts a signed event and processes what the inbox holds;
		// it returns how much each series grew.
		deliver := func(t *testing.T, sig func([]byte) string, object string) map[series]float64 {
			t.Helper()
			before := e.metrics(quarantined, asQuarantined, asFinished)
			body := fmt.Appendf(nil, `{"id":"evt_%d","type":"charge.succeeded","data":%s}`, time.Now().UnixNano(), object)
			r := e.do(http.MethodPost, "/webhooks/payments", "application/json", body, "Settle-Signature", sig(body))
			if r.status != http.StatusOK && r.status != http.StatusUnauthorized {
				t.Fatalf("delivery: %d %s", r.status, r.body)
			}
			ds, err := inbox.ClaimDeliveries(ctx, 10, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range ds {
				if err := processor.Process(ctx, d); err != nil {
					t.Fatalf("process delivery %d: %v", d.ID, err)
				}
			}
			after := e.metrics(quarantined, asQuarantined, asFinished)
			delta := map[series]float64{}
			for k, v := range after {
				delta[k] = v - before[k]
			}
			return delta
		}
		signed := func(b []byte) string { return target.Sign(hookSecret, time.Now(), b) }

		t.Run("UnknownReference", func(t *testing.T) {
			d := deliver(t, signed, chargeObject("ch_x", "6f1c2f7e-0d7b-4a47-9b8e-2f0b1d1a9c11", "acme", 5000))
			if d[quarantined] != 1 || d[asQuarantined] != 1 || d[asFinished] != 0 {
				t.Fatalf("counter deltas %v, want one quarantined", d)
			}
		})
		t.Run("NoTenant", func(t *testing.T) {
			d := deliver(t, signed, `{"id":"ch_y","amount":5000}`)
			if d[quarantined] != 1 || d[asQuarantined] != 1 {
				t.Fatalf("counter deltas %v, want one quarantined", d)
			}
		})
		t.Run("BadSignature", func(t *testing.T) {
			wrong := func(b []byte) string { return target.Sign([]byte("wrong"), time.Now(), b) }
			d := deliver(t, wrong, chargeObject("ch_z", "6f1c2f7e-0d7b-4a47-9b8e-2f0b1d1a9c11", "acme", 5000))
			if d[quarantined] != 0 || d[asQuarantined] != 0 || d[asFinished] != 0 {
				t.Fatalf("counter deltas %v: a refused delivery must not reach the inbox", d)
			}
		})
		t.Run("MatchedConfirms", func(t *testing.T) {
			op := unknownOperation(t, e, s)
			d := deliver(t, signed, chargeObject("ch_ok", op.RemoteKey, "acme", 5000))
			if d[quarantined] != 0 || d[asQuarantined] != 0 || d[asFinished] != 1 {
				t.Fatalf("counter deltas %v, want one finished and nothing quarantined", d)
			}
			got := e.do(http.MethodGet, "/api/v1/operations/"+op.ID, "", nil).json(t)
			if got["state"] != "SUCCEEDED" || got["remote_ref"] != "ch_ok" {
				t.Fatalf("the matched event did not confirm the operation: %v", got)
			}
		})
		items, err := inbox.ListQuarantine(ctx, ledger.QuarantineFilter{Open: true, AllTenants: true, Unattributed: true})
		if err != nil || len(items) != 2 {
			t.Fatalf("%d open quarantine items, want 2 (%v)", len(items), err)
		}
	})
}

// chargeObject is the remote object of a payments event, carrying the
// references the contract's Bind writes.
func chargeObject(id, ref, tenant string, amount int) string {
	return fmt.Sprintf(`{"id":%q,"amount":%d,"currency":"EUR","customer":"c-1","metadata":{"settle_ref":%q,"settle_tenant":%q}}`,
		id, amount, ref, tenant)
}

// unknownOperation registers charge over the API and takes it to UNKNOWN
// as a sender whose reply was lost would.
func unknownOperation(t *testing.T, e *env, s store) ledger.Operation {
	t.Helper()
	ctx := context.Background()
	r := e.post(charge)
	if r.status != http.StatusCreated {
		t.Fatalf("POST: %d %s", r.status, r.body)
	}
	op, err := s.Get(ctx, "acme", r.json(t)["operation_id"].(string))
	if err != nil {
		t.Fatal(err)
	}
	held, err := s.Claim(ctx, "acme", op.ID, op.PayloadHash, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	op, err = s.Record(ctx, ledger.Outcome{Tenant: "acme", OperationID: op.ID, Fence: held.Fence,
		From: ledger.InFlight, To: ledger.Unknown, Actor: ledger.ActorExecutor, Reason: "test: the reply was lost"})
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// series names one Prometheus time series: its metric name and its labels
// in sorted order, as in `name{a="x",b="y"}`.
type series string

func seriesOf(name string, labelPairs ...string) series {
	labels := map[string]string{}
	for i := 0; i+1 < len(labelPairs); i += 2 {
		labels[labelPairs[i]] = labelPairs[i+1]
	}
	return canonical(name, labels)
}

func canonical(name string, labels map[string]string) series {
	if len(labels) == 0 {
		return series(name)
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.Quote(labels[k])
	}
	return series(name + "{" + strings.Join(parts, ",") + "}")
}

// metrics reads the given series from GET /metrics; an absent series is 0.
func (e *env) metrics(want ...series) map[series]float64 {
	e.t.Helper()
	r := e.do(http.MethodGet, "/metrics", "", nil)
	if r.status != http.StatusOK {
		e.t.Fatalf("/metrics: %d", r.status)
	}
	all := map[series]float64{}
	for _, line := range strings.Split(string(r.body), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, labels, value, err := parseSample(line)
		if err != nil {
			e.t.Fatalf("/metrics line %q: %v", line, err)
		}
		all[canonical(name, labels)] = value
	}
	out := map[series]float64{}
	for _, w := range want {
		out[w] = all[w]
	}
	return out
}

// parseSample reads one sample line of the Prometheus text format:
// name{label="value",...} value [timestamp].
func parseSample(line string) (name string, labels map[string]string, value float64, err error) {
	labels = map[string]string{}
	rest := line
	if i := strings.IndexAny(line, "{ "); i >= 0 && line[i] == '{' {
		name, rest = line[:i], line[i+1:]
		for !strings.HasPrefix(rest, "}") {
			k, v, ok := strings.Cut(rest, "=")
			if !ok {
				return "", nil, 0, fmt.Errorf("label without value")
			}
			q, err := strconv.QuotedPrefix(v)
			if err != nil {
				return "", nil, 0, err
			}
			labels[k], _ = strconv.Unquote(q)
			rest = strings.TrimPrefix(v[len(q):], ",")
		}
		rest = strings.TrimPrefix(rest, "}")
	} else {
		name, rest, _ = strings.Cut(line, " ")
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return "", nil, 0, fmt.Errorf("no value")
	}
	value, err = strconv.ParseFloat(fields[0], 64)
	return name, labels, value, err
}
