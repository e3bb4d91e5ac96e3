#!/usr/bin/env bash
# The project's test command:
# 1. unit tests of every crate and the HTTP integration tests (each starts the real rapid-rs
#    binary on a free loopback port with a temporary data folder), with Garage (scripts/garage.sh)
#    up so that the storage tests also run against S3, and a throwaway PostgreSQL
#    (scripts/pg.sh) for the PostgreSQL catalog's conformance suite and HTTP tests;
# 2. a few rounds of the crash test (tests/crash: power cuts simulated by crashfs, a FUSE
#    filesystem; skipped with a clear line where FUSE cannot be mounted);
# 3. the rAPId Python SDK journey (tests/sdk), run against that same debug binary;
# 4. the differential query test (DuckDB as the reference engine), over HTTP and as SQL over the
#    PostgreSQL protocol;
# 5. schemathesis over every operation of the OpenAPI document (scripts/test-openapi.sh);
# 6. the web pages' headless Chromium journey (scripts/test-browser.sh, tests/browser);
# 7. the systemd unit in deploy/ checked by `systemd-analyze verify` (scripts/verify-systemd.sh);
# 8. the scale-out run (scripts/test-scale-out.sh): two nodes on one PostgreSQL catalog and one
#    S3 bucket behind nginx, the SDK journey, concurrent uploads stored exactly once, a node
#    killed, and DuckDB reading the bucket's Delta table with the service's count (about 3 min).
# The Python environment (pyarrow, rapid-sdk and what it imports) is created first if missing.
#
#   scripts/test.sh [CARGO TEST ARGS...]            everything above (what CI runs); tests run
#       6 at a time in each test binary (RUST_TEST_THREADS=N to change it)
#   scripts/test.sh --quick [CARGO TEST ARGS...]    the Rust tests and the SDK journey only: no
#       Garage, PostgreSQL, Java or Chromium installed or started, so the tests that need S3,
#       the PostgreSQL catalog or the JDBC/DuckDB clients skip with a line saying so.
#
# Each step is announced before it starts and timed; a table of the steps and their durations
# ends the run, also when a step fails (the failing step is marked).
set -euo pipefail
cd "$(dirname "$0")/.."

QUICK=0
if [ "${1:-}" = "--quick" ]; then
  QUICK=1
  shift
fi
TARGET="${CARGO_TARGET_DIR:-$PWD/target}"
# Tests run at once in each test binary. Most HTTP tests wait on a server process they started
# (a debug build answering, a job, a time limit), not on a core: on 2 cores a second full run
# used 12 CPU minutes in 23 wall minutes with libtest's default (one per core).
TEST_THREADS="${RUST_TEST_THREADS:-6}"

STEP_NAMES=()
STEP_TIMES=()
STEP_RESULTS=()
RUN_START=$SECONDS

# step NAME COMMAND [ARGS...]: runs COMMAND in this shell (so a sourced start function's exports
# stay), between a line naming it and a line with its duration; records both for the summary.
step() {
  local name="$1" start=$SECONDS status=0
  shift
  echo "==> [$(date +%H:%M:%S)] ${name}..." >&2
  "$@" || status=$?
  local took=$((SECONDS - start))
  STEP_NAMES+=("$name")
  STEP_TIMES+=("$took")
  if [ "$status" = 0 ]; then STEP_RESULTS+=("ok"); else STEP_RESULTS+=("FAILED ($status)"); fi
  printf '==> %s: %s in %dm%02ds\n' "$name" "${STEP_RESULTS[-1]}" $((took / 60)) $((took % 60)) >&2
  return "$status"
}

summary() {
  local i total=$((SECONDS - RUN_START))
  [ "${#STEP_NAMES[@]}" -gt 0 ] || return 0
  echo >&2
  printf '%-76s %9s  %s\n' "step" "duration" "result" >&2
  for i in "${!STEP_NAMES[@]}"; do
    printf '%-76s %6dm%02ds  %s\n' "${STEP_NAMES[$i]}" $((STEP_TIMES[i] / 60)) \
      $((STEP_TIMES[i] % 60)) "${STEP_RESULTS[$i]}" >&2
  done
  printf '%-76s %6dm%02ds\n' "total" $((total / 60)) $((total % 60)) >&2
}

# The tests, then the binaries the later steps run (rapid-rs, rapid-bench for the scale-out's
# `rapid-rs bench`, crashfs) with the tests' features. Cargo resolves features per command: a
# `cargo build -p rapid-rs -p rapid-bench` enables fewer of them than `cargo test --workspace`
# (dev-dependencies count there), so the scale-out step's own build made about 125 units
# (DataFusion's, Arrow's, actix's and ours) a second time: in CI's clean clone, and for our
# crates after every change (6 minutes of a second run's 19, measured).
build_tests_and_binaries() {
  cargo test --workspace --locked --no-run "$@" && cargo build --workspace --locked --bins --tests
}

if [ "$QUICK" = 0 ]; then
  source scripts/garage.sh
  source scripts/pg.sh
  source scripts/jdbc.sh
fi

cleanup() {
  local status=$?
  if [ "$QUICK" = 0 ]; then
    garage_stop
    pg_stop
  fi
  summary
  exit "$status"
}
trap cleanup EXIT

step "Python test environments (.venv, .venv-ext; installs what is missing)" scripts/setup-python.sh

if [ "$QUICK" = 1 ]; then
  step "Build the tests (cargo test --workspace --no-run)" \
    cargo test --workspace --locked --no-run "$@"
  step "Rust tests (cargo test --workspace; S3, PostgreSQL and client tests skip)" \
    env RUST_TEST_THREADS="$TEST_THREADS" RAPID_TEST_PYTHON="$PWD/.venv/bin/python" \
    cargo test --workspace --locked "$@"
  step "rAPId SDK journey (tests/sdk)" \
    env RAPID_BIN="$TARGET/debug/rapid-rs" .venv/bin/python -m pytest -q tests/sdk
  exit 0
fi

# The storage tests' S3 line runs against a single-node Garage (built from source once into
# ~/.cache/rapid-rs-tools, rebuilt only when its version changes); RAPID_REQUIRE_S3=1 makes them
# fail rather than skip if it is missing. The PostgreSQL catalog's tests run against a throwaway
# PostgreSQL (scripts/pg.sh); RAPID_REQUIRE_PG=1 likewise. The wire clients' tests
# (tests/api/sql_clients.rs: the JDBC driver, DuckDB's extension from .venv-ext) likewise with
# RAPID_REQUIRE_CLIENTS=1.
step "Garage S3 server (first run: a ~20 min build into ~/.cache/rapid-rs-tools)" garage_start
step "PostgreSQL 15, throwaway (first run: apt install)" pg_start
step "JDBC driver and Java runtime (first run: apt install)" jdbc_install
step "Build the tests and binaries (cargo test --workspace --no-run; cargo build --bins --tests)" \
  build_tests_and_binaries "$@"
step "Rust tests (cargo test --workspace, with S3, PostgreSQL and clients)" \
  env RAPID_TEST_PG_URL="$PG_URL" RAPID_REQUIRE_PG=1 RAPID_REQUIRE_S3=1 RAPID_REQUIRE_CLIENTS=1 \
  RUST_TEST_THREADS="$TEST_THREADS" RAPID_TEST_PYTHON="$PWD/.venv/bin/python" \
  cargo test --workspace --locked "$@"
pg_stop
step "Crash test, 3 rounds (tests/crash)" scripts/test-crash.sh 3
# cargo test built the binary; find it wherever cargo puts its target folder.
BIN="$TARGET/debug/rapid-rs"
step "rAPId SDK journey (tests/sdk)" env RAPID_BIN="$BIN" .venv/bin/python -m pytest -q tests/sdk
# The differential query test: our answers against DuckDB's over the same stored files
#    (seed 21, 300 cases, 200 of them also as SQL over the wire; scripts/differential.sh SEED N
#    runs more).
step "Differential query test against DuckDB (tests/differential)" \
  env DIFF_SEED=21 DIFF_CASES=300 DIFF_SQL_CASES=200 RAPID_BIN="$BIN" \
  .venv/bin/python -m pytest -q tests/differential
step "OpenAPI conformance (schemathesis)" env RAPID_BIN="$BIN" scripts/test-openapi.sh
step "Web pages in headless Chromium (tests/browser)" env RAPID_BIN="$BIN" scripts/test-browser.sh
step "systemd unit (systemd-analyze verify)" scripts/verify-systemd.sh
step "Scale-out: two nodes, PostgreSQL catalog, S3 bucket, nginx (scripts/test-scale-out.sh)" \
  env SCALE_UPLOADS=50 RAPID_BIN="$BIN" scripts/test-scale-out.sh
