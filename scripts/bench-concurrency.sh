#!/usr/bin/env bash
# Concurrent uploads against one upload at a time (issue 17): `rapid-rs bench --pregenerate` (files
# made before the clock starts) against a release server on loopback, one uploader to one
# dataset, then N uploaders to N datasets, alternately, ROUNDS times; prints each run and the
# median throughputs and their ratio. Each configuration runs on a fresh server and data folder.
#   scripts/bench-concurrency.sh [BINARY]   (env: ROWS=100000 FILES=32 UPLOADERS=16 ROUNDS=3)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:-target/release/rapid-rs}"
ROWS="${ROWS:-100000}" FILES="${FILES:-32}" UPLOADERS="${UPLOADERS:-16}" ROUNDS="${ROUNDS:-3}"
[ -x "$BIN" ] || cargo build --release --locked --quiet
# `"$BIN" bench` runs the load tool's own binary, rapid-bench, beside the server's (or on PATH).
[ -x "$(dirname "$BIN")/rapid-bench" ] || command -v rapid-bench >/dev/null \
  || cargo build --release --locked --quiet -p rapid-bench
source scripts/lib-serve.sh

run() { # uploaders datasets -> one line of JSON
  start_server "bench-admin"
  "$BIN" bench --json --pregenerate --url "$base/api" --client-id "$admin_id" \
    --client-secret "$admin_secret" --rows "$ROWS" --files "$FILES" --uploaders "$1" \
    --datasets "$2"
  kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""; rm -rf "$work"
}

results="$(mktemp)"
for round in $(seq 1 "$ROUNDS"); do
  for config in "1 one" "$UPLOADERS many"; do
    set -- $config
    run "$1" "$2" | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert r["exactly_once"] and r["files_failed"] == 0, r
print(json.dumps({"uploaders": r["uploaders"], "mb_per_second": r["mb_per_second"]}))' >>"$results"
    tail -n1 "$results"
  done
done
python3 - "$results" "$UPLOADERS" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
n = int(sys.argv[2])
one = statistics.median(r["mb_per_second"] for r in runs if r["uploaders"] == 1)
many = statistics.median(r["mb_per_second"] for r in runs if r["uploaders"] == n)
print(f"1 -> 1: {one:.1f} MB/s; {n} -> {n}: {many:.1f} MB/s; ratio {many / one:.2f} (medians)")
PY
rm -f "$results"
