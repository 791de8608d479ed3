package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"settle/target"
	"settle/web"
)

// A short run (shorter than --short, to keep the suite quick) of both
// floods against a server on loopback reports every phase with all probes
// answered, every signed delivery accepted, and the memory the server's
// /metrics gives.
func TestRun_Short(t *testing.T) {
	secret := []byte("whsec-flood-test")
	t.Setenv("SETTLE_FLOOD_SECRET", string(secret))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "process_resident_memory_bytes 3.3554432e+07")
	})
	mux.HandleFunc("POST /webhooks/{target}", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Settle-Signature") == "" {
			w.Header().Set("Connection", "close")
			http.Error(w, "unsigned", http.StatusUnauthorized)
			return
		}
		body, _ := io.ReadAll(r.Body)
		if strings.HasPrefix(r.Header.Get("Settle-Signature"), "t=1,") {
			return // the slow-body flood's forgery, cut off by the server
		}
		if err := target.Verify(r.Header.Get("Settle-Signature"), body, secret, time.Minute, time.Now()); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := web.NewHTTPServer(mux, web.ServerLimits{BodyTimeout: 300e6, MaxConns: 40})
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })

	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"--url", "http://" + ln.Addr().String(),
		"--webhook-conns", "20", "--slow-conns", "20", "--hold", "400ms", "--pace", "100ms", "--probes", "3"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 6 {
		t.Fatalf("want a header and five phases:\n%s", out.String())
	}
	for _, l := range lines[1:] {
		if f := strings.Fields(l); f[len(f)-3] != "3/3" || f[len(f)-2] != "3/3" || f[len(f)-1] != "32" {
			t.Errorf("phase line %q: want 3/3 probes answered, 3/3 deliveries accepted and 32 MB", l)
		}
	}
}
