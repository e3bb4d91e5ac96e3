#!/usr/bin/env bash
# The cost of a `unique` column as uploads grow (benches/unique/unique.py). Builds the release
# binary (and the load tool's, rapid-bench, beside it) unless --binary is given; uses the project's venv with the peers' requirements.
#   benches/unique/run.sh [--only concurrent|append|memory] [--keys N] [--runs 3] [--binary PATH]
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/setup-python.sh >/dev/null
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r benches/peers/requirements.txt
if [[ " $* " != *" --binary "* ]]; then
  # rapid-bench too: the concurrent part runs `rapid-rs bench`, which runs the tool's binary.
  cargo build --release --locked --quiet -p rapid-rs -p rapid-bench
fi
exec .venv/bin/python benches/unique/unique.py "$@"
