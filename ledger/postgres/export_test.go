package postgres

import "settle/ledger"

// CustomPlan reports whether the statement named is planned for its
// arguments on every execution (customPlans), for TestPlans.
func CustomPlan(name string) bool { return customPlans[name] }

// StatementName is statementName, for TestPlans.
var StatementName = statementName

// OneByOne is the Ledger over s's pool that commits each creation on its
// own, never group-committed: the anchor of BenchmarkGroupCommit.
func OneByOne(s *Store) *ledger.Ledger { return s.Within(newDriver(s.pool)) }
