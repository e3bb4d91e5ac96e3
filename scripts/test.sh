#!/usr/bin/env bash
# The project's test command:
# 1. unit tests of every crate and the HTTP integration tests (each starts the real rapid-rs
#    binary on a free loopback port with a temporary data folder);
# 2. the rAPId Python SDK journey (tests/sdk), run against that same debug binary;
# The Python environment (pyarrow, rapid-sdk and what it imports) is created first if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-python.sh
RAPID_TEST_PYTHON="$PWD/.venv/bin/python" cargo test --workspace --locked "$@"
# cargo test built the binary; find it wherever cargo puts its target folder.
RAPID_BIN="${CARGO_TARGET_DIR:-$PWD/target}/debug/rapid-rs" .venv/bin/python -m pytest -q tests/sdk
# 3. the differential query test: our answers against DuckDB's over the same stored files
#    (seed 21, 300 cases; scripts/differential.sh SEED N runs more).
DIFF_SEED=21 DIFF_CASES=300 RAPID_BIN="${CARGO_TARGET_DIR:-$PWD/target}/debug/rapid-rs" \
  .venv/bin/python -m pytest -q tests/differential
