package postgres

// CustomPlan reports whether the statement named is planned for its
// arguments on every execution (customPlans), for TestPlans.
func CustomPlan(name string) bool { return customPlans[name] }

// StatementName is statementName, for TestPlans.
var StatementName = statementName
