package ledger

import "time"

// RetentionPolicy is the deployment's retention and deletion rule (go/no-go control 10).
type RetentionPolicy struct {
	Owner                 string        // named owner of retention and deletion (team or person); "" = none
	RedactPayloadsAfter   time.Duration // 0 = never
	DeleteOperationsAfter time.Duration // 0 = never; must be ≥ RedactPayloadsAfter when both set
	PurgeReviewedAfter    time.Duration // quarantine items reviewed and webhook deliveries processed; 0 = never
}

// Validate reports a rule that cannot hold: a negative age, or deletion
// before redaction.
func (p RetentionPolicy) Validate() error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"redact-payloads-after", p.RedactPayloadsAfter}, {"delete-operations-after", p.DeleteOperationsAfter},
		{"purge-reviewed-after", p.PurgeReviewedAfter}} {
		if d.v < 0 {
			return Errorf(EInvalid, "%s must not be negative", d.name)
		}
	}
	if p.RedactPayloadsAfter > 0 && p.DeleteOperationsAfter > 0 && p.DeleteOperationsAfter < p.RedactPayloadsAfter {
		return Errorf(EInvalid, "delete-operations-after (%s) must not be shorter than redact-payloads-after (%s)",
			p.DeleteOperationsAfter, p.RedactPayloadsAfter)
	}
	return nil
}
