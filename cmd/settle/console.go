package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"settle/auth"
	"settle/ledger"
	"settle/web"
)

// consoleSignIn returns the console's sign-in: the demo users with --demo,
// the OIDC provider that --console-config names, or nil — no console, the
// API only — when neither is given. Without --demo the only way in is
// OIDC.
func consoleSignIn(ctx context.Context, cfg serveConfig, ss ledger.SessionStore, addr string,
	log *slog.Logger) (*auth.Console, error) {
	opts := []auth.Option{auth.WithRender(web.RenderSignIn), auth.WithLogger(log), auth.WithListenAddr(addr)}
	switch {
	case cfg.Demo && cfg.ConsoleConfig != "":
		return nil, fmt.Errorf("--demo and --console-config exclude each other: the demo signs people in without a provider")
	case cfg.Demo:
		// Plain http on loopback: the browser would drop a Secure cookie.
		c, err := auth.NewDemoConsole(ss, append(opts, auth.WithInsecureCookie())...)
		if err != nil {
			return nil, fmt.Errorf("demo sign-in: %w", err)
		}
		return c, nil
	case cfg.ConsoleConfig != "":
		ac, err := auth.LoadConfig(cfg.ConsoleConfig)
		if err != nil {
			return nil, err
		}
		c, err := auth.NewConsole(ctx, ac, ss, opts...)
		if err != nil {
			return nil, fmt.Errorf("console sign-in: %w", err)
		}
		return c, nil
	}
	log.Info("serving the API only: neither --console-config nor --demo is set, so there is no console", "component", "serve")
	return nil, nil
}

// sessionSweeper deletes expired console sessions now and then. Expired
// sessions are refused on every request anyway; this only keeps the table
// small.
type sessionSweeper struct {
	console *auth.Console
	log     *slog.Logger
}

// Run deletes expired sessions every ten minutes until ctx ends.
func (s sessionSweeper) Run(ctx context.Context) error {
	t := time.NewTicker(10 * time.Minute)
	defer t.Stop()
	for {
		if n, err := s.console.DeleteExpired(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("deleting expired sessions failed", "component", "sessions", "err", err)
		} else if n > 0 {
			s.log.Debug("deleted expired sessions", "component", "sessions", "count", n)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
