package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"settle/ledger"
	"settle/ledger/ledgertest"
	"settle/ledger/storetest"
	"settle/web"
)

// Memory bounds of TestMemory_PerRequestBounded, justified in
// docs/performance.md ("Memory per request"):
//
//   - heapBound: the Go heap's peak above its idle level. A create holds
//     a handful of copies of its body (read buffer, raw payload, decoded
//     tree, canonical form, the driver's parameter buffer): about 1 MiB
//     at the 64 KiB limit, 16 MiB for 16. A list holds 200 operations
//     without their payloads and their JSON: well under 1 MiB each, 8 MiB
//     for 8. 48 MiB leaves room for the collector's slack (GOGC=20 while
//     measuring) and the scheduler. Loading payloads in the 8 lists alone
//     would hold 8 × 200 × 60 KiB ≈ 94 MiB.
//   - rssBound: the process's resident peak above its level before, which
//     also counts memory the runtime has not yet returned; not asserted
//     under -race, whose shadow memory multiplies it.
const (
	heapBound = 32 << 20
	rssBound  = 64 << 20
)

// memoryChildEnv marks the process that measures.
const memoryChildEnv = "SETTLE_TEST_MEMORY_CHILD"

// largePayload is about 60 KiB: a real payload near the body limit.
func largePayload(i int) []byte {
	return fmt.Appendf(nil, `{"n":%d,"blob":"%s"}`, i, strings.Repeat("p", 60<<10))
}

// heapObjects reads the bytes of heap objects, live or not yet swept,
// without stopping the world.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// statusKB reads a field (VmRSS, VmHWM) of /proc/self/status in bytes.
func statusKB(t *testing.T, field string) uint64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("/proc/self/status has no %s", field)
	return 0
}

// Memory per request is bounded: 16 parallel creates of the largest body
// the default limit takes and 8 parallel 200-row lists of large
// operations, through the real HTTP server in this process, raise the Go
// heap by less than heapBound and the resident set by less than rssBound.
//
// Memory is the whole process's, so the measurement runs alone in a test
// process of its own (this binary, run for this test only), while the
// test that starts it runs in parallel with the others: run serially in
// this process it held every parallel test back for its 23 s (over 100 s
// on a loaded machine).
func TestMemory_PerRequestBounded(t *testing.T) {
	if os.Getenv(memoryChildEnv) == "" {
		t.Parallel()
		cmd := exec.Command(os.Args[0], "-test.run=^TestMemory_PerRequestBounded$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), memoryChildEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestMemory_PerRequestBounded") {
			t.Fatalf("the measuring process: %v\n%s", err, out)
		}
		t.Logf("the measuring process:\n%s", out)
		return
	}
	storetest.Each(t, func(t *testing.T, h ledgertest.Harness) {
		s := h.New(t, time.Now).(store)
		e, _ := serveHTTP(t, s, web.Config{}, web.DefaultServerLimits)
		e.client.Timeout = 3 * time.Minute // a loaded machine: the bound is memory, not time
		ctx := context.Background()

		// 200 operations of about 60 KiB each, straight into the store:
		// enough that lists loading their payloads would hold three times
		// the heap bound, few enough to write quickly into SQLite under
		// -race on a loaded machine.
		const rows = 200
		var wg sync.WaitGroup
		errs := make(chan error, rows)
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < rows; i += 4 {
					_, _, err := s.Create(ctx, ledger.NewOperation{Tenant: "acme", Type: "charge",
						IntentRef: fmt.Sprintf("large-%d", i), Target: "payments", Payload: largePayload(i)})
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}

		// Bodies of exactly the default limit.
		bodies := make([]string, 16)
		for i := range bodies {
			b := fmt.Sprintf(`{"target":"payments","operation_type":"charge","intent_ref":"max-%d","payload":{"pad":""}}`, i)
			bodies[i] = strings.Replace(b, `"pad":""`, `"pad":"`+strings.Repeat("m", web.DefaultBodyLimit-len(b))+`"`, 1)
		}

		runtime.GC()
		heapBefore, rssBefore := heapObjects(), statusKB(t, "VmRSS")
		resetHWM := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
		defer debug.SetGCPercent(debug.SetGCPercent(20))

		stop, peak := make(chan struct{}), make(chan uint64)
		go func() {
			var most uint64
			for {
				most = max(most, heapObjects())
				select {
				case <-stop:
					peak <- most
					return
				case <-time.After(200 * time.Microsecond):
				}
			}
		}()
		start := time.Now()
		statuses := make(chan string, 24)
		send := func(method, path, body string) (int, []byte) {
			req, _ := http.NewRequest(method, e.base+path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+e.token)
			req.Header.Set("Content-Type", "application/json")
			resp, err := e.client.Do(req)
			if err != nil {
				return 0, []byte(err.Error())
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, b
		}
		for _, body := range bodies {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// A loaded server sheds a create with 503 and Retry-After;
				// a client sends the same intent again, as here.
				status, _ := send(http.MethodPost, "/api/v1/operations", body)
				retried := false
				for try := 0; status == http.StatusServiceUnavailable && try < 20; try++ {
					time.Sleep(time.Second)
					status, _ = send(http.MethodPost, "/api/v1/operations", body)
					retried = true
				}
				if retried && status == http.StatusOK { // created by an attempt whose answer was shed
					status = http.StatusCreated
				}
				statuses <- fmt.Sprintf("create %d", status)
			}()
		}
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				status, b := send(http.MethodGet, "/api/v1/operations?limit=200", "")
				var page struct{ Operations []json.RawMessage }
				_ = json.Unmarshal(b, &page)
				statuses <- fmt.Sprintf("list %d %d", status, len(page.Operations))
			}()
		}
		wg.Wait()
		close(stop)
		heapGrowth := int64(<-peak) - int64(heapBefore)
		took := time.Since(start)
		close(statuses)
		for st := range statuses {
			if st != "create 201" && st != "list 200 200" {
				t.Errorf("unexpected answer: %s", st)
			}
		}

		var rssGrowth int64 = -1
		if resetHWM == nil {
			rssGrowth = int64(statusKB(t, "VmHWM")) - int64(rssBefore)
		}
		t.Logf("16 creates of %d bytes and 8 lists of %d large operations in %s: heap peak +%.1f MiB (bound %d MiB), RSS peak +%.1f MiB (bound %d MiB, race %v)",
			web.DefaultBodyLimit, rows, took.Round(time.Millisecond), float64(heapGrowth)/(1<<20), heapBound>>20,
			float64(rssGrowth)/(1<<20), rssBound>>20, raceEnabled)
		if heapGrowth > heapBound {
			t.Errorf("the heap grew by %.1f MiB, more than %d MiB", float64(heapGrowth)/(1<<20), heapBound>>20)
		}
		if !raceEnabled && rssGrowth > rssBound {
			t.Errorf("the resident set grew by %.1f MiB, more than %d MiB", float64(rssGrowth)/(1<<20), rssBound>>20)
		}
	})
}
