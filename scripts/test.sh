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
# 7. the systemd unit in deploy/ checked by `systemd-analyze verify` (scripts/verify-systemd.sh).
# The Python environment (pyarrow, rapid-sdk and what it imports) is created first if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-python.sh
# The storage tests' S3 line runs against a single-node Garage (installed once by garage.sh);
# RAPID_REQUIRE_S3=1 makes them fail rather than skip if it is missing. The PostgreSQL catalog's
# tests run against a throwaway PostgreSQL (scripts/pg.sh); RAPID_REQUIRE_PG=1 likewise.
# The wire clients' tests (tests/api/sql_clients.rs: the JDBC driver, DuckDB's extension from
# .venv-ext) likewise with RAPID_REQUIRE_CLIENTS=1.
source scripts/garage.sh
source scripts/pg.sh
source scripts/jdbc.sh
trap 'garage_stop; pg_stop' EXIT
garage_start
pg_start
jdbc_install
RAPID_TEST_PG_URL="$PG_URL" RAPID_REQUIRE_PG=1 RAPID_REQUIRE_S3=1 RAPID_REQUIRE_CLIENTS=1 \
  RAPID_TEST_PYTHON="$PWD/.venv/bin/python" cargo test --workspace --locked "$@"
pg_stop
scripts/test-crash.sh 3
# cargo test built the binary; find it wherever cargo puts its target folder.
RAPID_BIN="${CARGO_TARGET_DIR:-$PWD/target}/debug/rapid-rs" .venv/bin/python -m pytest -q tests/sdk
# The differential query test: our answers against DuckDB's over the same stored files
#    (seed 21, 300 cases, 200 of them also as SQL over the wire; scripts/differential.sh SEED N
#    runs more).
DIFF_SEED=21 DIFF_CASES=300 DIFF_SQL_CASES=200 RAPID_BIN="${CARGO_TARGET_DIR:-$PWD/target}/debug/rapid-rs" \
  .venv/bin/python -m pytest -q tests/differential
RAPID_BIN="${CARGO_TARGET_DIR:-$PWD/target}/debug/rapid-rs" scripts/test-openapi.sh
RAPID_BIN="${CARGO_TARGET_DIR:-$PWD/target}/debug/rapid-rs" scripts/test-browser.sh
scripts/verify-systemd.sh
