#!/usr/bin/env bash
# Crash test (tests/crash): ROUNDS rounds (default 200) of concurrent uploads, deletions and schema
# changes against rapid-rs running on crashfs, each round ended by a simulated power cut, then
# checked. crashfs mounts through /dev/fuse with the mount(2) call, so it needs root (or
# CAP_SYS_ADMIN) and no package beyond the build; where FUSE cannot be mounted the test says so
# and skips. Seed: CRASH_SEED=N reproduces a run.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${1:-200}"
.venv/bin/python -c "import pyarrow, requests" 2>/dev/null || scripts/setup-python.sh >/dev/null
# The server binary as scripts/test.sh builds it: the same --workspace feature set, so it is warm
# after cargo test (a package-only build unifies other features and rebuilds the dependencies).
cargo test --workspace --locked --no-run --quiet
cargo build --locked -p crashfs --quiet
BIN="${CARGO_TARGET_DIR:-$PWD/target}/debug"
exec .venv/bin/python tests/crash/crash_test.py --server "$BIN/rapid-rs" --crashfs "$BIN/crashfs" \
    --rounds "$ROUNDS" ${CRASH_SEED:+--seed "$CRASH_SEED"}
