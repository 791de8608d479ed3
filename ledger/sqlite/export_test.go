package sqlite

import "settle/ledger"

// OneByOne is the Ledger over s's driver that commits each creation on its
// own, never group-committed: the anchor of BenchmarkGroupCommit.
func OneByOne(s *Store) *ledger.Ledger { return s.Within(newDriver(s.w, s.r)) }
