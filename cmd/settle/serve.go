package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"

	"settle/web"
)

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("settle serve", flag.ContinueOnError)
	dbURL := dbFlag(fs)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address HOST:PORT")
	targetList := fs.String("targets", os.Getenv("SETTLE_TARGETS"),
		"comma-separated names of valid targets, until contracts are configured (env SETTLE_TARGETS)")
	bodyLimit := fs.Int64("body-limit", web.DefaultBodyLimit, "maximum API request body in bytes")
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))

	store, desc, err := openStore(ctx, *dbURL)
	if err != nil {
		return err
	}
	defer store.Close()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	targets, err := parseTargets(*targetList)
	if err != nil {
		return err
	}
	if *bodyLimit <= 0 {
		return fmt.Errorf("--body-limit must be positive")
	}
	e := web.New(web.Config{Store: store, Tokens: store, Targets: targets, BodyLimit: *bodyLimit, Logger: log})
	srv := &http.Server{Handler: e, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "settle: listening on http://%s (store: %s)\n", ln.Addr(), desc)

	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// staticTargets is the stub target list used until target contracts exist.
type staticTargets map[string]web.Target

func (s staticTargets) Target(name string) (web.Target, bool) {
	t, ok := s[name]
	return t, ok
}

var targetName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func parseTargets(list string) (staticTargets, error) {
	out := staticTargets{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !targetName.MatchString(name) {
			return nil, fmt.Errorf("--targets: invalid target name %q", name)
		}
		out[name] = web.Target{}
	}
	return out, nil
}
