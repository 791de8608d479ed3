package main

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// A flood of 1,000 connections that never send a byte, against the real
// binary allowed as many open files (`ulimit -n 1000`):
// /healthz and the API still answer at once, and an operation is still
// sent to its target and confirmed — outbound sends, the store and the
// webhook receiver need descriptors too, and the connection cap
// (--max-conns, lowered at start to leave 256 of the limit free) keeps the
// flood from taking them all.
func TestServe_IdleFloodKeepsServingAndSending(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "settle.db")
	cmd := exec.Command("sh", "-c", `ulimit -n 1000 && exec "$0" "$@"`, binary,
		"serve", "--addr", "127.0.0.1:0", "--database-url", db, "--demo-target")
	cmd.Dir = dir
	cmd.Env = os.Environ()
	s := runServer(t, cmd)
	token := newToken(t, db)
	addr := strings.TrimPrefix(s.URL, "http://")

	const flood = 1000
	conns := make([]net.Conn, 0, flood)
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for i := range flood {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("idle connection %d: %v", i, err)
		}
		conns = append(conns, c)
	}
	time.Sleep(300 * time.Millisecond)

	client := &http.Client{Timeout: 5 * time.Second}
	start := time.Now()
	resp, err := client.Get(s.URL + "/healthz")
	if err != nil {
		t.Fatalf("/healthz under the flood: %v; log:\n%s", err, tail(s.Log.String(), 5))
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz under the flood: %d", resp.StatusCode)
	}
	status, op := apiCall(t, http.MethodPost, s.URL+"/api/v1/operations", token,
		`{"target":"demo","operation_type":"charge","intent_ref":"flood-1","payload":{"amount":1200,"currency":"EUR"}}`)
	if status != http.StatusCreated {
		t.Fatalf("POST under the flood: %d", status)
	}
	waitState(t, s.URL, token, op.ID, "SUCCEEDED", 10*time.Second)
	t.Logf("served and sent under a flood of %d idle connections in %s", flood, time.Since(start))
	log := s.Log.String()
	if strings.Contains(log, "too many open files") {
		t.Fatalf("the server ran out of descriptors:\n%s", tail(log, 5))
	}
	if !strings.Contains(log, "--max-conns lowered to fit the open-file limit") || !strings.Contains(log, "max_conns=744") {
		t.Fatalf("no WARN that --max-conns was fitted to 1000-256 open files:\n%s", tail(log, 5))
	}
	if m := metricLines(scrape(t, s.URL), "settle_http_evicted_connections_total"); !regexp.MustCompile(`listener="main"} [1-9]`).MatchString(m) {
		t.Fatalf("evictions: %s", m)
	}
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// The HTTP limits' flags: each bad value is refused at start in one line
// naming the flag; a flood test above shows --max-conns fitted to the
// open-file limit.
func TestServe_HTTPLimitFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--read-header-timeout", "0s"},
		{"--read-timeout", "-1s"},
		{"--body-timeout", "0s"},
		{"--write-timeout", "0"},
		{"--idle-timeout", "x"},
		{"--read-timeout", "1m", "--write-timeout", "30s"},
		{"--max-header-bytes", "100"},
		{"--max-conns", "0"},
		{"--rate-limit", "-1"},
		{"--rate-burst", "0"},
		{"--max-creates", "0"},
		{"--max-creates", "4", "--max-creates-per-tenant", "5"},
		{"--max-creates-per-tenant", "-1"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runIn(t, t.TempDir(), []string{"DATABASE_URL="},
				append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
			flag := strings.TrimPrefix(args[len(args)-2], "--")
			if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, flag) {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line about --%s", args, code, stdout, stderr, flag)
			}
		})
	}
}

// --rate-limit and --rate-burst: a token past its burst gets 429 with
// Retry-After; --rate-limit 0 switches the limit off.
func TestServe_RateLimitFlags(t *testing.T) {
	t.Parallel()
	get := func(base, token string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/operations", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for _, c := range []struct {
		args    []string
		limited bool
	}{
		{[]string{"--rate-limit", "0.1", "--rate-burst", "2"}, true},
		{[]string{"--rate-limit", "0", "--rate-burst", "2"}, false},
	} {
		dir := t.TempDir()
		db := "sqlite:" + filepath.Join(dir, "settle.db")
		base := start(t, dir, nil, append([]string{"--database-url", db}, c.args...)...)
		token := newToken(t, db)
		for i := range 2 {
			if r := get(base, token); r.StatusCode != http.StatusOK {
				t.Fatalf("%v: request %d: %d", c.args, i, r.StatusCode)
			}
		}
		r := get(base, token)
		switch {
		case c.limited && (r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") != "10"):
			t.Fatalf("%v: third request %d, Retry-After %q; want 429 after 10s", c.args, r.StatusCode, r.Header.Get("Retry-After"))
		case !c.limited && r.StatusCode != http.StatusOK:
			t.Fatalf("%v: third request %d; want 200", c.args, r.StatusCode)
		}
	}
}
