package reconciler

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"settle/deliver"
	"settle/ledger"
	"settle/target"
)

// Digest sends each owning team with an owner.notify endpoint a daily
// digest of its overdue operations: ESCALATED for longer than Overdue, and
// UNKNOWN past their deadline. It is a cluster-wide duty: run it under an
// Elector ("digest"). Once per UTC day per team, from SendAt on: a digest
// acknowledged with a 2xx is recorded (ledger.EscalationStore.RecordDigest)
// and not sent again that day, by this leader or the next; one that fails
// is tried again at the next tick. A team with nothing overdue gets no
// digest that day.
type Digest struct {
	Store     ledger.Store
	Digests   ledger.EscalationStore
	Contracts ContractSet
	Secrets   NotifySecrets
	// ConsoleURL is the console's base URL, for links; "" leaves them out.
	ConsoleURL string
	Log        *slog.Logger
	Now        func() time.Time // nil: time.Now
	Client     *http.Client     // nil: a 10s timeout; redirects never followed

	SendAt  time.Duration // time of day (UTC) from which the day's digest is due (default 08:00)
	Overdue time.Duration // an escalation older than this is overdue (default 24h)
	Oldest  int           // oldest items listed per kind (default 10)
	Tick    time.Duration // how often to check (default 1m)
	// Scan bounds the operations read per target and state (default
	// 10000); past it the counts are lower bounds, marked so.
	Scan int

	once   sync.Once
	client *http.Client
}

func (d *Digest) init() {
	if d.SendAt <= 0 {
		d.SendAt = 8 * time.Hour
	}
	def(&d.Overdue, 24*time.Hour)
	def(&d.Oldest, 10)
	def(&d.Tick, time.Minute)
	def(&d.Scan, 10000)
	if d.Now == nil {
		d.Now = time.Now
	}
	d.client = deliver.NoRedirects(d.Client)
}

// Run sends the digests that are due at every tick until ctx is cancelled.
func (d *Digest) Run(ctx context.Context) error {
	d.once.Do(d.init)
	t := time.NewTicker(d.Tick)
	defer t.Stop()
	for {
		if err := d.SendDue(ctx); err != nil && ctx.Err() == nil {
			d.Log.Error("digest failed; tried again at the next tick", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// DigestItem is one overdue operation in a digest.
type DigestItem struct {
	Target      string     `json:"target"`
	Tenant      string     `json:"tenant"`
	OperationID string     `json:"operation_id"`
	IntentRef   string     `json:"intent_ref"`
	State       string     `json:"state"`
	Since       time.Time  `json:"since"` // when it reached State
	Deadline    *time.Time `json:"deadline,omitempty"`
	ConsoleURL  string     `json:"console_url,omitempty"`
}

// DigestMessage is the settle-format body of a digest.
type DigestMessage struct {
	Event string `json:"event"`
	Team  string `json:"team"`
	Day   string `json:"day"` // YYYY-MM-DD, UTC
	// Counts of overdue operations; Capped says a count stopped at Scan.
	Escalated      int          `json:"escalated_overdue"`
	UnknownOverdue int          `json:"unknown_past_deadline"`
	Capped         bool         `json:"capped,omitempty"`
	OldestItems    []DigestItem `json:"oldest"` // the oldest of each kind, oldest first
	SentAt         time.Time    `json:"sent_at"`
}

// SendDue sends every team's digest that is due now and not yet recorded
// for today. It returns the first error; other teams are still tried.
func (d *Digest) SendDue(ctx context.Context) error {
	d.once.Do(d.init)
	now := d.Now().UTC()
	day := now.Format(time.DateOnly)
	midnight := now.Truncate(24 * time.Hour)
	if now.Before(midnight.Add(d.SendAt)) {
		return nil
	}
	var first error
	for team, targets := range d.teams() {
		if err := d.sendTeam(ctx, team, targets, day, now); err != nil && first == nil {
			first = fmt.Errorf("team %s: %w", team, err)
		}
	}
	return first
}

// teams groups the targets with an owner.notify block by team; a team's
// digest goes to the endpoint of its first target (by name).
func (d *Digest) teams() map[string][]*target.Contract {
	out := map[string][]*target.Contract{}
	names := d.Contracts.Names()
	slices.Sort(names)
	for _, name := range names {
		c, ok := d.Contracts.Get(name)
		if ok && c.Owner.Notify != nil {
			out[c.Owner.Team] = append(out[c.Owner.Team], c)
		}
	}
	return out
}

func (d *Digest) sendTeam(ctx context.Context, team string, targets []*target.Contract, day string, now time.Time) error {
	sent, err := d.Digests.DigestSent(ctx, team, day)
	if err != nil || sent {
		return err
	}
	m := DigestMessage{Event: DigestEvent, Team: team, Day: day, SentAt: now}
	var esc, unk []DigestItem
	for _, c := range targets {
		// The escalation queue's own rule (ledger.AwaitsPerson, as the
		// console and settle escalation queue read it); an escalation is
		// overdue once it has waited longer than Overdue.
		e, capped, err := d.overdue(ctx, c.Name, ledger.Escalated, func(op ledger.Operation) bool {
			return ledger.AwaitsPerson(op, now) && now.Sub(op.UpdatedAt) >= d.Overdue
		})
		if err != nil {
			return err
		}
		u, capped2, err := d.overdue(ctx, c.Name, ledger.Unknown, func(op ledger.Operation) bool {
			return ledger.AwaitsPerson(op, now)
		})
		if err != nil {
			return err
		}
		esc, unk, m.Capped = append(esc, e...), append(unk, u...), m.Capped || capped || capped2
	}
	m.Escalated, m.UnknownOverdue = len(esc), len(unk)
	if len(esc)+len(unk) == 0 {
		return nil
	}
	byAge := func(a, b DigestItem) int { return a.Since.Compare(b.Since) }
	slices.SortFunc(esc, byAge)
	slices.SortFunc(unk, byAge)
	m.OldestItems = append(esc[:min(len(esc), d.Oldest)], unk[:min(len(unk), d.Oldest)]...)
	n := targets[0].Owner.Notify
	var body any = m
	if n.Format == target.NotifySlack {
		body = m.slack()
	}
	status, err := deliver.Post(ctx, d.client, deliver.Message{Agent: "settle-escalations/1", URL: n.URL,
		Secret: d.secret(targets[0].Name), EventID: strconv.FormatInt(digestID(now), 10), Now: now, Body: body})
	if err != nil {
		return err
	}
	if err := d.Digests.RecordDigest(ctx, team, day, now); err != nil {
		return fmt.Errorf("sent, not recorded; it may be sent again: %w", err)
	}
	d.Log.Info("digest sent", "team", team, "day", day, "status", status,
		"escalated_overdue", m.Escalated, "unknown_past_deadline", m.UnknownOverdue)
	return nil
}

// digestID is the Settle-Event-Id of a digest: the day as YYYYMMDD, the
// same for every attempt of that day's digest.
func digestID(now time.Time) int64 {
	y, mo, dd := now.Date()
	return int64(y*10000 + int(mo)*100 + dd)
}

func (d *Digest) secret(target string) []byte {
	if d.Secrets == nil {
		return nil
	}
	return d.Secrets.NotifySecret(target)
}

// overdue lists the target's operations in state that keep says are
// overdue, across tenants, reading at most Scan of them.
func (d *Digest) overdue(ctx context.Context, tgt string, state ledger.State, keep func(ledger.Operation) bool) ([]DigestItem, bool, error) {
	var (
		out    []DigestItem
		read   int
		cursor string
	)
	for {
		p, err := d.Store.List(ctx, ledger.ListFilter{AllTenants: true, State: state, Target: tgt,
			Limit: ledger.MaxListLimit, Cursor: cursor})
		if err != nil {
			return nil, false, fmt.Errorf("list %s: %w", state, err)
		}
		for _, op := range p.Operations {
			read++
			if !keep(op) {
				continue
			}
			it := DigestItem{Target: op.Target, Tenant: op.Tenant, OperationID: op.ID, IntentRef: op.IntentRef,
				State: string(op.State), Since: op.UpdatedAt.UTC()}
			if op.Deadline != nil {
				dl := op.Deadline.UTC()
				it.Deadline = &dl
			}
			if d.ConsoleURL != "" {
				it.ConsoleURL = strings.TrimRight(d.ConsoleURL, "/") + "/operations/" + url.PathEscape(op.Tenant) +
					"/" + url.PathEscape(op.ID)
			}
			out = append(out, it)
		}
		if p.Next == "" {
			return out, false, nil
		}
		if read >= d.Scan {
			return out, true, nil
		}
		cursor = p.Next
	}
}

func (m DigestMessage) slack() slackBody {
	more := ""
	if m.Capped {
		more = " (at least)"
	}
	text := fmt.Sprintf("settle daily digest for %s, %s: %d escalated for too long, %d unknown past their deadline%s",
		m.Team, m.Day, m.Escalated, m.UnknownOverdue, more)
	blocks := []slackBlock{section("*" + slackEscape(text) + "*")}
	var b strings.Builder
	for _, it := range m.OldestItems {
		line := fmt.Sprintf("• %s %s `%s` (tenant %s, ref %s) since %s", it.State, slackEscape(it.Target),
			slackEscape(it.OperationID), slackEscape(it.Tenant), slackEscape(it.IntentRef), it.Since.Format(time.RFC3339))
		if it.ConsoleURL != "" {
			line += " <" + it.ConsoleURL + "|open>"
		}
		b.WriteString(line + "\n")
	}
	if b.Len() > 0 {
		blocks = append(blocks, section(strings.TrimSuffix(b.String(), "\n")))
	}
	return slackBody{Text: text, Blocks: blocks}
}
