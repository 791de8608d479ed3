package sqlite

import "settle/ledger"

// OneByOne is the Ledger over s's driver that commits each creation on its
// own, never group-committed: the anchor of BenchmarkGroupCommit.
func OneByOne(s *Store) *ledger.Ledger { return s.Within(newDriver(s.w, s.r, s.wc, s.rc)) }

// Unprepared is the Ledger over s's pools without their statement caches:
// every statement prepared again on each call, as before the caches. The
// anchor of BenchmarkPreparedStatements.
func Unprepared(s *Store) *ledger.Ledger { return ledger.New(newDriver(s.w, s.r, nil, nil), s.now) }
