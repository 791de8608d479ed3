package web

import (
	"log/slog"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// Refusals a flood drives (503 overloaded, unsigned webhooks) are logged at
// WARN, at most warnBurst lines at once and warnRate a second after that:
// an attacker can make the server refuse a million requests, but not write
// a million log lines.
const (
	warnRate  = 1
	warnBurst = 10
)

// sheddingLog writes rate-limited WARN lines; a line that is written says
// how many were dropped since the one before, so the count is never lost.
type sheddingLog struct {
	log     *slog.Logger
	limit   *rate.Limiter
	dropped atomic.Int64
}

func newSheddingLog(log *slog.Logger) *sheddingLog {
	return &sheddingLog{log: log, limit: rate.NewLimiter(warnRate, warnBurst)}
}

// warn logs msg with args at WARN unless the rate is spent.
func (l *sheddingLog) warn(msg string, args ...any) {
	if !l.limit.AllowN(time.Now(), 1) {
		l.dropped.Add(1)
		return
	}
	if n := l.dropped.Swap(0); n > 0 {
		args = append(args, "suppressed_since_last", n)
	}
	l.log.Warn(msg, args...)
}
