package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
)

// logConfig is how `settle serve` writes its log.
type logConfig struct {
	format, level string
}

// logFlags registers --log-format and --log-level, defaulting to
// $SETTLE_LOG_FORMAT and $SETTLE_LOG_LEVEL.
func logFlags(fs *flag.FlagSet, c *logConfig) {
	fs.StringVar(&c.format, "log-format", envOr("SETTLE_LOG_FORMAT", "text"),
		"log lines as text (key=value) or json, on stderr (env SETTLE_LOG_FORMAT)")
	fs.StringVar(&c.level, "log-level", envOr("SETTLE_LOG_LEVEL", "info"),
		"least severe level logged: debug (adds health probes and routine detail), info, warn or error (env SETTLE_LOG_LEVEL)")
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// check reports a bad value as one line on stderr and errUsage.
func (c logConfig) check(stderr io.Writer) error {
	if _, err := c.slogLevel(); err != nil {
		fmt.Fprintf(stderr, "settle serve: --log-level: %v\n", err)
		return errUsage
	}
	switch strings.ToLower(c.format) {
	case "text", "json":
		return nil
	}
	fmt.Fprintf(stderr, "settle serve: --log-format must be text or json, got %q\n", c.format)
	return errUsage
}

func (c logConfig) slogLevel() (slog.Level, error) {
	switch strings.ToLower(c.level) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("must be debug, info, warn or error, got %q", c.level)
}

// logger returns the process's logger on w. Each part of settle logs
// through log.With("component", …), so a line says which part wrote it as
// an attribute to filter on, never in its message.
func (c logConfig) logger(w io.Writer) *slog.Logger {
	level, _ := c.slogLevel() // checked at parse time
	opts := &slog.HandlerOptions{Level: level}
	if strings.ToLower(c.format) == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
