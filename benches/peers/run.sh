#!/usr/bin/env bash
# Our service against DuckDB and polars on the same files (benches/peers/peers.py). Builds the
# release binary unless --binary is given, installs duckdb and polars into the project's venv.
#   benches/peers/run.sh [--rows 1000000 5000000] [--runs 5] [--binary PATH]
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/setup-python.sh >/dev/null
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r benches/peers/requirements.txt
if [[ " $* " != *" --binary "* ]]; then
  cargo build --release --locked --quiet
fi
exec .venv/bin/python benches/peers/peers.py "$@"
