package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"settle/ledger"
	"settle/target/sim"
)

// demoTenants are the playground's tenants; each gets an API token at start.
var demoTenants = [...]string{"acme", "globex"}

// demoEvery is the pace of the playground's trickle of operations.
const demoEvery = 2500 * time.Millisecond

// demoScenario is one operation of the trickle: the target it goes to and
// the fault scripted on that target's simulator for its first send.
type demoScenario struct {
	target, opType string
	fault          sim.Fault
}

// demoScenarios run in this order, round and round (an odd number, so that
// each meets both tenants). The first four already show every state:
// Confirmed, Confirmation pending (a dropped answer on the lagging target,
// which sends no webhooks), Under review (a 503 from a target that offers
// no way to confirm) and Not applied (a 429, documented as no side effect).
// Only the trickle writes to the class B and D targets and they are never
// re-sent to, so a scripted fault meets exactly the operation it was
// scripted for; on "demo" a replay may take it, which changes nothing
// that matters: every fault there is settled by a replay.
var demoScenarios = [...]demoScenario{
	{demoCards, "charge", sim.None},
	{demoTransfers, "transfer", sim.DropAfterCommit},
	{demoLegacy, "invoice", sim.FailBeforeCommit},
	{demoTransfers, "transfer", sim.RateLimited},
	{demoCards, "charge", sim.DropAfterCommit},
	{demoLegacy, "invoice", sim.None},
	{demoTransfers, "transfer", sim.FailBeforeCommit},
	// The invoice exists but the answer was a 500: the reconciler escalates
	// it, unless the target's webhook reporting it confirms it first; a
	// webhook that comes after the escalation goes to quarantine.
	{demoLegacy, "invoice", sim.FailAfterCommit},
	{demoCards, "charge", sim.FailAfterCommit},
}

// tokenStore is the one thing the playground needs from the store's API
// tokens.
type tokenStore interface {
	ledger.TenantStore
	CreateToken(ctx context.Context, t ledger.Token) error
}

// demoToken creates an API token for tenant and returns its secret. The
// secret stays in memory: it is never printed or logged.
func demoToken(ctx context.Context, tokens tokenStore, tenant string) (string, error) {
	secret, t, err := ledger.NewToken(tenant, "demo playground", time.Now())
	if err != nil {
		return "", err
	}
	// Issuing a token is an admin's action, recorded with who did it; the
	// demo's tenants are created by the demo, on purpose.
	ctx = ledger.NewContextWithActor(ctx, ledger.Actor{Subject: "demo:playground", Name: "demo playground", Role: "admin"})
	if _, err := ensureTenant(ctx, tokens, tenant); err != nil {
		return "", fmt.Errorf("demo tenant %s: %w", tenant, err)
	}
	if err := tokens.CreateToken(ctx, t); err != nil {
		return "", fmt.Errorf("demo token for %s: %w", tenant, err)
	}
	return secret, nil
}

// startPlayground creates the demo tenants' tokens, says where the console
// is, and starts the trickle of operations against this server's own API
// at base. The returned stop ends the trickle, waiting for an operation
// being registered, and must be called before the server shuts down; it
// is never nil.
func startPlayground(ctx context.Context, tokens tokenStore, targets demoTarget, base string,
	log *slog.Logger) (stop func(), err error) {
	t := &trickle{base: base, targets: targets, log: log.With("component", "demo"),
		client: &http.Client{Timeout: 10 * time.Second},
		// Intent references differ between runs on the same database: a
		// number growing with the start time, ten per second.
		next: int(time.Now().Unix()%100_000) * 10}
	for i, tenant := range demoTenants {
		if t.tokens[i], err = demoToken(ctx, tokens, tenant); err != nil {
			return func() {}, err
		}
	}
	// The one line a newcomer needs: where to go, and that anyone on this
	// machine can sign in.
	t.log.Info("playground ready: open the console and sign in as a demo user", "console", base+"/",
		"demo_sign_in", "enabled (loopback only)", "tenants", demoTenants[0]+","+demoTenants[1], "every", demoEvery)

	tctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); t.run(tctx) }()
	return func() { cancel(); wg.Wait() }, nil
}

// trickle registers one operation every demoEvery through the real API,
// alternating tenants and going round demoScenarios.
type trickle struct {
	base    string
	tokens  [len(demoTenants)]string
	targets demoTarget
	client  *http.Client
	log     *slog.Logger
	next    int // the number in the next intent reference
	n       int // operations attempted
	// dupe is the remote key of a confirmed charge the simulator will copy
	// behind settle's back, so that the auditor finds a duplicate for the
	// owners' Findings page; "" when none is waiting.
	dupe      string
	dupeTries int
}

// demoDupeEvery is how many rounds of demoScenarios pass between two
// silent duplicates: the first round's charge is copied, then one in
// every demoDupeEvery rounds.
const demoDupeEvery = 8

// duplicate copies the waiting charge at the simulator once its original
// exists, giving up after a few tries (its send may have failed).
func (t *trickle) duplicate() {
	s := t.targets.sim(demoCards)
	if t.dupe == "" || s == nil {
		return
	}
	t.dupeTries++
	if _, err := s.Duplicate(t.dupe); err == nil || t.dupeTries >= 5 {
		t.dupe, t.dupeTries = "", 0
	}
}

func (t *trickle) run(ctx context.Context) {
	tick := time.NewTicker(demoEvery)
	defer tick.Stop()
	for {
		// Registration is not cut off by stop: it ends with the ledger row
		// committed or not, and the server is still up until stop returns.
		t.one(context.WithoutCancel(ctx))
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// one registers the next operation. Failures are logged and the trickle
// goes on: the playground must not stop the server.
func (t *trickle) one(ctx context.Context) {
	t.duplicate()
	round := t.n / len(demoScenarios)
	copyIt := t.n%len(demoScenarios) == 0 && round%demoDupeEvery == 0
	sc := demoScenarios[t.n%len(demoScenarios)]
	tenant := t.n % len(demoTenants)
	t.n++
	t.next++
	ref := fmt.Sprintf("order-%d", t.next)
	if tenant == 1 {
		ref = fmt.Sprintf("inv-%d", t.next)
	}
	currency := [...]string{"EUR", "USD", "GBP"}[rand.IntN(3)]
	body, _ := json.Marshal(map[string]any{
		"target": sc.target, "operation_type": sc.opType, "intent_ref": ref,
		"payload": map[string]any{"amount": 500 + 50*rand.IntN(500), "currency": currency},
	})
	if s := t.targets.sim(sc.target); s != nil && sc.fault != sim.None {
		s.Script(sc.fault)
	}
	ctx, cancel := context.WithTimeout(ctx, t.client.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.base+"/api/v1/operations", bytes.NewReader(body))
	if err != nil {
		t.log.Error("request not built", "err", err)
		return
	}
	req.Header.Set("Authorization", "Bearer "+t.tokens[tenant])
	req.Header.Set("Content-Type", "application/json")
	resp, err := t.client.Do(req)
	if err != nil {
		t.log.Warn("operation not registered", "intent_ref", ref, "err", err)
		return
	}
	defer resp.Body.Close()
	var created struct {
		RemoteKey string `json:"remote_key"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&created)
	_, _ = io.Copy(io.Discard, resp.Body)
	if copyIt && resp.StatusCode == http.StatusCreated {
		t.dupe, t.dupeTries = created.RemoteKey, 0
	}
	if resp.StatusCode != http.StatusCreated {
		t.log.Warn("operation not registered", "intent_ref", ref, "status", resp.StatusCode)
		return
	}
	t.log.Debug("operation registered", "tenant", demoTenants[tenant], "target", sc.target,
		"intent_ref", ref, "fault", sc.fault.String())
}
