#!/usr/bin/env bash
# The whole suite, as `npm test` runs it: format check, lint, typecheck, build, unit and browser tests,
# integration tests on SQLite and PostgreSQL, end-to-end tests on SQLite with local storage and on
# PostgreSQL with S3 storage (TEST_STORAGE=s3: each deployment gets its own s3rver and bucket), so the
# end-to-end suite runs once on each store without a third pass.
#
# Every step runs even after a failure, so one run shows everything that is wrong. The last line is
# the sum over all steps, `N passed, N failed` (each check counts as one test; test runs count their
# tests). The exit status is non-zero if anything failed.
#
# Environment:
#   TEST_DATABASE_URL           PostgreSQL database for the PostgreSQL runs
#                               (default postgres://postgres@127.0.0.1:5432/test; each test makes its own schema)
#   LIPSYNC_TEST_SKIP_POSTGRES  1 skips the PostgreSQL runs (otherwise an unreachable PostgreSQL fails the run)
#   TEST_REDIS_URL              Redis for the shared rate-limit tests (default redis://127.0.0.1:6379)
#   LIPSYNC_TEST_SKIP_REDIS     1 skips the Redis tests when Redis is unreachable
#   LIPSYNC_FIXTURES_DIR        media fixtures (default ../shared/fixtures)
set -uo pipefail
cd "$(dirname "$0")/.."

export TEST_DATABASE_URL="${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
bin=node_modules/.bin
results=$(mktemp "${TMPDIR:-/tmp}/lipsync-test-results.XXXXXX")
trap 'rm -f "$results"' EXIT
export LIPSYNC_TEST_RESULTS="$results"
started=$SECONDS

# A check (format, lint, ...) counts as one test.
check() {
  local label=$1
  shift
  local t0=$SECONDS
  echo
  echo "=== $label: $*"
  if "$@"; then
    echo "{\"label\":\"$label\",\"passed\":1,\"failed\":0,\"skipped\":0}" >>"$results"
    echo "==> $label: ok ($((SECONDS - t0)) s)"
  else
    echo "{\"label\":\"$label\",\"passed\":0,\"failed\":1,\"skipped\":0}" >>"$results"
    echo "==> $label: FAILED ($((SECONDS - t0)) s)"
  fi
}

# A test run records its own counts through LIPSYNC_TEST_RESULTS.
tests() {
  local label=$1
  shift
  echo
  echo "=== $label"
  env "$@" || true
}

check format "$bin/prettier" --check .
check lint "$bin/eslint" .
check typecheck npm run --silent typecheck
check build npm run --silent build

# Two independent passes side by side (the CI machine has two cores; each pass runs its files one at
# a time): the first streams its report, the second's is kept in a file and printed when both are done,
# so the log reads pass by pass.
side_by_side() {
  local first_label=$1 second_label=$2 second_log
  second_log=$(mktemp "${TMPDIR:-/tmp}/lipsync-test-log.XXXXXX")
  shift 2
  local first=() second=() in_second=0 a
  for a in "$@"; do
    if [ "$a" = "--" ]; then in_second=1; elif [ $in_second = 1 ]; then second+=("$a"); else first+=("$a"); fi
  done
  tests "$second_label" "${second[@]}" >"$second_log" 2>&1 &
  local pid=$!
  tests "$first_label" "${first[@]}"
  wait "$pid"
  cat "$second_log"
  rm -f "$second_log"
}

# The studio in a real browser (Chromium, one server per file) beside the unit tests and the
# integration files that open no database (engines, media, speech: they run once, and are the heavy
# ones); then the integration files that do, on each database side by side: so each pair is of
# about the same length.
side_by_side "unit, integration (no database)" "browser" \
  sh -c 'node scripts/run-tests.mjs unit; node scripts/run-tests.mjs integration --database-free' -- \
  TEST_DATABASE=sqlite TEST_STORAGE=local node scripts/run-tests.mjs browser
if [ "${LIPSYNC_TEST_SKIP_POSTGRES:-}" = "1" ]; then
  echo
  echo "=== integration (postgres) and e2e (postgres, s3): SKIPPED because LIPSYNC_TEST_SKIP_POSTGRES=1"
  tests "integration (sqlite)" TEST_DATABASE=sqlite node scripts/run-tests.mjs integration --with-database
  tests "e2e (sqlite, local)" TEST_DATABASE=sqlite TEST_STORAGE=local node scripts/run-tests.mjs e2e
else
  side_by_side "integration (sqlite)" "integration (postgres)" \
    TEST_DATABASE=sqlite node scripts/run-tests.mjs integration --with-database -- \
    TEST_DATABASE=postgres DATABASE_URL="$TEST_DATABASE_URL" node scripts/run-tests.mjs integration --with-database
  side_by_side "e2e (sqlite, local)" "e2e (postgres, s3)" \
    TEST_DATABASE=sqlite TEST_STORAGE=local node scripts/run-tests.mjs e2e -- \
    TEST_DATABASE=postgres TEST_STORAGE=s3 DATABASE_URL="$TEST_DATABASE_URL" node scripts/run-tests.mjs e2e
fi

node - "$results" "$((SECONDS - started))" <<'EOF'
const [file, seconds] = process.argv.slice(2);
const rows = require('node:fs').readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
let passed = 0;
let failed = 0;
let skipped = 0;
console.log('\n=== summary');
for (const r of rows) {
  passed += r.passed;
  failed += r.failed;
  skipped += r.skipped;
  const status = r.failed > 0 ? 'FAIL' : 'ok  ';
  console.log(`${status} ${r.label.padEnd(24)} ${r.passed} passed, ${r.failed} failed${r.skipped ? `, ${r.skipped} skipped` : ''}`);
}
console.log(`total time ${seconds} s${skipped ? `; ${skipped} skipped` : ''}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 || rows.length === 0 ? 1 : 0);
EOF
