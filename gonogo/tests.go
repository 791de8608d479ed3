package gonogo

// Test is one of the drill's fault-injection tests: the paper's six
// ("Fault-injection tests to run before release") and a seventh for
// control 11, legitimate repeat operations.
type Test struct {
	Number int
	Name   string // machine name stored with each result
	Title  string // what it injects and what it expects
}

// Tests are the drill's tests in order. The numbers are stored with every
// result, so they never change meaning.
var Tests = []Test{
	{1, "response_lost", "server commits, response dropped: UNKNOWN, then SUCCEEDED by reconciliation, exactly one remote object"},
	{2, "worker_killed", "worker killed after sending, before recording: UNKNOWN through lease expiry"},
	{3, "claim_race", "two workers race to claim one operation: exactly one sender"},
	{4, "payload_changed", "same intent, changed payload: rejected, nothing sent"},
	{5, "lookup_lag", "lookup finds nothing while the target lags: UNKNOWN persists, never FAILED_TERMINAL"},
	{6, "inbound_unmatched", "unmatched and cross-tenant inbound events: quarantined, no state change"},
	{7, "legitimate_repeat", "two identical-looking operations with different intent references: both execute"},
}

// TestByNumber returns the test numbered n.
func TestByNumber(n int) (Test, bool) {
	for _, t := range Tests {
		if t.Number == n {
			return t, true
		}
	}
	return Test{}, false
}
