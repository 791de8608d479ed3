package sqlite_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"settle/ledger/sqlite"
)

// Several processes (here: stores) opening one new file at once all end up
// with a fully migrated store.
func TestOpen_ConcurrentMigrations(t *testing.T) {
	for round := 0; round < 5; round++ {
		path := filepath.Join(t.TempDir(), "settle.db")
		var wg sync.WaitGroup
		errs := make(chan error, 6)
		for i := 0; i < 6; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := sqlite.Open(context.Background(), path, nil)
				if err == nil {
					_, err = s.Find(context.Background(), "acme", "x")
					s.Close()
				}
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
}
