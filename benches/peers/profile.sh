#!/usr/bin/env bash
# Profiles one work item of the peer benchmark (benches/peers/profile.py): release build unless
# --binary is given, perf from Debian's linux-perf (installed if missing).
#   benches/peers/profile.sh group [--rows 1000000] [--seconds 20] [--binary PATH]
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v perf >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q linux-perf >/dev/null
scripts/setup-python.sh >/dev/null
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r benches/peers/requirements.txt
if [[ " $* " != *" --binary "* ]]; then
  cargo build --release --locked --quiet
fi
exec .venv/bin/python benches/peers/profile.py "$@"
