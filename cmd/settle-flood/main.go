// Command settle-flood measures how a running settle serve holds up under
// the two floods of issue 23: many connections each sending a 1 MiB
// unsigned webhook body, and many connections each sending a complete
// header and then one body byte every two seconds. It prints /healthz
// latency and the server's resident memory before, during and after each
// flood (see docs/performance.md, "Floods"). With SETTLE_FLOOD_SECRET set
// to the target's webhook secret, each probe also sends one delivery
// signed with it (stored in the inbox like a real one) and the hook_ok
// column counts those answered 2xx.
//
//	settle-flood --url http://127.0.0.1:8080 --target payments
//
// It is a measuring tool, not a test: point it only at a server you run.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"settle/target"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// options are the floods to run.
type options struct {
	base, metrics, target string
	healthz               string
	webhookConns          int
	webhookBody           int
	slowConns             int
	pace, hold            time.Duration
	probes                int
	secret                []byte // SETTLE_FLOOD_SECRET; nil: no signed deliveries
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var o options
	fs := flag.NewFlagSet("settle-flood", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.base, "url", "http://127.0.0.1:8080", "settle serve's base URL (--addr)")
	fs.StringVar(&o.metrics, "metrics-url", "", "its /metrics, for process_resident_memory_bytes; empty: <url>/metrics")
	fs.StringVar(&o.healthz, "healthz-url", "", "the /healthz to probe (e.g. on --metrics-addr); empty: <url>/healthz")
	fs.StringVar(&o.target, "target", "payments", "a target whose contract has a webhook block")
	fs.IntVar(&o.webhookConns, "webhook-conns", 1200, "connections each sending one unsigned webhook body")
	fs.IntVar(&o.webhookBody, "webhook-body", 1<<20, "bytes of each unsigned webhook body")
	fs.IntVar(&o.slowConns, "slow-conns", 4600, "connections each trickling a body")
	fs.DurationVar(&o.pace, "pace", 2*time.Second, "one body byte every pace in the slow-body flood")
	fs.DurationVar(&o.hold, "hold", 25*time.Second, "how long each flood lasts")
	fs.IntVar(&o.probes, "probes", 10, "/healthz probes per phase")
	short := fs.Bool("short", false, "a quick run: 50 connections per flood for 2s")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if v := os.Getenv("SETTLE_FLOOD_SECRET"); v != "" {
		o.secret = []byte(v)
	}
	if *short {
		o.webhookConns, o.slowConns, o.hold, o.pace, o.probes = 50, 50, 2*time.Second, 500*time.Millisecond, 3
	}
	if o.healthz == "" {
		o.healthz = strings.TrimSuffix(o.base, "/") + "/healthz"
	}
	if o.metrics == "" {
		o.metrics = strings.TrimSuffix(o.base, "/") + "/metrics"
	}
	u, err := url.Parse(o.base)
	if err != nil || u.Host == "" {
		fmt.Fprintf(stderr, "settle-flood: --url %q is not a base URL\n", o.base)
		return 2
	}
	m := &meter{o: o, addr: u.Host, out: stdout}
	m.header()
	m.phase(ctx, "idle", 0, nil, false)
	// As in the issue: each connection sends its body once.
	m.phase(ctx, "webhook flood", o.webhookConns, m.unsignedWebhook, false)
	m.phase(ctx, "after", 0, nil, false)
	// An attacker repeats: a slow body the server cuts off starts again.
	m.phase(ctx, "slow-body flood", o.slowConns, m.slowBody, true)
	m.phase(ctx, "after", 0, nil, false)
	return 0
}

type meter struct {
	o    options
	addr string
	out  io.Writer
}

func (m *meter) header() {
	fmt.Fprintf(m.out, "%-16s %6s %12s %12s %10s %8s %9s\n", "phase", "conns", "healthz_p50", "healthz_max", "healthz_ok", "hook_ok", "rss_mb")
}

// phase runs flood on conns connections for the hold (none: a settle of
// a few seconds), opening each again when it ends if repeat, probing
// /healthz and memory meanwhile.
func (m *meter) phase(ctx context.Context, name string, conns int, flood func(ctx context.Context, c net.Conn), repeat bool) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	hold := min(2*time.Second, m.o.hold)
	if flood != nil {
		hold = m.o.hold
		for range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for first := true; ctx.Err() == nil && (first || repeat); first = false {
					c, err := net.DialTimeout("tcp", m.addr, 10*time.Second)
					if err != nil {
						time.Sleep(100 * time.Millisecond)
						continue
					}
					stop := context.AfterFunc(ctx, func() { c.Close() })
					flood(ctx, c)
					stop()
					c.Close()
				}
			}()
		}
		time.Sleep(min(hold/2, 2*time.Second)) // the flood is on
	}
	var lat []time.Duration
	ok, hooks, rss := 0, 0, 0.0
	deadline := time.Now().Add(hold / 2)
	for i := 0; i < m.o.probes; i++ {
		d, good := m.healthz()
		lat = append(lat, d)
		if good {
			ok++
		}
		if m.o.secret != nil && m.delivery() {
			hooks++
		}
		rss = max(rss, m.rssMB())
		if wait := time.Until(deadline) / time.Duration(m.o.probes-i); wait > 0 {
			time.Sleep(wait)
		}
	}
	cancel()
	wg.Wait()
	slices.Sort(lat)
	hookOK := "-"
	if m.o.secret != nil {
		hookOK = fmt.Sprintf("%d/%d", hooks, len(lat))
	}
	fmt.Fprintf(m.out, "%-16s %6d %10dms %10dms %7d/%-2d %8s %9.0f\n", name, conns,
		lat[len(lat)/2].Milliseconds(), lat[len(lat)-1].Milliseconds(), ok, len(lat), hookOK, rss)
}

// healthz times one /healthz on a new connection, as a load balancer does.
func (m *meter) healthz() (time.Duration, bool) {
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	start := time.Now()
	resp, err := client.Get(m.o.healthz)
	if err != nil {
		return time.Since(start), false
	}
	resp.Body.Close()
	return time.Since(start), resp.StatusCode == http.StatusOK
}

// delivery sends one webhook signed with the target's secret, as its
// provider would, and says whether it was answered 2xx within 5 s.
func (m *meter) delivery() bool {
	body := fmt.Appendf(nil, `{"id":"evt_settle_flood_%d","type":"settle_flood.probe","data":{}}`, time.Now().UnixNano())
	req, err := http.NewRequest(http.MethodPost, strings.TrimSuffix(m.o.base, "/")+"/webhooks/"+m.o.target, bytes.NewReader(body))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Settle-Signature", target.Sign(m.o.secret, time.Now(), body))
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode/100 == 2
}

// rssMB reads the server's resident memory from its /metrics.
func (m *meter) rssMB() float64 {
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(m.o.metrics)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "process_resident_memory_bytes "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f / (1 << 20)
		}
	}
	return 0
}

// unsignedWebhook sends one unsigned webhook with a full body, then reads
// the answer until the server closes the connection.
func (m *meter) unsignedWebhook(ctx context.Context, c net.Conn) {
	fmt.Fprintf(c, "POST /webhooks/%s HTTP/1.1\r\nHost: settle\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		m.o.target, m.o.webhookBody)
	chunk := make([]byte, 64<<10)
	for i := range chunk {
		chunk[i] = 'x'
	}
	for sent := 0; sent < m.o.webhookBody && ctx.Err() == nil; sent += len(chunk) {
		if _, err := c.Write(chunk[:min(len(chunk), m.o.webhookBody-sent)]); err != nil {
			break
		}
	}
	_, _ = io.Copy(io.Discard, c)
	<-ctx.Done() // one body per connection: no new one until the phase ends
}

// slowBody sends a webhook header whose signature is well-formed (so the
// body is read) and then one body byte every pace, until the server cuts
// it off or the phase ends.
func (m *meter) slowBody(ctx context.Context, c net.Conn) {
	fmt.Fprintf(c, "POST /webhooks/%s HTTP/1.1\r\nHost: settle\r\nContent-Type: application/json\r\n"+
		"Settle-Signature: t=1,v1=00\r\nContent-Length: 1000\r\n\r\n", m.o.target)
	t := time.NewTicker(m.o.pace)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := c.Write([]byte{'{'}); err != nil {
				return
			}
		}
	}
}
