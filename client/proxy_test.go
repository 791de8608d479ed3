package client

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// faultProxy stands between a client and settle. Each POST is forwarded
// to settle and settle's answer read whole (so a registration is
// committed), and then the answer is dealt with as the next step of plan
// says: "drop" closes the connection without an answer, "stall" answers
// nothing until the client gives up, "500" answers settle's internal
// error in its place, "502" a proxy's plain-text Bad Gateway; "pass", and
// every request once plan is used up, passes settle's answer on. Other
// methods pass through.
type faultProxy struct {
	URL string

	mu    sync.Mutex
	plan  []string
	posts int // POSTs forwarded to settle
}

func newFaultProxy(t *testing.T, upstream string, plan ...string) *faultProxy {
	p := &faultProxy{plan: plan}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		req, err := http.NewRequest(r.Method, upstream+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			t.Errorf("proxy: %v", err)
			return
		}
		req.Header = r.Header.Clone()
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Errorf("proxy: settle did not answer: %v", err)
			return
		}
		answer, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Errorf("proxy: reading settle's answer: %v", err)
			return
		}
		step := "pass"
		if r.Method == http.MethodPost {
			p.mu.Lock()
			p.posts++
			if len(p.plan) > 0 {
				step, p.plan = p.plan[0], p.plan[1:]
			}
			p.mu.Unlock()
		}
		switch step {
		case "drop":
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Errorf("proxy: hijack: %v", err)
				return
			}
			conn.Close()
		case "stall":
			<-r.Context().Done()
		case "500":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "internal", "message": "internal error"})
		case "502":
			http.Error(w, "bad gateway", http.StatusBadGateway)
		default:
			for k, v := range resp.Header {
				w.Header()[k] = v
			}
			w.WriteHeader(resp.StatusCode)
			_, _ = w.Write(answer)
		}
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// forwarded is how many POSTs reached settle.
func (p *faultProxy) forwarded() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.posts
}
