package web_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"settle/web"
)

// A flood of 503 overloaded refusals is logged at WARN, never ERROR, and
// rate-limited: 30 refusals make at most a burst of lines, and the
// refusal keeps its message for the client.
func TestLimits_OverloadLoggedAtWarnRateLimited(t *testing.T) {
	t.Parallel()
	stores(t, func(t *testing.T, open func(t *testing.T) store) {
		s := open(t)
		var logs lockedBuffer
		g := gatedStore{store: s, entered: make(chan struct{}, 1), gate: make(chan struct{})}
		e := serve(t, s, web.Config{Store: g, Logger: slog.New(slog.NewTextHandler(&logs, nil)), Limits: web.Limits{MaxCreates: 1, CreateWait: 10 * time.Millisecond}})
		held := make(chan response, 1)
		go func() { held <- e.post(createWith("held", `{"amount":1}`)) }()
		<-g.entered
		var wg sync.WaitGroup
		for i := range 30 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.post(createWith(fmt.Sprintf("refused-%d", i), `{"amount":1}`))
				wantError(t, r, http.StatusServiceUnavailable, "overloaded")
				if msg := r.json(t)["message"].(string); !strings.Contains(msg, "too many creates") {
					t.Errorf("message %q", msg)
				}
			}()
		}
		wg.Wait()
		close(g.gate)
		<-held
		out := logs.String()
		if strings.Contains(out, "level=ERROR") {
			t.Fatalf("a 503 logged at ERROR:\n%s", out)
		}
		n := strings.Count(out, `level=WARN msg="request refused: overloaded"`)
		if n < 1 || n > 12 {
			t.Fatalf("%d WARN lines for 30 refusals; want 1 to a burst of 10 (and a second's worth):\n%s", n, out)
		}
	})
}
