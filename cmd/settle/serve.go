package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"settle/ledger"
	"settle/metrics"
	"settle/reconciler"
	"settle/target"
	"settle/web"
)

// serveConfig is every setting of settle serve (and settle config check):
// flags, the environment variables their env tags name, and the --config
// file (fileResolver). validate checks them and fills in the values the
// packages take.
type serveConfig struct {
	Config              string `env:"SETTLE_CONFIG" help:"settings file, YAML, one key per flag spelled with _ (database_url: …, log_format: json); flags and environment variables override it"`
	dbOption            `embed:""`
	Migrate             bool          `default:"true" help:"apply the embedded migrations at start; with --migrate=false, refuse a database whose schema is behind (run settle migrate first)"`
	Addr                string        `default:"127.0.0.1:8080" help:"listen address HOST:PORT"`
	MetricsAddr         string        `name:"metrics-addr" help:"serve /metrics on this HOST:PORT only, not on --addr; empty: on --addr"`
	MetricsTenantLabels bool          `name:"metrics-tenant-labels" help:"add a tenant label to the ledger metrics: one series per tenant, off by default for cardinality"`
	PprofAddr           string        `name:"pprof-addr" help:"serve Go's profiles (/debug/pprof/: CPU, heap, goroutines) on this loopback HOST:PORT only, for profiling; empty: off"`
	MetricsInterval     time.Duration `name:"metrics-interval" default:"15s" help:"how often the database-wide metrics gauges are read (one statement per replica; scrapes read the cached values)"`
	Contracts           string        `env:"SETTLE_CONTRACTS" help:"target contracts file"`
	Demo                bool          `help:"a playground for newcomers (loopback --addr only): simulated targets with faults, tenants acme and globex, a trickle of operations and demo sign-in"`
	DemoTarget          bool          `name:"demo-target" help:"only run a simulated target in-process, as target \"demo\", without faults or demo data"`
	ConsoleConfig       string        `name:"console-config" env:"SETTLE_CONSOLE_CONFIG" help:"console sign-in (OIDC) and role bindings, YAML; without it and without --demo there is no console, only the API"`
	ReadOnly            bool          `name:"read-only" help:"the console refuses every change (sign-in and sign-out still work)"`
	BodyLimit           int64         `name:"body-limit" default:"${body_limit}" help:"maximum API request body in bytes"`
	NoExecutor          bool          `name:"no-executor" help:"do not send operations from this replica"`
	NoSweeper           bool          `name:"no-sweeper" help:"do not sweep expired leases from this replica"`
	NoReconciler        bool          `name:"no-reconciler" help:"do not reconcile UNKNOWN operations from this replica"`
	NoInbox             bool          `name:"no-inbox" help:"do not process received webhook deliveries from this replica"`
	NoNotifier          bool          `name:"no-notifier" help:"do not deliver client callbacks, escalation notices or daily digests from this replica"`
	NoAuditor           bool          `name:"no-auditor" help:"do not audit SUCCEEDED operations against their targets from this replica"`
	Lease               time.Duration `default:"1m" help:"lease of an UNKNOWN operation a reconciler works on; must exceed every contract timeout by 5s (a send's claim is leased per target: its timeout + 5s)"`
	Workers             int           `default:"16" help:"concurrent sends of the executor"`
	NoRetention         bool          `name:"no-retention" help:"do not apply the retention policy from this replica"`
	retentionOptions    `embed:""`
	MaxDrillAge         retentionPeriod `name:"max-drill-age" default:"${max_drill_age}" help:"the console's go/no-go: a drill older than this no longer counts (e.g. 90d)"`
	LeaderLease         time.Duration   `name:"leader-lease" default:"30s" help:"lease of a cluster-wide duty (the auditor's walk): how long it stands still after its replica dies; renewed every third of it"`
	AuditInterval       time.Duration   `name:"audit-interval" default:"10s" help:"pause between steps of the auditor's walk over each target"`
	ReplicaID           string          `name:"replica-id" env:"SETTLE_REPLICA_ID" help:"this replica's name in leader leases, unique in the cluster; empty: HOST-PID-RANDOM"`
	ConsoleURL          string          `name:"console-url" env:"SETTLE_CONSOLE_URL" help:"the console's public base URL, for the links in escalation notices and digests to owning teams; empty: no links"`
	DigestAt            time.Duration   `name:"digest-at" default:"8h" help:"time of day (UTC, as a duration after midnight) from which the daily digest of overdue operations is sent to owning teams"`
	DigestOverdue       time.Duration   `name:"digest-overdue" default:"24h" help:"an operation ESCALATED for longer than this is listed in the daily digest"`
	callbackRules       `embed:""`
	CallbackMaxAttempts int `name:"callback-max-attempts" default:"${callback_max_attempts}" help:"attempts of one callback notification or escalation notice before it is given up (about 23½ hours of retries at the default 150); settle callback show and settle escalation notices list the given-up ones, settle callback retry and settle escalation notices --retry queue them again"`
	httpOptions         `embed:""`
	apiOptions          `embed:""`
	logConfig           `embed:""`

	// Filled in by validate.
	retention *ledger.RetentionPolicy
	callbacks ledger.CallbackPolicy // where tenants' callbacks may go
	limits    web.ServerLimits
	api       apiLimits
}

// validate checks the settings; a bad one is a usage error.
func (c *serveConfig) validate() error {
	if err := c.checkRetention(); err != nil {
		return err
	}
	c.retention = c.policy()
	if err := c.logConfig.check(); err != nil {
		return err
	}
	if c.CallbackMaxAttempts < 1 {
		return usagef("--callback-max-attempts must be at least 1")
	}
	var err error
	if c.callbacks, err = c.callbackRules.callbackPolicy(); err != nil {
		return err
	}
	if c.limits, err = c.httpOptions.limits(); err != nil {
		return err
	}
	if c.api, err = c.apiOptions.limits(); err != nil {
		return err
	}
	if c.Demo {
		if err := checkDemoAddr(c.Addr); err != nil {
			return err
		}
	}
	if c.PprofAddr != "" {
		if host, _, err := net.SplitHostPort(c.PprofAddr); err != nil || !isLoopback(host) {
			return usagef("--pprof-addr shows the process's memory and stacks, so it must be a loopback address (127.0.0.1, ::1 or localhost), got %q", c.PprofAddr)
		}
	}
	switch {
	case c.BodyLimit <= 0:
		return usagef("--body-limit must be a positive number of bytes, got %d", c.BodyLimit)
	case c.Workers <= 0:
		return usagef("--workers must be at least 1, got %d", c.Workers)
	case c.LeaderLease < 3*time.Millisecond:
		return usagef("--leader-lease must be at least 3ms, got %s", c.LeaderLease)
	case c.AuditInterval <= 0:
		return usagef("--audit-interval must be positive, got %s", c.AuditInterval)
	case len(c.ReplicaID) > 200:
		return usagef("--replica-id is at most 200 bytes")
	}
	return nil
}

// serveCmd is `settle serve`.
type serveCmd struct {
	serveConfig `embed:""`
}

// Help is the detail of settle serve --help.
func (serveCmd) Help() string {
	return `Migrates the store (unless --migrate=false), then serves HTTP and runs the executor, sweeper,
reconciler, webhook inbox processor, callback and escalation notifiers, auditor and daily
digest. Replicas may share one database: the auditor, the digest and retention run on one
replica at a time, under a leader lease in the database; every other loop runs on all of them.`
}

func (s *serveCmd) run(ctx context.Context, e *env) error {
	if err := s.validate(); err != nil {
		return e.file.blameUsage(err)
	}
	a, err := newApp(ctx, s.serveConfig, e.stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	return a.Run(ctx, e.stdout)
}

// runner is a loop of settle serve: it runs until its context ends.
type runner = interface{ Run(context.Context) error }

// app is settle serve's process: newApp opens and wires everything, Run
// serves until the context ends or a server fails and then stops the work
// in order, and Close releases what newApp opened, in reverse.
type app struct {
	cfg       serveConfig
	log       *slog.Logger
	ln        net.Listener
	metricsLn net.Listener // nil: /metrics on ln
	pprofLn   net.Listener // nil: no profiles
	contracts *target.Set
	demo      demoTarget
	store     store
	desc      string // the store, for the start-up line
	servers   []listening
	loops     []runner // the work the --no-X flags switch off
	aside     []runner // run with the loops, not counted among them
	closers   []func() // in the order opened
}

// listening is one HTTP server and its listener.
type listening struct {
	srv *web.HTTPServer
	ln  net.Listener
}

// component is the logger of one part of settle: a line says which part
// wrote it as an attribute to filter on, never in its message.
func (a *app) component(name string) *slog.Logger { return a.log.With("component", name) }

// opened notes something Close must release.
func (a *app) opened(close func()) { a.closers = append(a.closers, close) }

// Close releases what newApp opened, the last opened first.
func (a *app) Close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
	a.closers = nil
}

// newApp opens the listeners, contracts, secrets and store and builds the
// services, servers and loops over them, without starting any. On an
// error, what it opened is closed.
func newApp(ctx context.Context, cfg serveConfig, stderr io.Writer) (*app, error) {
	a := &app{cfg: cfg, log: cfg.logger(stderr)}
	built := false
	defer func() {
		if !built {
			a.Close()
		}
	}()
	var err error
	if a.ln, err = net.Listen("tcp", cfg.Addr); err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	a.opened(func() { a.ln.Close() })
	if cfg.MetricsAddr != "" {
		if a.metricsLn, err = net.Listen("tcp", cfg.MetricsAddr); err != nil {
			return nil, fmt.Errorf("listen for metrics: %w", err)
		}
		a.opened(func() { a.metricsLn.Close() })
	}
	if cfg.PprofAddr != "" {
		if a.pprofLn, err = net.Listen("tcp", cfg.PprofAddr); err != nil {
			return nil, fmt.Errorf("listen for profiles: %w", err)
		}
		a.opened(func() { a.pprofLn.Close() })
	}
	if a.contracts, a.demo, err = loadContracts(cfg, a.self()); err != nil {
		return nil, err
	}
	a.opened(a.demo.stop)
	if err := checkLeases(a.contracts, cfg.Lease); err != nil {
		return nil, err
	}
	secrets, err := webhookSecrets(a.contracts, os.Getenv, a.demo.secrets)
	if err != nil {
		return nil, err
	}
	// Like webhook secrets, credentials are read once, before anything is
	// served: a missing one stops start-up naming the variable.
	credentials, err := target.ReadSecrets(a.contracts, os.Getenv)
	if err != nil {
		return nil, err
	}
	if a.store, a.desc, err = openStoreWith(ctx, cfg.DatabaseURL, cfg.Migrate, func(msg string) { a.component("store").Warn(msg) }); err != nil {
		return nil, err
	}
	a.opened(func() { a.store.Close() })

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := a.wireMetrics(reg)
	client := targetClient(credentials, a.store)
	webCfg := web.Config{Store: a.store, Targets: contractTargets{a.contracts}, Client: client,
		Logger: a.component("http"), Metrics: reg, MetricsElsewhere: a.metricsLn != nil,
		Limits: web.Limits{BodyLimit: cfg.BodyLimit, RateLimit: cfg.api.rateLimit(), RateBurst: cfg.api.burst,
			MaxCreates: cfg.api.maxCreates, MaxCreatesPerTenant: cfg.api.perTenant},
		Contracts: a.contracts, WebhookSecrets: secrets,
		Retention: *cfg.retention, MaxDrillAge: time.Duration(cfg.MaxDrillAge), CallbackPolicy: cfg.callbacks}
	console, err := consoleSignIn(ctx, cfg, a.store, a.ln.Addr().String(), a.log)
	if err != nil {
		return nil, err
	}
	if console != nil {
		webCfg.SignIn, webCfg.ReadOnly = console, cfg.ReadOnly
		webCfg.InsecureCookies = !console.Sessions().Secure()
	}
	limits, err := fitConns(cfg.limits, a.component("http"))
	if err != nil {
		return nil, err
	}
	srv := web.NewHTTPServer(web.New(webCfg), limits)
	srv.SetErrorLog(a.component("http"))
	srv.Register(reg, "main")
	a.servers = append(a.servers, listening{srv, a.ln})
	if a.metricsLn != nil {
		limits.MaxConns = metricsConns
		msrv := web.NewHTTPServer(web.Metrics(reg), limits)
		msrv.SetErrorLog(a.component("http"))
		msrv.Register(reg, "metrics")
		a.servers = append(a.servers, listening{msrv, a.metricsLn})
	}
	if a.pprofLn != nil {
		// A CPU profile or trace answers after the seconds it was asked to
		// run (30 by default): up to ten minutes here.
		limits.MaxConns, limits.WriteTimeout = metricsConns, 10*time.Minute
		psrv := web.NewHTTPServer(profiles(), limits)
		psrv.SetErrorLog(a.component("http"))
		a.servers = append(a.servers, listening{psrv, a.pprofLn})
	}
	a.loops = a.buildLoops(m, client, credentials, reg)
	if console != nil {
		a.loops = append(a.loops, sessionSweeper{console, a.log})
	}
	// The gauge reader and the drainer of the CLI's observations run with
	// the loops but are not among the loops the start-up line counts: those
	// are the work the --no-X flags switch off.
	// Nor is the console's retry of its provider's discovery, which ends
	// once the provider has answered.
	a.aside = []runner{m.gauges, m.drain}
	if console != nil {
		a.aside = append(a.aside, console)
	}
	built = true
	return a, nil
}

// self is the server's own base URL, for the in-process demo targets'
// webhooks and the playground's trickle.
func (a *app) self() string { return "http://" + a.ln.Addr().String() }

// appMetrics is how settle serve's metrics are wired: the one place that
// decides how transitions are counted.
type appMetrics struct {
	counters *metrics.Metrics
	gauges   *metrics.Collector
	drain    *reconciler.Drainer
}

// wireMetrics builds the counters and gauges on reg. The store tells the
// counters every transition it commits, whoever made it: the API, the
// loops, the console. The drainer tells the same counters what CLI
// commands committed (their observer stores it: see bootstrap).
func (a *app) wireMetrics(reg *prometheus.Registry) appMetrics {
	counters := metrics.New(reg, metrics.Options{TenantLabels: a.cfg.MetricsTenantLabels})
	observer := metrics.Observer{Metrics: counters, Events: a.store, Log: a.component("metrics")}
	a.store.SetObserver(observer)
	gauges := &metrics.Collector{Store: a.store, Targets: a.contracts.Names(), TenantLabels: a.cfg.MetricsTenantLabels,
		Interval: a.cfg.MetricsInterval, Log: a.component("metrics")}
	reg.MustRegister(gauges)
	drain := &reconciler.Drainer{Store: a.store, Observer: observer, Log: a.component("metrics")}
	return appMetrics{counters: counters, gauges: gauges, drain: drain}
}

// buildLoops is the background work of this replica, as the --no-X flags
// leave it.
func (a *app) buildLoops(m appMetrics, client *target.Client, credentials *target.Secrets, reg *prometheus.Registry) []runner {
	cfg, store, contracts := a.cfg, a.store, a.contracts
	var loops []runner
	if !cfg.NoExecutor {
		loops = append(loops, &reconciler.Executor{Store: store, Contracts: contracts, Client: client, Log: a.component("executor"),
			Workers: cfg.Workers})
	}
	if !cfg.NoSweeper {
		loops = append(loops, &reconciler.Sweeper{Store: store, Log: a.component("sweeper")})
	}
	if !cfg.NoReconciler {
		loops = append(loops, &reconciler.Reconciler{Store: store, Contracts: contracts, Client: client, Log: a.component("reconciler"),
			Lease: cfg.Lease})
	}
	if !cfg.NoInbox {
		loops = append(loops, &reconciler.Inbox{Store: store, Inbox: store, Contracts: contracts, Log: a.component("inbox"), Metrics: reg})
	}
	if !cfg.NoNotifier {
		loops = append(loops, &reconciler.Notifier{Store: store, Callbacks: store, Contracts: contracts, Log: a.component("notifier"), Metrics: reg,
			TenantLabels: cfg.MetricsTenantLabels, Policy: cfg.callbacks, MaxAttempts: cfg.CallbackMaxAttempts})
		// Owning teams (owner.notify) hear of every escalation.
		loops = append(loops, &reconciler.EscalationNotifier{Store: store, Notices: store, Contracts: contracts,
			Secrets: credentials, ConsoleURL: cfg.ConsoleURL, Log: a.component("escalations"), Metrics: reg,
			MaxAttempts: cfg.CallbackMaxAttempts})
	}
	// Work that must happen once per cluster runs under a leader lease, on
	// one replica at a time; the loops above divide their work by claims
	// and run everywhere. The daily digest of overdue operations is one.
	var duties []duty
	if !cfg.NoAuditor {
		au := &reconciler.Auditor{Audit: store, Contracts: contracts, Client: client, Log: a.component("auditor"), Metrics: reg,
			Interval: cfg.AuditInterval}
		duties = append(duties, duty{"auditor", au.Run})
	}
	if !cfg.NoRetention && cfg.retention.Enabled() {
		r := &reconciler.Retention{Store: store, Policy: *cfg.retention, Log: a.component("retention")}
		duties = append(duties, duty{"retention", r.Run})
	}
	if !cfg.NoNotifier && contracts != nil {
		g := &reconciler.Digest{Store: store, Digests: store, Contracts: contracts, Secrets: credentials,
			ConsoleURL: cfg.ConsoleURL, Log: a.component("digest"), SendAt: cfg.DigestAt, Overdue: cfg.DigestOverdue}
		duties = append(duties, duty{"digest", g.Run})
	}
	return append(loops, electors(duties, store, cfg, reg, a.component("leader"))...)
}

// Run starts the servers and the loops (and, with --demo, the playground),
// prints the start-up line, and serves until ctx ends or a server fails;
// then it stops taking requests first and lets the loops finish what they
// hold.
func (a *app) Run(ctx context.Context, stdout io.Writer) error {
	errc := make(chan error, len(a.servers))
	for _, s := range a.servers {
		go func() { errc <- s.srv.Serve(s.ln) }()
	}
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	var work sync.WaitGroup
	work.Add(1)
	go func() { defer work.Done(); reconciler.Run(workCtx, append(a.loops, a.aside...)...) }()

	where := ""
	if a.metricsLn != nil {
		where = fmt.Sprintf("metrics: http://%s/metrics; ", a.metricsLn.Addr())
	}
	if a.pprofLn != nil {
		where += fmt.Sprintf("profiles: http://%s/debug/pprof/; ", a.pprofLn.Addr())
	}
	fmt.Fprintf(stdout, "settle: listening on http://%s (store: %s; targets: %d; %sbackground loops: %d)\n",
		a.ln.Addr(), a.desc, len(a.contracts.Names()), where, len(a.loops))

	var serveErr error
	stopDemo := func() {}
	if a.cfg.Demo {
		stopDemo, serveErr = startPlayground(ctx, a.store, a.demo, a.self(), a.log)
	}
	if serveErr == nil {
		select {
		case err := <-errc:
			serveErr = fmt.Errorf("serve: %w", err)
		case <-ctx.Done():
		}
	}
	a.component("serve").Info("shutting down")
	stopDemo() // the playground's trickle uses the API, so it stops before the server
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for _, s := range a.servers {
		if err := s.srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) && serveErr == nil {
			serveErr = fmt.Errorf("shutdown: %w", err)
		}
	}
	stopWork()
	work.Wait()
	return serveErr
}

// duty is work done once per cluster, by the replica holding its lease.
type duty struct {
	name string
	run  func(context.Context) error
}

// electors returns one reconciler.Elector per duty, all under this
// replica's id, exporting settle_leader by duty.
func electors(duties []duty, leases ledger.LeaderStore, cfg serveConfig, reg prometheus.Registerer, log *slog.Logger) []runner {
	if len(duties) == 0 {
		return nil
	}
	id := cfg.ReplicaID
	if id == "" {
		id = replicaID()
	}
	gauge := reconciler.NewLeaderGauge(reg)
	var out []runner
	for _, d := range duties {
		out = append(out, &reconciler.Elector{Leases: leases, Duty: d.name, Holder: id, Work: d.run, Log: log,
			Leading: gauge.WithLabelValues(d.name), TTL: cfg.LeaderLease})
	}
	return out
}

// replicaID names this process in leader leases: the host, for people
// reading the lease table, and the pid and a random suffix, so that two
// processes on one host, or a restarted one, are never taken for each
// other.
func replicaID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "settle"
	}
	return fmt.Sprintf("%.150s-%d-%08x", host, os.Getpid(), rand.Uint32())
}

// loadContracts reads --contracts and, with --demo or --demo-target, adds
// the in-process simulated targets (see startDemoTargets) that send signed
// webhooks to this server at self.
func loadContracts(cfg serveConfig, self string) (*target.Set, demoTarget, error) {
	var (
		sets []*target.Set
		demo demoTarget
	)
	if cfg.Contracts != "" {
		set, err := target.Load(cfg.Contracts)
		if err != nil {
			return nil, demo, err
		}
		sets = append(sets, set)
	}
	if cfg.Demo || cfg.DemoTarget {
		set, d, err := startDemoTargets(self, cfg.Demo)
		if err != nil {
			return nil, demo, err
		}
		demo = d
		sets = append(sets, set)
	}
	set, err := target.Join(sets...)
	if err != nil {
		demo.stop()
		return nil, demoTarget{}, err
	}
	return set, demo, nil
}

// webhookSecrets reads each webhook secret from the environment variable
// its contract names; a missing one stops start-up rather than leaving a
// target whose deliveries can never be verified.
func webhookSecrets(set *target.Set, getenv func(string) string, known map[string][]byte) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, name := range set.Names() {
		c, _ := set.Get(name)
		if secret, ok := known[name]; ok {
			out[name] = secret
			continue
		}
		if c.Webhook == nil {
			continue
		}
		secret, err := c.WebhookSecret(getenv)
		if err != nil {
			return nil, err
		}
		out[name] = secret
	}
	return out, nil
}

// checkLeases applies the contracts' lease rules (target.Set.CheckLeases)
// and names the flag that sets the reconciler's lease.
func checkLeases(set *target.Set, lease time.Duration) error {
	err := set.CheckLeases(lease)
	var short *target.ShortLeaseError
	if errors.As(err, &short) {
		return fmt.Errorf("--lease %s (the reconciler's) must exceed target %s's timeout (%s) by at least %s",
			short.Lease, short.Target, short.Timeout, target.LeaseMargin)
	}
	return err
}

// contractTargets gives the API what it needs from the contracts.
type contractTargets struct{ set *target.Set }

func (t contractTargets) Target(name string) (web.Target, bool) {
	c, ok := t.set.Get(name)
	if !ok {
		return web.Target{}, false
	}
	return web.Target{RetryWindow: c.RetryWindow(), Deadline: c.Deadline, Owner: c.Owner.Team, Bind: c.Bind}, true
}

// Names lists the configured targets, for the console's target filter.
func (t contractTargets) Names() []string { return t.set.Names() }

// profiles serves net/http/pprof's handlers, on --pprof-addr's own
// listener only: never on --addr, where clients and the console are.
func profiles() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}
