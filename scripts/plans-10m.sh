#!/usr/bin/env bash
# Runs TestPlans (ledger/postgres/plan_test.go) on 10 million operations
# instead of the default run's 100,000: the test loads a scratch database on
# the PostgreSQL at $DATABASE_URL (default: the local test database) shaped
# like production (50 tenants; 97% settled, 1% each PREPARED, IN_FLIGHT and
# UNKNOWN), calls every method of the PostgreSQL store, and checks and
# prints the plan of every statement each method sent, with its arguments.
# The database is dropped after. Takes about an hour; see docs/performance.md.
#
#   ROWS=1000000 ./scripts/plans-10m.sh      # another size
#   ANALYZE=1 ./scripts/plans-10m.sh         # EXPLAIN (ANALYZE, BUFFERS) plans
set -euo pipefail
cd "$(dirname "$0")/.."
export TEST_DATABASE_URL=${DATABASE_URL:-${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}}
export SETTLE_PLAN_ROWS=${ROWS:-10000000}
export SETTLE_PLAN_ANALYZE=${ANALYZE:-0}
exec go test -run '^TestPlans$' -count=1 -v -timeout 4h ./ledger/postgres/
