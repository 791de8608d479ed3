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
	"time"

	"settle/web"
)

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("settle serve", flag.ContinueOnError)
	dbURL := dbFlag(fs)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address HOST:PORT")
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
	e := web.New(web.Config{Store: store, Logger: log})
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
