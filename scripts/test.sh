#!/usr/bin/env bash
# The project's test command: unit tests of every crate and the HTTP integration tests, which
# start the real rapid-rs binary on free loopback ports with temporary data folders. The Python
# environment (pyarrow, an independent Parquet reader) is created first if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-python.sh
RAPID_TEST_PYTHON="$PWD/.venv/bin/python" cargo test --workspace --locked "$@"
