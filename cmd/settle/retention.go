package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"settle/ledger"
)

// retentionFlags registers the retention rule's flags on fs and returns
// the policy they fill in when fs is parsed (go/no-go control 10).
// Durations are Go durations, or whole days with a d suffix (30d).
func retentionFlags(fs *flag.FlagSet) *ledger.RetentionPolicy {
	p := &ledger.RetentionPolicy{}
	fs.StringVar(&p.Owner, "retention-owner", "", "named owner (team or person) of retention and deletion of ledger data")
	fs.Var((*days)(&p.RedactPayloadsAfter), "redact-payloads-after", "redact payloads of final operations this long after they end (e.g. 30d; 0: never)")
	fs.Var((*days)(&p.DeleteOperationsAfter), "delete-operations-after", "delete final operations and their events after this long (e.g. 365d; 0: never)")
	fs.Var((*days)(&p.PurgeReviewedAfter), "purge-reviewed-after", "purge reviewed quarantine items and processed deliveries after this long (0: never)")
	return p
}

// days is a flag.Value for a duration that also takes whole days ("30d").
type days time.Duration

func (d *days) String() string {
	if d == nil || *d == 0 {
		return "0"
	}
	if v := time.Duration(*d); v%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", v/(24*time.Hour))
	}
	return time.Duration(*d).String()
}

func (d *days) Set(s string) error {
	v, err := parseDays(s)
	if err != nil {
		return err
	}
	*d = days(v)
	return nil
}

// parseDays reads a Go duration or a whole number of days ("90d").
func parseDays(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		v, err := strconv.Atoi(n)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("%q is not a number of days (e.g. 30d)", s)
		}
		return time.Duration(v) * 24 * time.Hour, nil
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a duration (e.g. 720h or 30d)", s)
	}
	return v, nil
}
