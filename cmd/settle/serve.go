package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"settle/gonogo"
	"settle/ledger"
	"settle/metrics"
	"settle/reconciler"
	"settle/target"
	"settle/web"
)

// serveConfig is everything `settle serve` reads from flags and env.
type serveConfig struct {
	dbURL, addr, contracts             string
	consoleConfig                      string
	demo, demoTarget, readOnly         bool
	migrate                            bool
	bodyLimit                          int64
	noExecutor, noSweeper, noReconcile bool
	noInbox, noAuditor, noNotifier     bool
	lease                              time.Duration
	leaderLease, auditInterval         time.Duration
	replicaID                          string
	workers                            int
	metricsAddr                        string
	metricsTenantLabels                bool
	metricsInterval                    time.Duration
	limits                             web.ServerLimits
	api                                apiLimits
	retention                          *ledger.RetentionPolicy
	noRetention                        bool
	maxDrillAge                        time.Duration
	consoleURL                         string
	digestAt, digestOverdue            time.Duration
	callbacks                          ledger.CallbackPolicy // where tenants' callbacks may go
	callbackMaxAttempts                int                   // attempts before a notification is given up
	log                                logConfig
	configFile                         string
	flags                              *flag.FlagSet     // every setting, for settle config check
	sources                            map[string]string // where each setting's value came from
}

const serveUsage = `usage: settle serve [flags]

Migrates the store (unless --migrate=false), then serves HTTP and runs the executor, sweeper,
reconciler, webhook inbox processor, callback and escalation notifiers, auditor and daily
digest. Replicas may share one database: the auditor, the digest and retention run on one
replica at a time, under a leader lease in the database; every other loop runs on all of them.
`

func serveFlags(args []string, stdout, stderr io.Writer) (serveConfig, error) {
	var c serveConfig
	fs := withUsage(flag.NewFlagSet("settle serve", flag.ContinueOnError), serveUsage)
	c.flags = fs
	fs.StringVar(&c.configFile, "config", os.Getenv("SETTLE_CONFIG"),
		"settings file, YAML, one key per flag spelled with _ (database_url: …, log_format: json); flags and environment variables override it (env SETTLE_CONFIG)")
	fs.StringVar(&c.dbURL, "database-url", os.Getenv("DATABASE_URL"),
		"postgres://… for PostgreSQL, sqlite:PATH for SQLite; empty means SQLite at ./"+defaultSQLite+" (env DATABASE_URL)")
	fs.BoolVar(&c.migrate, "migrate", true,
		"apply the embedded migrations at start; with --migrate=false, refuse a database whose schema is behind (run settle migrate first)")
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8080", "listen address HOST:PORT")
	fs.StringVar(&c.metricsAddr, "metrics-addr", "", "serve /metrics on this HOST:PORT only, not on --addr; empty: on --addr")
	fs.BoolVar(&c.metricsTenantLabels, "metrics-tenant-labels", false,
		"add a tenant label to the ledger metrics: one series per tenant, off by default for cardinality")
	fs.DurationVar(&c.metricsInterval, "metrics-interval", 15*time.Second,
		"how often the database-wide metrics gauges are read (one statement per replica; scrapes read the cached values)")
	fs.StringVar(&c.contracts, "contracts", os.Getenv("SETTLE_CONTRACTS"), "target contracts file (env SETTLE_CONTRACTS)")
	fs.BoolVar(&c.demo, "demo", false, "a playground for newcomers (loopback --addr only): simulated targets with faults, tenants acme and globex, a trickle of operations and demo sign-in")
	fs.BoolVar(&c.demoTarget, "demo-target", false, "only run a simulated target in-process, as target \"demo\", without faults or demo data")
	fs.StringVar(&c.consoleConfig, "console-config", os.Getenv("SETTLE_CONSOLE_CONFIG"),
		"console sign-in (OIDC) and role bindings, YAML; without it and without --demo there is no console, only the API (env SETTLE_CONSOLE_CONFIG)")
	fs.BoolVar(&c.readOnly, "read-only", false, "the console refuses every change (sign-in and sign-out still work)")
	fs.Int64Var(&c.bodyLimit, "body-limit", web.DefaultBodyLimit, "maximum API request body in bytes")
	fs.BoolVar(&c.noExecutor, "no-executor", false, "do not send operations from this replica")
	fs.BoolVar(&c.noSweeper, "no-sweeper", false, "do not sweep expired leases from this replica")
	fs.BoolVar(&c.noReconcile, "no-reconciler", false, "do not reconcile UNKNOWN operations from this replica")
	fs.BoolVar(&c.noInbox, "no-inbox", false, "do not process received webhook deliveries from this replica")
	fs.BoolVar(&c.noNotifier, "no-notifier", false, "do not deliver client callbacks, escalation notices or daily digests from this replica")
	fs.BoolVar(&c.noAuditor, "no-auditor", false, "do not audit SUCCEEDED operations against their targets from this replica")
	fs.DurationVar(&c.lease, "lease", time.Minute, "lease of an UNKNOWN operation a reconciler works on; must exceed every contract timeout by 5s (a send's claim is leased per target: its timeout + 5s)")
	fs.IntVar(&c.workers, "workers", 16, "concurrent sends of the executor")
	fs.BoolVar(&c.noRetention, "no-retention", false, "do not apply the retention policy from this replica")
	c.retention = retentionFlags(fs)
	c.maxDrillAge = gonogo.DefaultMaxDrillAge
	fs.Var(retentionDuration{&c.maxDrillAge}, "max-drill-age", "the console's go/no-go: a drill older than this no longer counts (e.g. 90d)")
	fs.DurationVar(&c.leaderLease, "leader-lease", 30*time.Second,
		"lease of a cluster-wide duty (the auditor's walk): how long it stands still after its replica dies; renewed every third of it")
	fs.DurationVar(&c.auditInterval, "audit-interval", 10*time.Second, "pause between steps of the auditor's walk over each target")
	fs.StringVar(&c.replicaID, "replica-id", os.Getenv("SETTLE_REPLICA_ID"),
		"this replica's name in leader leases, unique in the cluster; empty: HOST-PID-RANDOM (env SETTLE_REPLICA_ID)")
	fs.StringVar(&c.consoleURL, "console-url", os.Getenv("SETTLE_CONSOLE_URL"),
		"the console's public base URL, for the links in escalation notices and digests to owning teams; empty: no links (env SETTLE_CONSOLE_URL)")
	fs.DurationVar(&c.digestAt, "digest-at", 8*time.Hour, "time of day (UTC, as a duration after midnight) from which the daily digest of overdue operations is sent to owning teams")
	fs.DurationVar(&c.digestOverdue, "digest-overdue", 24*time.Hour, "an operation ESCALATED for longer than this is listed in the daily digest")
	fs.BoolVar(&c.callbacks.AllowHTTP, "callbacks-allow-http", false,
		"accept and deliver plain http:// callback URLs; for development only, the signed body then travels in the clear")
	fs.Func("callbacks-allow-net", "comma-separated addresses or CIDR prefixes callbacks may reach although internal (loopback, private, link-local); empty: none",
		func(v string) (err error) { c.callbacks.Allow, err = ledger.ParseCallbackNets(v); return err })
	fs.IntVar(&c.callbackMaxAttempts, "callback-max-attempts", reconciler.DefaultCallbackMaxAttempts,
		"attempts of one callback notification or escalation notice before it is given up (about 23½ hours of retries "+
			"at the default 150); `settle callback show` and `settle escalation notices` list the given-up ones, "+
			"`settle callback retry` and `settle escalation notices --retry` queue them again")
	httpFlags(fs, &c.limits)
	apiFlags(fs, &c.api)
	logFlags(fs, &c.log)
	if err := parse(fs, args, stdout, stderr); err != nil {
		return c, err
	}
	sources, err := applyConfigFile(fs, c.configFile, os.Getenv)
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(stderr, "settle serve: %s\n", line)
		}
		return c, errUsage
	}
	c.sources = sources
	// A complaint about a value from the file names its line.
	stderr = blame{stderr, sources}
	if err := checkRetention("serve", c.retention, stderr); err != nil {
		return c, err
	}
	if err := c.log.check(stderr); err != nil {
		return c, err
	}
	if c.callbackMaxAttempts < 1 {
		fmt.Fprintln(stderr, "settle serve: --callback-max-attempts must be at least 1")
		return c, errUsage
	}
	if err := checkHTTPFlags(c.limits, stderr); err != nil {
		return c, err
	}
	if err := checkAPIFlags(c.api, stderr); err != nil {
		return c, err
	}
	if c.demo {
		if err := checkDemoAddr(c.addr, stderr); err != nil {
			return c, err
		}
	}
	switch {
	case c.bodyLimit <= 0:
		fmt.Fprintf(stderr, "settle serve: --body-limit must be a positive number of bytes, got %d\n", c.bodyLimit)
		return c, errUsage
	case c.workers <= 0:
		fmt.Fprintf(stderr, "settle serve: --workers must be at least 1, got %d\n", c.workers)
		return c, errUsage
	case c.leaderLease < 3*time.Millisecond:
		fmt.Fprintf(stderr, "settle serve: --leader-lease must be at least 3ms, got %s\n", c.leaderLease)
		return c, errUsage
	case c.auditInterval <= 0:
		fmt.Fprintf(stderr, "settle serve: --audit-interval must be positive, got %s\n", c.auditInterval)
		return c, errUsage
	case len(c.replicaID) > 200:
		fmt.Fprintf(stderr, "settle serve: --replica-id is at most 200 bytes\n")
		return c, errUsage
	}
	return c, nil
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := serveFlags(args, stdout, stderr)
	if err != nil {
		return err
	}
	log := cfg.log.logger(stderr)
	// component names the part of settle a line comes from.
	component := func(name string) *slog.Logger { return log.With("component", name) }

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	defer ln.Close()
	var metricsLn net.Listener
	if cfg.metricsAddr != "" {
		if metricsLn, err = net.Listen("tcp", cfg.metricsAddr); err != nil {
			return fmt.Errorf("listen for metrics: %w", err)
		}
		defer metricsLn.Close()
	}
	contracts, demo, err := loadContracts(cfg, "http://"+ln.Addr().String())
	if err != nil {
		return err
	}
	defer demo.stop()
	if err := checkLeases(contracts, cfg.lease); err != nil {
		return err
	}
	secrets, err := webhookSecrets(contracts, os.Getenv, demo.secrets)
	if err != nil {
		return err
	}
	// Like webhook secrets, credentials are read once, before anything is
	// served: a missing one stops start-up naming the variable.
	credentials, err := target.ReadSecrets(contracts, os.Getenv)
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	store, desc, err := openStoreWith(ctx, cfg.dbURL, cfg.migrate, func(msg string) { component("store").Warn(msg) })
	if err != nil {
		return err
	}
	defer store.Close()

	client := targetClient(credentials, store)
	counters := metrics.New(reg, metrics.Options{TenantLabels: cfg.metricsTenantLabels})
	// The store tells the metrics every transition it commits, whoever
	// made it: the API, the loops, the console.
	store.SetObserver(metrics.Observer{Metrics: counters, Events: store, Log: component("metrics")})
	gauges := &metrics.Collector{Store: store, Targets: contracts.Names(), TenantLabels: cfg.metricsTenantLabels,
		Interval: cfg.metricsInterval, Log: component("metrics")}
	reg.MustRegister(gauges)
	webCfg := web.Config{Store: store, Tokens: store, Targets: contractTargets{contracts}, Client: client,
		BodyLimit: cfg.bodyLimit, Logger: component("http"), Metrics: reg, MetricsElsewhere: metricsLn != nil,
		RateLimit: cfg.api.rateLimit(), RateBurst: cfg.api.burst, MaxCreates: cfg.api.maxCreates, MaxCreatesPerTenant: cfg.api.perTenant,
		Contracts: contracts, WebhookSecrets: secrets, Inbox: store,
		Drills: store, Retention: *cfg.retention, MaxDrillAge: cfg.maxDrillAge, CallbackPolicy: cfg.callbacks}
	console, err := consoleSignIn(ctx, cfg, store, ln.Addr().String(), log)
	if err != nil {
		return err
	}
	if console != nil {
		webCfg.SignIn, webCfg.Browser, webCfg.ReadOnly = console, store, cfg.readOnly
		webCfg.InsecureCookies = !console.Sessions().Secure()
	}
	e := web.New(webCfg)
	limits, err := fitConns(cfg.limits, component("http"))
	if err != nil {
		return err
	}
	srv := web.NewHTTPServer(e, limits)
	srv.SetErrorLog(component("http"))
	srv.Register(reg, "main")
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	servers := []*web.HTTPServer{srv}
	where := ""
	if metricsLn != nil {
		limits.MaxConns = metricsConns
		msrv := web.NewHTTPServer(web.Metrics(reg), limits)
		msrv.SetErrorLog(component("http"))
		msrv.Register(reg, "metrics")
		go func() { errc <- msrv.Serve(metricsLn) }()
		servers = append(servers, msrv)
		where = fmt.Sprintf("metrics: http://%s/metrics; ", metricsLn.Addr())
	}

	var loops []interface{ Run(context.Context) error }
	if !cfg.noExecutor {
		loops = append(loops, &reconciler.Executor{Store: store, Contracts: contracts, Client: client, Log: component("executor"),
			Workers: cfg.workers})
	}
	if !cfg.noSweeper {
		loops = append(loops, &reconciler.Sweeper{Store: store, Log: component("sweeper")})
	}
	if !cfg.noReconcile {
		loops = append(loops, &reconciler.Reconciler{Store: store, Contracts: contracts, Client: client, Log: component("reconciler"),
			Lease: cfg.lease})
	}
	if !cfg.noInbox {
		loops = append(loops, &reconciler.Inbox{Store: store, Inbox: store, Contracts: contracts, Log: component("inbox"), Metrics: reg})
	}
	if !cfg.noNotifier {
		loops = append(loops, &reconciler.Notifier{Store: store, Callbacks: store, Contracts: contracts, Log: component("notifier"), Metrics: reg,
			TenantLabels: cfg.metricsTenantLabels, Policy: cfg.callbacks, MaxAttempts: cfg.callbackMaxAttempts})
		// Owning teams (owner.notify) hear of every escalation.
		loops = append(loops, &reconciler.EscalationNotifier{Store: store, Notices: store, Contracts: contracts,
			Secrets: credentials, ConsoleURL: cfg.consoleURL, Log: component("escalations"), Metrics: reg,
			MaxAttempts: cfg.callbackMaxAttempts})
	}
	// Work that must happen once per cluster runs under a leader lease, on
	// one replica at a time; the loops above divide their work by claims
	// and run everywhere. The daily digest of overdue operations is one.
	var duties []duty
	if !cfg.noAuditor {
		a := &reconciler.Auditor{Audit: store, Contracts: contracts, Client: client, Log: component("auditor"), Metrics: reg,
			Interval: cfg.auditInterval}
		duties = append(duties, duty{"auditor", a.Run})
	}
	if !cfg.noRetention && cfg.retention.Enabled() {
		r := &reconciler.Retention{Store: store, Policy: *cfg.retention, Log: component("retention")}
		duties = append(duties, duty{"retention", r.Run})
	}
	if !cfg.noNotifier && contracts != nil {
		g := &reconciler.Digest{Store: store, Digests: store, Contracts: contracts, Secrets: credentials,
			ConsoleURL: cfg.consoleURL, Log: component("digest"), SendAt: cfg.digestAt, Overdue: cfg.digestOverdue}
		duties = append(duties, duty{"digest", g.Run})
	}
	loops = append(loops, electors(duties, store, cfg, reg, component("leader"))...)
	if console != nil {
		loops = append(loops, sessionSweeper{console, log})
	}
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	var work sync.WaitGroup
	work.Add(1)
	// The gauge reader runs with the loops but is not one of the loops the
	// start-up line counts: those are the work the --no-X flags switch off.
	// Nor is the console's retry of its provider's discovery, which ends
	// once the provider has answered.
	aside := []interface{ Run(context.Context) error }{gauges}
	if console != nil {
		aside = append(aside, console)
	}
	go func() { defer work.Done(); reconciler.Run(workCtx, append(loops, aside...)...) }()

	fmt.Fprintf(stdout, "settle: listening on http://%s (store: %s; targets: %d; %sbackground loops: %d)\n",
		ln.Addr(), desc, len(contracts.Names()), where, len(loops))

	var serveErr error
	stopDemo := func() {}
	if cfg.demo {
		stopDemo, serveErr = startPlayground(ctx, store, demo, "http://"+ln.Addr().String(), log)
	}
	if serveErr == nil {
		select {
		case err := <-errc:
			serveErr = fmt.Errorf("serve: %w", err)
		case <-ctx.Done():
		}
	}
	// Stop taking requests first, then let the loops finish what they hold.
	component("serve").Info("shutting down")
	stopDemo() // the playground's trickle uses the API, so it stops before the server
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for _, srv := range servers {
		if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) && serveErr == nil {
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
func electors(duties []duty, leases ledger.LeaderStore, cfg serveConfig, reg prometheus.Registerer, log *slog.Logger) []interface{ Run(context.Context) error } {
	if len(duties) == 0 {
		return nil
	}
	id := cfg.replicaID
	if id == "" {
		id = replicaID()
	}
	gauge := reconciler.NewLeaderGauge(reg)
	var out []interface{ Run(context.Context) error }
	for _, d := range duties {
		out = append(out, &reconciler.Elector{Leases: leases, Duty: d.name, Holder: id, Work: d.run, Log: log,
			Leading: gauge.WithLabelValues(d.name), TTL: cfg.leaderLease})
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
	if cfg.contracts != "" {
		set, err := target.Load(cfg.contracts)
		if err != nil {
			return nil, demo, err
		}
		sets = append(sets, set)
	}
	if cfg.demo || cfg.demoTarget {
		set, d, err := startDemoTargets(self, cfg.demo)
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
