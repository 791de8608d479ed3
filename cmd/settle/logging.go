package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// logConfig is how `settle serve` writes its log.
type logConfig struct {
	LogFormat string `name:"log-format" env:"SETTLE_LOG_FORMAT" default:"text" help:"log lines as text (key=value) or json, on stderr"`
	LogLevel  string `name:"log-level" env:"SETTLE_LOG_LEVEL" default:"info" help:"least severe level logged: debug (adds health probes and routine detail), info, warn or error"`
}

// check reports a bad value as a usage error.
func (c logConfig) check() error {
	if _, err := c.slogLevel(); err != nil {
		return usagef("--log-level: %v", err)
	}
	switch strings.ToLower(c.LogFormat) {
	case "text", "json":
		return nil
	}
	return usagef("--log-format must be text or json, got %q", c.LogFormat)
}

func (c logConfig) slogLevel() (slog.Level, error) {
	switch strings.ToLower(c.LogLevel) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("must be debug, info, warn or error, got %q", c.LogLevel)
}

// logger returns the process's logger on w. Each part of settle logs
// through log.With("component", …), so a line says which part wrote it as
// an attribute to filter on, never in its message.
func (c logConfig) logger(w io.Writer) *slog.Logger {
	level, _ := c.slogLevel() // checked at parse time
	opts := &slog.HandlerOptions{Level: level}
	if strings.ToLower(c.LogFormat) == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
