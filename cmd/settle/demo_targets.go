package main

import (
	"crypto/rand"
	"fmt"
	"net"
	"time"

	"settle/target"
	"settle/target/sim"
)

// The demo playground's simulated targets. Each is a real simulator on
// loopback, so that every operation of the playground takes the production
// path: API, executor, target, reconciler, webhook.
const (
	// demoCards is the target "demo": class A (idempotency keys), so a
	// dropped or failed answer is settled by a same-key replay.
	demoCards = "demo"
	// demoTransfers is class B (lookup by reference) whose lookups lag
	// demoTransferLag behind its commits and which sends no webhooks: the
	// slow visibility that keeps an operation "Confirmation pending" for a
	// while, its timeline showing the send and the lookups, until a lookup
	// sees it.
	demoTransfers = "transfers"
	// demoLegacy is class D (no keys, no lookup): an unclear answer can
	// only go to its owners, "Under review".
	demoLegacy = "legacy-billing"

	demoTransferLag = 90 * time.Second
)

// demoTarget holds the simulators started in-process by --demo (all three
// targets) or --demo-target (only "demo", with no faults).
type demoTarget struct {
	srvs    map[string]*sim.Server // by target name
	secrets map[string][]byte      // each target's webhook secret, generated at start
}

func (d demoTarget) stop() {
	for _, s := range d.srvs {
		s.Close()
	}
}

// sim returns the simulator of the named demo target, or nil.
func (d demoTarget) sim(name string) *sim.Sim {
	if s, ok := d.srvs[name]; ok {
		return s.Sim()
	}
	return nil
}

// startDemoTargets starts the simulated targets and returns their contracts.
// Those with webhooks send them, signed, to this server at self; on
// legacy-billing a success reported after the operation was escalated goes
// to quarantine, so the playground fills that queue too. Faults are never drawn
// at random: the playground's trickle scripts one per operation, so that
// every state turns up within its first few operations.
func startDemoTargets(self string, playground bool) (*target.Set, demoTarget, error) {
	d := demoTarget{srvs: map[string]*sim.Server{}, secrets: map[string][]byte{}}
	type demoSim struct {
		name    string
		cfg     sim.Config
		webhook bool
	}
	cfgs := []demoSim{{demoCards, sim.Config{Class: "A"}, true}}
	if playground {
		cfgs = append(cfgs,
			demoSim{demoTransfers, sim.Config{Class: "B", LookupLag: demoTransferLag}, false},
			demoSim{demoLegacy, sim.Config{Class: "D"}, true})
	}
	var sets []*target.Set
	for _, c := range cfgs {
		if c.webhook {
			secret := make([]byte, 32)
			_, _ = rand.Read(secret)
			c.cfg.WebhookURL, c.cfg.WebhookSecret = self+"/webhooks/"+c.name, string(secret)
			d.secrets[c.name] = secret
		}
		srv, err := sim.Start(c.cfg)
		if err != nil {
			d.stop()
			return nil, demoTarget{}, fmt.Errorf("demo target %s: %w", c.name, err)
		}
		d.srvs[c.name] = srv
		set, err := target.Parse("demo target "+c.name, srv.Contract(c.name))
		if err != nil {
			d.stop()
			return nil, demoTarget{}, err
		}
		sets = append(sets, set)
	}
	set, err := target.Join(sets...)
	if err != nil {
		d.stop()
		return nil, demoTarget{}, err
	}
	return set, d, nil
}

// checkDemoAddr refuses --demo on anything but a loopback address: the
// playground's sign-in needs no password, so it must not be reachable from
// another machine.
func checkDemoAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err == nil && isLoopback(host) {
		return nil
	}
	return usagef("--demo lets anyone sign in without a password, so --addr must be a loopback address (127.0.0.1, ::1 or localhost), got %q", addr)
}

// isLoopback reports whether host names only this machine. An empty or
// unspecified host (":8080", "0.0.0.0") listens on every interface.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
