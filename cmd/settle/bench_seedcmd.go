package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"settle/ledger"
)

// benchSeedCmd is `settle bench seed`.
type benchSeedCmd struct {
	DatabaseURL string `name:"database-url" help:"postgres://… to seed (its current schema, migrated first, must hold no operations); empty means the SQLite file --sqlite names"`
	SQLite      string `name:"sqlite" placeholder:"FILE" help:"SQLite file to create and seed when --database-url is empty"`
	Ops         int    `default:"100000" help:"operations to load"`
	Tenants     int    `default:"200" help:"tenants to spread them over (a few large, a long tail of small)"`
}

// Help is the detail of settle bench seed --help.
func (benchSeedCmd) Help() string {
	return `Loads --ops operations over --tenants tenants into a migrated, empty ledger
for settle bench console: the operations, their event log (two to four
events each), the object ids the look-up finds them by, the tenants and
the figures' daily rollups, as a running ledger would hold them.

The shape: tenant sizes fall off as 1/rank (the largest of 200 holds 17%);
targets cards 60%, transfers 30%, payouts 8%, legacy-billing 2%; states
SUCCEEDED ~95% (3% of them settled by reconciliation), FAILED_TERMINAL 3%,
UNKNOWN 1% (under six days old), ESCALATED 0.5%, PREPARED and IN_FLIGHT
0.7% (under ten minutes old); creation times over 400 days, denser
towards now (about 40% in the last 30 days). The same --ops and --tenants
always give the same references.

PostgreSQL: the rows go in with COPY with the seeded tables' keys,
indexes and row triggers off; operation_objects is filled by one INSERT …
SELECT; then the indexes and keys are built, the figure rollups
backfilled (figure_rollup_backfill) and the tables vacuumed and analysed.
SQLite: batched multi-row INSERTs in one transaction with the seeded
tables' secondary indexes dropped and built again after (its triggers
stay on). It prints the time of each step.`
}

func (c *benchSeedCmd) check() error {
	switch {
	case c.DatabaseURL != "" && !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://"):
		return usagef("--database-url must be a postgres:// URL (for SQLite, use --sqlite FILE)")
	case c.DatabaseURL == "" && c.SQLite == "":
		return usagef("name the database to seed: --database-url postgres://… or --sqlite FILE")
	case c.DatabaseURL != "" && c.SQLite != "":
		return usagef("--database-url and --sqlite exclude each other")
	case c.Tenants < 1 || c.Tenants > 100000:
		return usagef("--tenants must be from 1 to 100000, not %d", c.Tenants)
	case c.Ops < c.Tenants:
		return usagef("--ops (%d) must be at least --tenants (%d)", c.Ops, c.Tenants)
	}
	return nil
}

func (c *benchSeedCmd) run(ctx context.Context, e *env) error {
	sh := newSeedShape(c.Ops, c.Tenants, time.Now())
	start := time.Now()
	var (
		steps []seedStep
		err   error
	)
	if c.DatabaseURL != "" {
		fmt.Fprintf(e.stdout, "settle bench seed: %d operations over %d tenants into PostgreSQL\n", c.Ops, c.Tenants)
		steps, err = seedPostgres(ctx, c.DatabaseURL, sh)
	} else {
		fmt.Fprintf(e.stdout, "settle bench seed: %d operations over %d tenants into SQLite %s\n", c.Ops, c.Tenants, c.SQLite)
		steps, err = seedSQLiteFile(ctx, c.SQLite, sh)
	}
	for _, s := range steps {
		fmt.Fprintf(e.stdout, "  %-28s %s\n", s.name, s.took.Round(time.Millisecond))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "seeded %d operations in %s\n", c.Ops, time.Since(start).Round(time.Millisecond))
	return nil
}

// seedStep is one timed step of a seed.
type seedStep struct {
	name string
	took time.Duration
}

// timed appends the step's duration to steps.
func timed(steps *[]seedStep, name string, f func() error) error {
	t := time.Now()
	err := f()
	*steps = append(*steps, seedStep{name, time.Since(t)})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// seedShape is the distribution settle bench seed loads: operation i
// (0…n-1) is a pure function of i, n and the tenants, so that the two
// tables can be written by separate COPYs and any step can regenerate it.
type seedShape struct {
	n       int
	tenants []string
	cum     []float64 // cumulative 1/rank weights of the tenants
	now     time.Time
}

// seedSpan is how far back creation times go.
const seedSpan = 400 * 24 * time.Hour

// seedTargets are the seeded targets, cumulative shares; legacy-billing
// is the rare one a target filter has to find among many.
var seedTargets = []struct {
	name  string
	share float64
}{{"cards", 0.60}, {"transfers", 0.90}, {"payouts", 0.98}, {"legacy-billing", 1}}

func newSeedShape(n, tenants int, now time.Time) seedShape {
	sh := seedShape{n: n, now: now.Truncate(time.Second)}
	total := 0.0
	for j := range tenants {
		sh.tenants = append(sh.tenants, fmt.Sprintf("tenant-%03d", j))
		total += 1 / float64(j+1)
		sh.cum = append(sh.cum, total)
	}
	for j := range sh.cum {
		sh.cum[j] /= total
	}
	return sh
}

// seedOp is one seeded operation and the story its events tell.
type seedOp struct {
	tenant, intent, target, remoteRef string
	id, key                           [16]byte
	state                             ledger.State
	reconciled                        bool // went through UNKNOWN on its way to its state
	created                           time.Time
	payload                           []byte
	events                            []seedEvent
}

// seedEvent is one row of the operation's event log.
type seedEvent struct {
	from, to      ledger.State // from "" is the creation
	actor, reason string
	fence         int64
	at            time.Time
}

// op returns operation i.
func (sh seedShape) op(i int) seedOp {
	r := rand.New(rand.NewPCG(0x5e771e, uint64(i)))
	op := seedOp{intent: "order-" + strconv.Itoa(i)}
	op.tenant = sh.tenants[sort.SearchFloat64s(sh.cum, r.Float64())%len(sh.tenants)]
	uuid4(&op.id, r)
	uuid4(&op.key, r)
	t := r.Float64()
	for _, tg := range seedTargets {
		if t < tg.share {
			op.target = tg.name
			break
		}
	}
	var age time.Duration
	longTail := time.Duration(math.Pow(r.Float64(), 3) * float64(seedSpan))
	switch s := r.Float64(); {
	case s < 0.004:
		op.state, age = ledger.Prepared, time.Duration(r.Float64()*float64(10*time.Minute))
	case s < 0.007:
		op.state, age = ledger.InFlight, time.Duration(r.Float64()*float64(10*time.Minute))
	case s < 0.017:
		op.state, age, op.reconciled = ledger.Unknown, time.Duration(math.Pow(r.Float64(), 2)*float64(6*24*time.Hour)), true
	case s < 0.022:
		op.state, age, op.reconciled = ledger.Escalated, longTail, true
	case s < 0.052:
		op.state, age = ledger.FailedTerminal, longTail
	default:
		op.state, age, op.reconciled = ledger.Succeeded, longTail, r.Float64() < 0.03
	}
	age += time.Minute // the newest a minute old, every step below before now
	op.created = sh.now.Add(-age).Truncate(time.Microsecond)
	if op.state == ledger.Succeeded || op.state == ledger.FailedTerminal && r.Float64() < 0.5 {
		op.remoteRef = fmt.Sprintf("ch_%016x", r.Uint64())
	}
	op.payload = fmt.Appendf(nil, `{"amount":%d,"currency":"EUR","order":%q}`, 100+r.IntN(100000), op.intent)
	// The story: created, claimed and sent, then the outcome directly or
	// through UNKNOWN (and a person's queue).
	at := func(d time.Duration, share float64) time.Time {
		return op.created.Add(min(d, time.Duration(float64(age)*share)))
	}
	ev := []seedEvent{{to: ledger.Prepared, actor: ledger.ActorAPI, at: op.created}}
	if op.state != ledger.Prepared {
		ev = append(ev, seedEvent{from: ledger.Prepared, to: ledger.InFlight, actor: ledger.ActorExecutor, fence: 1, at: at(100*time.Millisecond, 0.1)})
	}
	if op.reconciled {
		ev = append(ev, seedEvent{from: ledger.InFlight, to: ledger.Unknown, actor: ledger.ActorSweeper, fence: 1,
			reason: ledger.ReasonLeaseExpired, at: at(2*time.Minute, 0.2)})
	}
	switch {
	case op.state == ledger.Escalated:
		ev = append(ev, seedEvent{from: ledger.Unknown, to: ledger.Escalated, actor: ledger.ActorReconciler, fence: 1,
			reason: "the retry window ended without an answer", at: at(time.Hour+time.Duration(r.IntN(3600))*time.Second, 0.5)})
	case op.state == ledger.Succeeded || op.state == ledger.FailedTerminal:
		from, actor, d := ledger.InFlight, ledger.ActorExecutor, 400*time.Millisecond
		if op.reconciled {
			from, actor, d = ledger.Unknown, ledger.ActorReconciler, 3*time.Minute+time.Duration(r.IntN(1800))*time.Second
		}
		ev = append(ev, seedEvent{from: from, to: op.state, actor: actor, fence: 1, at: at(d, 0.5)})
	}
	op.events = ev
	return op
}

func uuid4(b *[16]byte, r *rand.Rand) {
	for k := 0; k < 16; k += 8 {
		v := r.Uint64()
		for j := range 8 {
			b[k+j] = byte(v >> (8 * j))
		}
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
}

// uuidText is b in its canonical text form.
func uuidText(b [16]byte) string {
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// seedLedgerColumns are the operation_ledger columns a seed writes, in
// the order of ledgerRow's values.
var seedLedgerColumns = []string{"tenant_id", "operation_id", "operation_type", "intent_ref", "target", "payload",
	"payload_hash", "remote_key", "state", "fence_token", "attempt_count", "lease_expires_at", "remote_ref",
	"retry_window_end", "retry_window_micros", "next_reconcile_at", "reason", "created_at", "updated_at",
	"last_sent_at", "first_claimed_at"}

// seedEventColumns are the operation_events columns, for eventRow.
var seedEventColumns = []string{"tenant_id", "operation_id", "from_state", "to_state", "fence_token", "actor", "reason", "at"}

const seedRetryWindow = 24 * time.Hour

// ledgerRow is op's operation_ledger row in neutral types: ids as 16
// bytes, times as time.Time, absent values nil.
func (op seedOp) ledgerRow() []any {
	hash := sha256.Sum256(op.payload)
	last := op.events[len(op.events)-1]
	var fence, attempts int64 = 1, 1
	var lease, ref, next, sent any
	reason := ""
	switch op.state {
	case ledger.Prepared:
		fence, attempts = 0, 0
	case ledger.InFlight:
		lease = op.created.Add(time.Minute)
	case ledger.Unknown:
		next, reason = last.at.Add(time.Minute), ledger.ReasonLeaseExpired
	case ledger.Escalated:
		reason = last.reason
	}
	if op.remoteRef != "" {
		ref = op.remoteRef
	}
	if op.state != ledger.Prepared {
		sent = op.events[1].at
	}
	return []any{op.tenant, op.id, "charge", op.intent, op.target, op.payload, hash[:], op.key, string(op.state),
		fence, attempts, lease, ref, op.created.Add(seedRetryWindow), seedRetryWindow.Microseconds(), next, reason,
		op.created, last.at, sent, sent}
}

// eventRows are op's operation_events rows, like ledgerRow.
func (op seedOp) eventRows() [][]any {
	rows := make([][]any, len(op.events))
	for k, e := range op.events {
		var from any
		if e.from != "" {
			from = string(e.from)
		}
		rows[k] = []any{op.tenant, op.id, from, string(e.to), e.fence, e.actor, e.reason, e.at}
	}
	return rows
}
