package main

import (
	"context"
	"path/filepath"
	"testing"
)

// The short form of the 100,000-operation measure: a few hundred
// escalated operations on a fresh SQLite file, every measure read, no
// error. The figure itself comes from the long form (docs/performance.md).
func TestRun_Short(t *testing.T) {
	if err := run(context.Background(), "", filepath.Join(t.TempDir(), "q.db"), 300, 3); err != nil {
		t.Fatal(err)
	}
}
