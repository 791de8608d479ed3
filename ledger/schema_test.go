package ledger_test

import (
	"errors"
	"testing"

	"settle/ledger"
)

func TestSchema_Check(t *testing.T) {
	t.Parallel()
	known := []int64{1, 2, 3, 5}
	for _, c := range []struct {
		name    string
		applied []int64
		want    string // "" = no error
		ahead   bool
	}{
		{"Current", []int64{1, 2, 3, 5}, "", false},
		{"Behind", []int64{1, 2}, "the database schema is at 2, this settle needs 5; run settle migrate", false},
		{"Empty", nil, "the database has no settle schema, this settle needs schema 5; run settle migrate", false},
		{"Ahead", []int64{1, 2, 3, 5, 6}, "", true},
		{"Gap", []int64{1, 2, 5}, "the database schema is at 5 but lacks migration 3 that this settle needs; run settle migrate", false},
		{"GapAndAhead", []int64{1, 2, 5, 6}, "the database schema is at 6 but lacks migration 3 that this settle needs; run settle migrate", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := ledger.Schema{Applied: c.applied, Known: known}
			err := s.Check()
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("Check: %v; want nil", err)
			case c.want != "" && (err == nil || err.Error() != c.want):
				t.Fatalf("Check: %v; want %q", err, c.want)
			}
			var behind *ledger.SchemaBehindError
			if c.want != "" && !errors.As(err, &behind) {
				t.Fatalf("%T is not a *SchemaBehindError", err)
			}
			if s.Ahead() != c.ahead {
				t.Fatalf("Ahead = %v, want %v", s.Ahead(), c.ahead)
			}
		})
	}
}
