package ledger

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// RetentionPolicy is the deployment's retention and deletion rule (go/no-go control 10).
type RetentionPolicy struct {
	Owner                 string        // named owner of retention and deletion (team or person); "" = none
	RedactPayloadsAfter   time.Duration // 0 = never
	DeleteOperationsAfter time.Duration // 0 = never; must be ≥ RedactPayloadsAfter when both set
	PurgeReviewedAfter    time.Duration // quarantine items reviewed and webhook deliveries processed; 0 = never
}

// MinRetention is the shortest non-zero period a retention rule accepts.
// Anything shorter is almost certainly a unit mistake ("30s" for "30d"),
// and deleting an operation minutes after it settled would let a client's
// retry of the same intent create, and send, a second one.
const MinRetention = time.Hour

// MaxRetentionOwner bounds the owner's name, in characters.
const MaxRetentionOwner = 200

// Validate checks the policy: each period zero (never) or at least
// MinRetention; operations deleted no sooner than their payloads are
// redacted; an owner of printable text. Messages name the flag's setting.
func (p RetentionPolicy) Validate() error {
	for _, r := range []struct {
		name string
		d    time.Duration
	}{
		{"redact-payloads-after", p.RedactPayloadsAfter},
		{"delete-operations-after", p.DeleteOperationsAfter},
		{"purge-reviewed-after", p.PurgeReviewedAfter},
	} {
		if r.d < 0 {
			return Errorf(EInvalid, "%s must not be negative (0 means never), got %s", r.name, r.d)
		}
		if r.d > 0 && r.d < MinRetention {
			return Errorf(EInvalid, "%s must be 0 (never) or at least %s, got %s", r.name, MinRetention, r.d)
		}
	}
	if p.DeleteOperationsAfter > 0 && p.RedactPayloadsAfter > 0 && p.DeleteOperationsAfter < p.RedactPayloadsAfter {
		return Errorf(EInvalid, "delete-operations-after (%s) must not be shorter than redact-payloads-after (%s)",
			p.DeleteOperationsAfter, p.RedactPayloadsAfter)
	}
	if utf8.RuneCountInString(p.Owner) > MaxRetentionOwner || !utf8.ValidString(p.Owner) ||
		strings.IndexFunc(p.Owner, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return Errorf(EInvalid, "retention-owner must be at most %d printable characters", MaxRetentionOwner)
	}
	return nil
}

// Enabled reports whether any rule removes anything.
func (p RetentionPolicy) Enabled() bool {
	return p.RedactPayloadsAfter > 0 || p.DeleteOperationsAfter > 0 || p.PurgeReviewedAfter > 0
}

// Cutoffs returns the instants before which each rule applies at now; a
// rule that is off has a zero cutoff.
func (p RetentionPolicy) Cutoffs(now time.Time) RetentionCutoffs {
	at := func(d time.Duration) time.Time {
		if d <= 0 {
			return time.Time{}
		}
		return now.Add(-d)
	}
	return RetentionCutoffs{
		Redact: at(p.RedactPayloadsAfter),
		Delete: at(p.DeleteOperationsAfter),
		Purge:  at(p.PurgeReviewedAfter),
	}
}

// String describes the policy for people (settle purge, settle gonogo).
func (p RetentionPolicy) String() string {
	d := func(d time.Duration) string {
		if d <= 0 {
			return "never"
		}
		if d%(24*time.Hour) == 0 {
			return fmt.Sprintf("%dd", d/(24*time.Hour))
		}
		return d.String()
	}
	owner := p.Owner
	if owner == "" {
		owner = "none"
	}
	return fmt.Sprintf("owner %s; payloads redacted after %s; operations deleted after %s; reviewed items purged after %s",
		owner, d(p.RedactPayloadsAfter), d(p.DeleteOperationsAfter), d(p.PurgeReviewedAfter))
}

// RetentionCutoffs are the instants a retention pass works to: a zero time
// means the rule is off.
type RetentionCutoffs struct {
	// Redact: final operations whose last transition (updated_at) is
	// before it lose their payload; the hash stays.
	Redact time.Time
	// Delete: final operations whose last transition is before it are
	// deleted with their events, notifications, decided resolutions,
	// reviewed findings and payload conflicts. An operation with an audit
	// finding nobody has acknowledged or resolved stays until someone has.
	Delete time.Time
	// Purge: quarantine items resolved before it, and webhook deliveries
	// processed before it that no open quarantine item names.
	Purge time.Time
}

// RetentionCounts counts what a retention pass or a tenant's erasure
// removed, or, in a dry run, would remove, per kind.
type RetentionCounts struct {
	PayloadsRedacted  int // final operations whose payload was redacted
	Operations        int
	Events            int
	Notifications     int // callback notifications (callback_outbox)
	EscalationNotices int // notices to owning teams (escalation_outbox)
	Findings          int // audit findings
	Resolutions       int // manual-resolution proposals
	Conflicts         int // recorded payload conflicts
	Quarantine        int // quarantine items
	Deliveries        int // webhook deliveries (inbox)
	// Only a tenant's erasure removes these.
	Tokens    int // API tokens (hashes)
	Callbacks int // the callback endpoint and its secret
	Params    int // tenant parameters
	Actions   int // recorded human actions
	Rollups   int // figure rollup rows (days, episodes, escalations)
}

// Add adds o's counts to c.
func (c *RetentionCounts) Add(o RetentionCounts) {
	c.PayloadsRedacted += o.PayloadsRedacted
	c.Operations += o.Operations
	c.Events += o.Events
	c.Notifications += o.Notifications
	c.EscalationNotices += o.EscalationNotices
	c.Findings += o.Findings
	c.Resolutions += o.Resolutions
	c.Conflicts += o.Conflicts
	c.Quarantine += o.Quarantine
	c.Deliveries += o.Deliveries
	c.Tokens += o.Tokens
	c.Callbacks += o.Callbacks
	c.Params += o.Params
	c.Actions += o.Actions
	c.Rollups += o.Rollups
}

// RetentionKind is one line of RetentionCounts.Kinds.
type RetentionKind struct {
	Kind  string // e.g. "operations"
	Count int
}

// Kinds lists the counts in a fixed order with stable names, for printing.
func (c RetentionCounts) Kinds() []RetentionKind {
	return []RetentionKind{
		{"payloads_redacted", c.PayloadsRedacted},
		{"operations", c.Operations},
		{"events", c.Events},
		{"notifications", c.Notifications},
		{"escalation_notices", c.EscalationNotices},
		{"findings", c.Findings},
		{"resolutions", c.Resolutions},
		{"conflicts", c.Conflicts},
		{"quarantine", c.Quarantine},
		{"deliveries", c.Deliveries},
		{"tokens", c.Tokens},
		{"callbacks", c.Callbacks},
		{"params", c.Params},
		{"actions", c.Actions},
		{"rollups", c.Rollups},
	}
}

// Total is the sum of every count.
func (c RetentionCounts) Total() int {
	n := 0
	for _, k := range c.Kinds() {
		n += k.Count
	}
	return n
}

// RetentionStore applies a retention policy. Every method works on at most
// limit rows of its kind in one short transaction, so that a large backlog
// never holds one huge transaction: callers repeat it until it returns
// fewer than limit (ApplyRetention). EInvalid for a non-positive limit.
type RetentionStore interface {
	// CountRetention counts what the cutoffs would remove now (a dry run;
	// it changes nothing). Operations that Delete would remove are not
	// also counted as redacted.
	CountRetention(ctx context.Context, c RetentionCutoffs) (RetentionCounts, error)
	// RedactPayloads replaces the payload of up to limit final operations
	// last changed before cutoff, and not yet redacted, with the empty
	// marker (Operation.Redacted). The hash stays, so a repeated creation
	// of the intent is still answered by CheckSameIntent.
	RedactPayloads(ctx context.Context, before time.Time, limit int) (int, error)
	// DeleteOperations deletes up to limit final operations last changed
	// before cutoff, with the rows that name them (RetentionCutoffs.Delete).
	DeleteOperations(ctx context.Context, before time.Time, limit int) (RetentionCounts, error)
	// PurgeReviewed deletes up to limit quarantine items resolved before
	// cutoff, and up to limit webhook deliveries processed before it that
	// no open quarantine item names.
	PurgeReviewed(ctx context.Context, before time.Time, limit int) (RetentionCounts, error)
}

// ApplyRetention runs one whole retention pass: deletion first (so that
// nothing is redacted only to be deleted), then redaction, then the purge,
// each a batch of at most batch rows per transaction until a batch comes
// back short. It stops at the first error, returning what was done.
func ApplyRetention(ctx context.Context, s RetentionStore, c RetentionCutoffs, batch int) (RetentionCounts, error) {
	var done RetentionCounts
	if batch <= 0 {
		return done, Errorf(EInvalid, "retention batch must be positive")
	}
	if !c.Delete.IsZero() {
		for {
			n, err := s.DeleteOperations(ctx, c.Delete, batch)
			done.Add(n)
			if err != nil {
				return done, fmt.Errorf("delete operations: %w", err)
			}
			if n.Operations < batch {
				break
			}
		}
	}
	if !c.Redact.IsZero() {
		for {
			n, err := s.RedactPayloads(ctx, c.Redact, batch)
			done.PayloadsRedacted += n
			if err != nil {
				return done, fmt.Errorf("redact payloads: %w", err)
			}
			if n < batch {
				break
			}
		}
	}
	if !c.Purge.IsZero() {
		for {
			n, err := s.PurgeReviewed(ctx, c.Purge, batch)
			done.Add(n)
			if err != nil {
				return done, fmt.Errorf("purge reviewed: %w", err)
			}
			if n.Quarantine < batch && n.Deliveries < batch {
				break
			}
		}
	}
	return done, nil
}

// Redacted reports whether retention has removed the payload of an
// operation read with its payload (Get, Find, GetByIntent): a final one
// whose payload is empty, which no stored payload ever is (it is a JSON
// object). Summaries and listings carry no payload: do not ask them.
// Nothing needs a final operation's payload: creation compares hashes,
// and only PREPARED operations are claimed, checked and sent.
func (op Operation) Redacted() bool {
	return len(op.Payload) == 0 && op.State.Final()
}
