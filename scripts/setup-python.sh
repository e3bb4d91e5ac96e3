#!/usr/bin/env bash
# Creates .venv with the Python packages the tests use: pyarrow (an independent Parquet reader),
# DuckDB (the reference engine of the differential query test)
# and the rAPId SDK with what it imports.
# Idempotent: re-running only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r tests/python/requirements.txt
.venv/bin/python -c "import pyarrow, rapid, pandera, strenum, duckdb, psycopg, sqlalchemy; print('python test environment ready: pyarrow', pyarrow.__version__)"
