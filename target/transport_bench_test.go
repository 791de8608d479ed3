package target

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkClient_Reuse sends 2,000 creates to a loopback target over a
// transport without keep-alives (the anchor: what NewClient did before
// connection reuse) and over the client's own, in the same run, and reports
// each per send and their ratio:
//
//	go test ./target -run '^$' -bench Client_Reuse -benchtime 3x
func BenchmarkClient_Reuse(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"id":"ch_1"}`))
	}))
	defer srv.Close()
	set, c := stripeLike(b, srv.URL)
	const sends = 2000
	run := func(cl *Client) time.Duration {
		start := time.Now()
		for i := range sends {
			if a := cl.Create(context.Background(), c, "acme", []byte(charge), fmt.Sprintf("key-%d", i), ""); a.Status != http.StatusOK {
				b.Fatalf("send %d: %+v", i, a)
			}
		}
		return time.Since(start)
	}
	var off, on time.Duration
	for b.Loop() {
		anchor := stripeClient(b, set, acme)
		anchor.http.Transport = anchor.http.Transport.(*onceTransport).fresh
		off += run(anchor)
		cl := stripeClient(b, set, acme)
		on += run(cl)
		cl.http.Transport.(*onceTransport).CloseIdleConnections()
	}
	n := float64(b.N * sends)
	b.ReportMetric(float64(off.Microseconds())/n, "µs/send-keepalives-off")
	b.ReportMetric(float64(on.Microseconds())/n, "µs/send-reused")
	b.ReportMetric(float64(off)/float64(on), "x-faster")
}
