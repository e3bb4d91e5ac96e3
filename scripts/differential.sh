#!/usr/bin/env bash
# The differential query test with any seed and number of cases, over HTTP and as SQL over the
# PostgreSQL protocol (CI runs seed 21, 300 cases and 200 over the wire):
#   scripts/differential.sh SEED N
# Builds the debug binary, then runs tests/differential against it (our answers vs DuckDB's over
# the same stored Parquet files). A failure prints the body, both answers and the DuckDB SQL,
# shrunk to the smallest failing variant.
set -euo pipefail
cd "$(dirname "$0")/.."
SEED="${1:-21}"
CASES="${2:-1000}"
scripts/setup-python.sh >/dev/null
cargo build --locked --quiet
DIFF_SEED="$SEED" DIFF_CASES="$CASES" DIFF_SQL_CASES="$CASES" RAPID_BIN="${CARGO_TARGET_DIR:-$PWD/target}/debug/rapid-rs" \
  .venv/bin/python -m pytest -q -s tests/differential
