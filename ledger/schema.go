package ledger

import (
	"fmt"
	"slices"
)

// Schema is a database's schema as this settle sees it: the migrations the
// database records as applied and those this binary embeds. Only `settle
// migrate` and `settle serve` (unless --migrate=false) change the schema;
// every other command checks it with Check and refuses a database that is
// behind.
type Schema struct {
	Applied []int64 // versions the database records as applied, ascending
	Known   []int64 // versions this settle embeds, ascending
}

// Database is the highest version applied to the database; 0 when none.
func (s Schema) Database() int64 { return last(s.Applied) }

// Binary is the highest version this settle embeds.
func (s Schema) Binary() int64 { return last(s.Known) }

// Missing lists the versions this settle embeds that the database lacks.
func (s Schema) Missing() []int64 {
	var out []int64
	for _, v := range s.Known {
		if !slices.Contains(s.Applied, v) {
			out = append(out, v)
		}
	}
	return out
}

// Ahead reports whether the database holds migrations this settle does not
// know: a newer settle migrated it. That is allowed, so that replicas can
// be upgraded one at a time: every migration only adds (tables, columns
// with defaults, wider checks), so the older code keeps working on it
// until it is replaced.
func (s Schema) Ahead() bool {
	for _, v := range s.Applied {
		if !slices.Contains(s.Known, v) {
			return true
		}
	}
	return false
}

// SchemaBehindError is Check's refusal: the database lacks migrations this
// settle needs.
type SchemaBehindError struct {
	Database, Binary int64
	Missing          []int64
}

func (e *SchemaBehindError) Error() string {
	switch {
	case e.Database == 0:
		return fmt.Sprintf("the database has no settle schema, this settle needs schema %d; run settle migrate", e.Binary)
	case e.Database >= e.Binary:
		// Applied out of order: a later migration without an earlier one.
		return fmt.Sprintf("the database schema is at %d but lacks migration %d that this settle needs; run settle migrate",
			e.Database, e.Missing[0])
	}
	return fmt.Sprintf("the database schema is at %d, this settle needs %d; run settle migrate", e.Database, e.Binary)
}

// Check returns a *SchemaBehindError when the database lacks any migration
// this settle embeds, and nil otherwise (also when it is Ahead).
func (s Schema) Check() error {
	if missing := s.Missing(); len(missing) > 0 {
		return &SchemaBehindError{Database: s.Database(), Binary: s.Binary(), Missing: missing}
	}
	return nil
}

func last(vs []int64) int64 {
	if len(vs) == 0 {
		return 0
	}
	return vs[len(vs)-1]
}
