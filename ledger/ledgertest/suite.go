package ledgertest

import (
	"settle/ledger"
	"testing"
	"time"
)

// Run runs the whole conformance suite against the stores h makes. Its
// groups run in parallel, as do their tests (setup), so that one group's
// slowest test does not hold back the others: each test has its own store.
// The groups with the longest tests start first. (A group that is one
// test calls setup itself.)
func Run(t *testing.T, h Harness) {
	t.Run("Concurrency", func(t *testing.T) { t.Parallel(); testConcurrency(t, h) })
	t.Run("SweepAndLease", func(t *testing.T) { t.Parallel(); testSweepAndLease(t, h) })
	t.Run("Browse", func(t *testing.T) { t.Parallel(); testBrowse(t, h) })
	t.Run("Property", func(t *testing.T) { t.Parallel(); testProperty(t, h) })
	t.Run("Retention", func(t *testing.T) { t.Parallel(); RunRetention(t, h) })
	t.Run("Record", func(t *testing.T) { t.Parallel(); testRecord(t, h) })
	t.Run("Create", func(t *testing.T) { t.Parallel(); testCreate(t, h) })
	t.Run("GroupCommit", func(t *testing.T) { t.Parallel(); testGroupCommit(t, h) })
	t.Run("Read", func(t *testing.T) { t.Parallel(); testRead(t, h) })
	t.Run("List", func(t *testing.T) { t.Parallel(); testList(t, h) })
	t.Run("Queue", func(t *testing.T) { t.Parallel(); testQueue(t, h) })
	t.Run("Summary", func(t *testing.T) { t.Parallel(); testSummary(t, h) })
	t.Run("Tokens", func(t *testing.T) { testTokens(t, h, nil) })
	// The same rules through the API's cache, whose revocations take effect
	// at once (a revocation elsewhere: within ledger.TokenCacheTTL).
	t.Run("Tokens/Cached", func(t *testing.T) {
		testTokens(t, h, func(s ledger.TokenStore, now func() time.Time) ledger.TokenStore {
			return ledger.NewTokenCache(s, now)
		})
	})
	t.Run("Tenants", func(t *testing.T) { testTenants(t, h) })
	t.Run("TokenNames", func(t *testing.T) { testTokenNames(t, h) })
	t.Run("TokenRates", func(t *testing.T) { testTokenRates(t, h) })
	t.Run("Inbox", func(t *testing.T) { t.Parallel(); testInbox(t, h) })
	t.Run("InboxFailures", func(t *testing.T) { testInboxFailures(t, h) })
	t.Run("Audit", func(t *testing.T) { t.Parallel(); RunAudit(t, h) })
	t.Run("Review", func(t *testing.T) { t.Parallel(); RunReview(t, h) })
	t.Run("Callbacks", func(t *testing.T) { t.Parallel(); RunCallbacks(t, h) })
	t.Run("Escalations", func(t *testing.T) { t.Parallel(); RunEscalations(t, h) })
	t.Run("Sessions", func(t *testing.T) { t.Parallel(); RunSessions(t, h) })
	t.Run("TenantParams", func(t *testing.T) { t.Parallel(); RunTenantParams(t, h) })
	t.Run("Drills", func(t *testing.T) { t.Parallel(); RunDrills(t, h) })
	t.Run("Leader", func(t *testing.T) { t.Parallel(); RunLeader(t, h) })
	t.Run("Resolutions", func(t *testing.T) { testResolutions(t, h) })
	t.Run("ResolutionKinds", func(t *testing.T) { testResolutionKinds(t, h) })
	t.Run("Tamper", func(t *testing.T) { testTamper(t, h) })
	t.Run("Supersede", func(t *testing.T) { testSupersede(t, h) })
	t.Run("Figures", func(t *testing.T) { testFigures(t, h) })
	t.Run("Gauges", func(t *testing.T) { testGauges(t, h) })
	t.Run("FigureRollups", func(t *testing.T) { testFigureRollups(t, h) })
	t.Run("SeedFigures", func(t *testing.T) { testSeedFigures(t, h) })
	t.Run("Claim", func(t *testing.T) { t.Parallel(); testClaim(t, h) })
	t.Run("Window", func(t *testing.T) { t.Parallel(); testWindow(t, h) })
	t.Run("TargetLeases", func(t *testing.T) { t.Parallel(); testTargetLeases(t, h) })
	t.Run("Observer", func(t *testing.T) { testObserver(t, h) })
	t.Run("Observations", func(t *testing.T) { RunObservations(t, h) })
}
