package deliver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"time"

	"settle/ledger"
)

// TestEvent is the "event" of a test delivery's body.
const TestEvent = "callback.test"

// TestResult is how an endpoint answered a test delivery.
type TestResult struct {
	Status int           // the HTTP status; 0 when none came back
	Took   time.Duration // from sending to the answer
	Err    error         // nil for a 2xx
}

// testMessage is a test delivery's body: no operation, so a receiver
// acknowledges it without acting on it.
type testMessage struct {
	Event  string    `json:"event"`
	Tenant string    `json:"tenant"`
	SentAt time.Time `json:"sent_at"`
}

// Test sends cb's endpoint one signed test message, as the notifier sends
// notifications (client must be Guarded by the deployment's policy), and
// says how it answered. Its Settle-Event-Id is "test-" and random hex, so
// that a receiver deduplicating on it never mistakes it for a
// notification; nothing is queued or retried, and the tenant's delivery
// status is left alone.
func Test(ctx context.Context, client *http.Client, policy ledger.CallbackPolicy, cb ledger.Callback, now time.Time) TestResult {
	if err := policy.CheckURL(cb.URL); err != nil {
		return TestResult{Err: err}
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	start := time.Now()
	status, err := Post(ctx, client, Message{Agent: "settle-callbacks/1", URL: cb.URL, Secret: cb.Secret,
		EventID: "test-" + hex.EncodeToString(id[:]), Now: now,
		Body: testMessage{Event: TestEvent, Tenant: cb.Tenant, SentAt: now.UTC()}})
	return TestResult{Status: status, Took: time.Since(start), Err: err}
}
