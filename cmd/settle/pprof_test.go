package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// --pprof-addr serves Go's profiles on a loopback listener of its own: the
// start-up line says where, a heap profile and the goroutine list answer
// there, and the main address has none of it.
func TestServe_PprofAddr(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, dir, nil, "--database-url", "sqlite:"+filepath.Join(dir, "settle.db"),
		"--pprof-addr", "127.0.0.1:0")
	m := regexp.MustCompile(`profiles: (http://\S+)/debug/pprof/;`).FindStringSubmatch(s.Line)
	if m == nil {
		t.Fatalf("start-up line %q names no profiles address", s.Line)
	}
	get := func(url string) (int, []byte) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	if code, body := get(m[1] + "/debug/pprof/goroutine?debug=1"); code != http.StatusOK ||
		!strings.Contains(string(body), "goroutine profile:") {
		t.Fatalf("goroutines: %d %.200s", code, body)
	}
	if code, body := get(m[1] + "/debug/pprof/heap"); code != http.StatusOK || len(body) == 0 {
		t.Fatalf("heap profile: %d, %d bytes", code, len(body))
	}
	if code, _ := get(s.URL + "/debug/pprof/"); code != http.StatusNotFound {
		t.Fatalf("main address /debug/pprof/: %d, want 404", code)
	}
	healthy(t, s.URL)
}

// Profiles show the process's memory and stacks: off loopback, settle
// serve refuses to start, in one line, exit status 2.
func TestServe_PprofRefusedOffLoopback(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0", "nonsense"} {
		t.Run(addr, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			db := "sqlite:" + filepath.Join(t.TempDir(), "settle.db")
			cmd := exec.CommandContext(ctx, binary, "serve", "--pprof-addr", addr, "--database-url", db)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 2 {
				t.Fatalf("err = %v, want exit status 2; stderr %q", err, stderr.String())
			}
			const want = "settle serve: --pprof-addr shows the process's memory and stacks, so it must be a loopback address"
			if msg := stderr.String(); strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, want) || stdout.Len() != 0 {
				t.Fatalf("want one line starting %q, got %q", want, msg)
			}
		})
	}
}
