#!/usr/bin/env bash
# The cost of a `unique` column as uploads grow (benches/unique/unique.py). Builds the release
# binary unless --binary is given; uses the project's venv with the peers' requirements.
#   benches/unique/run.sh [--only concurrent|append] [--runs 3] [--binary PATH]
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/setup-python.sh >/dev/null
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r benches/peers/requirements.txt
if [[ " $* " != *" --binary "* ]]; then
  cargo build --release --locked --quiet
fi
exec .venv/bin/python benches/unique/unique.py "$@"
