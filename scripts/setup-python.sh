#!/usr/bin/env bash
# Creates .venv with the Python packages the tests use: pyarrow (an independent Parquet reader),
# DuckDB (the reference engine of the differential query test), deltalake (delta-rs, reading
# each stored version as a Delta Lake table) and the rAPId SDK with what it imports; and
# .venv-ext with DuckDB's extensions from PyPI (`postgres`, `delta`), which are built for an
# older DuckDB than .venv's, and the SQLAlchemy 1.4 Superset pins.
# Idempotent: re-running only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r tests/python/requirements.txt
.venv/bin/python -c "import pyarrow, rapid, pandera, strenum, duckdb, psycopg, psycopg2, sqlalchemy, deltalake, standardwebhooks, mcp; print('python test environment ready: pyarrow', pyarrow.__version__)"
python3 -m venv .venv-ext
.venv-ext/bin/python -m pip install --quiet --disable-pip-version-check -r tests/python/requirements-ext.txt
.venv-ext/bin/python -c "import duckdb, duckdb_extension_postgres_scanner, duckdb_extension_delta, sqlalchemy, psycopg2; print('DuckDB extensions ready: duckdb', duckdb.__version__)"
