#!/usr/bin/env bash
# Two rapid-rs nodes on one PostgreSQL catalog and one S3 bucket (Garage), behind nginx, all on
# loopback (issue 18's acceptance run; docs/scale-out.md has the figures it prints):
#   1. the rAPId SDK journey through the balancer;
#   2. `rapid-rs bench`: 200 concurrent uploads (SCALE_UPLOADS) to one dataset spread over both nodes, every
#      accepted row stored exactly once; then the same load against one node, for the figures;
#   3. kill -9 of one node during uploads: no half-committed data (bench's exactly-once check),
#      its jobs FAILED within the lease, the other node keeps serving;
#   4. DuckDB (its delta and httpfs extensions, from PyPI) reads the dataset's Delta table in the
#      bucket (delta_scan, through the Delta log) and counts the rows the service counts.
# Installs what it needs (PostgreSQL, Garage, nginx, a DuckDB venv) on first use.
#   scripts/test-scale-out.sh            (RAPID_BIN=path to use a built binary; SCALE_UPLOADS=N
#                                        for N concurrent uploads in step 2 instead of 200:
#                                        scripts/test.sh runs 50, about 80 s less in a debug build)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${RAPID_BIN:-}" ]; then
  # rapid-bench too: `rapid-rs bench` below runs the load tool's binary beside the server's.
  cargo build --locked --quiet -p rapid-rs -p rapid-bench
  RAPID_BIN="${CARGO_TARGET_DIR:-$PWD/target}/debug/rapid-rs"
fi
scripts/setup-python.sh >/dev/null
source scripts/pg.sh
source scripts/garage.sh
source scripts/nginx.sh

ADMIN_ID=sdk-admin                                   # as tests/sdk/conftest.py
ADMIN_SECRET=sdk-admin-secret-0123456789abcdef0123
LEASE=6
# The bench's closing count reads ~800 small objects through a debug build of rapid-rs and of
# Garage: longer than the default 30 s limit of a synchronous query, hence the node flag below.
work="$(mktemp -d)"
declare -A node_pid node_addr
cleanup() {
  local status=$?
  if [ "$status" != 0 ]; then
    for f in "$work"/*.log "$work"/*.json; do
      [ -f "$f" ] && { echo "---- $f (tail)"; tail -n 40 "$f"; }
    done
  fi
  for n in "${!node_pid[@]}"; do kill -9 "${node_pid[$n]}" 2>/dev/null || true; done
  stop_nginx
  garage_stop
  pg_stop
  rm -rf "$work"
}
trap cleanup EXIT
say() { printf '\n== %s\n' "$*"; }

pg_start
garage_start
STORAGE_URL="$RAPID_TEST_S3_URL/scale-out"

# Starts node $1 (its own data folder for staging; catalog, bucket and signing key shared).
start_node() {
  local name="$1" out="$work/$1.out"
  RAPID_ADMIN_CLIENT_ID="$ADMIN_ID" RAPID_ADMIN_CLIENT_SECRET="$ADMIN_SECRET" \
    ALLOWED_EMAIL_DOMAINS=example.com RUST_LOG=warn \
    "$RAPID_BIN" serve --bind 127.0.0.1:0 --workers 2 --data-dir "$work/$name" \
      --catalog-url "$PG_URL" --storage-url "$STORAGE_URL" --key-file "$work/shared.key" \
      --node-id "$name" --job-lease-secs "$LEASE" --query-timeout-seconds 600 \
      --trusted-proxies 127.0.0.1 \
      >"$out" 2>"$work/$name.log" &
  node_pid[$name]=$!
  for _ in $(seq 1 300); do
    node_addr[$name]="$(sed -n 's/^listening on http:\/\///p' "$out" | head -n1)"
    [ -n "${node_addr[$name]}" ] && return 0
    kill -0 "${node_pid[$name]}" 2>/dev/null || { cat "$work/$name.log"; echo "node $name did not start"; exit 1; }
    sleep 0.1
  done
  echo "node $name did not print its address"; exit 1
}

start_node a
start_node b
start_nginx "${node_addr[a]}" "${node_addr[b]}"
BALANCER="$NGINX_URL/api"
echo "nodes: a=${node_addr[a]} b=${node_addr[b]}; balancer: $NGINX_URL; catalog: PostgreSQL; storage: $STORAGE_URL"

say "1. rAPId SDK journey through the balancer"
RAPID_SDK_URL="$BALANCER" .venv/bin/python -m pytest -q tests/sdk

bench() {  # bench URL DATASETS-NAME-SEED ARGS...
  local url="$1"; shift
  "$RAPID_BIN" bench --url "$url" --client-id "$ADMIN_ID" --client-secret "$ADMIN_SECRET" \
    --json "$@"
}
figure() { .venv/bin/python -c 'import json,sys; r=json.load(open(sys.argv[1])); print("   %d of %d files stored, %d rows in %.1f s: %.0f rows/s; exactly once: %s; %d poll(s)/count(s) retried" % (r["files_stored"], r["files"], r["rows_stored"], r["seconds"], r["rows_per_second"], r["exactly_once"], r["retries"]))' "$1"; }

UPLOADS="${SCALE_UPLOADS:-200}"
say "2. $UPLOADS concurrent uploads to one dataset through the balancer"
bench "$BALANCER" --uploaders "$UPLOADS" --files "$UPLOADS" --rows 2000 --seed 11 >"$work/two.json"
figure "$work/two.json"
for n in a b; do
  echo "   node $n received $(grep -c "^${node_addr[$n]} POST /api/datasets/default/bench/" "$NGINX_DIR/access.log" || true) of the uploads"
done
say "   the same load against node a alone"
bench "http://${node_addr[a]}/api" --uploaders "$UPLOADS" --files "$UPLOADS" --rows 2000 --seed 12 >"$work/one.json"
figure "$work/one.json"

# One admin token (issued by node a, valid on every node: the signing key is shared).
token="$(curl -sf -u "$ADMIN_ID:$ADMIN_SECRET" -d grant_type=client_credentials "http://${node_addr[a]}/api/oauth2/token" | .venv/bin/python -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')"
dataset="$(.venv/bin/python -c 'import json,sys; print(json.load(open(sys.argv[1]))["verification"][0]["dataset"])' "$work/two.json")"
# large_query URL [CURL-ARGS...]: starts a large query at URL (an .../api base), polls it there
# and prints the result link exactly as the service returned it.
large_query() {
  local api="$1"; shift
  local job link=""
  job="$(curl -sf "$@" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' -d '{"limit": 10}' \
    "$api/datasets/default/bench/$dataset/query/large" \
    | .venv/bin/python -c 'import json,sys; print(json.load(sys.stdin)["details"]["job_id"])')"
  for _ in $(seq 1 600); do
    link="$(curl -sf -H "Authorization: Bearer $token" "$api/jobs/$job" \
      | .venv/bin/python -c 'import json,sys; j=json.load(sys.stdin); print(j["result_url"] or "" if j["status"] == "SUCCESS" else "")')"
    [ -n "$link" ] && break
    sleep 0.2
  done
  [ -n "$link" ] || { echo "FAILED: the large query did not succeed" >&2; exit 1; }
  echo "$link"
}
# fetch_link LINK WHAT: downloads LINK exactly as given; 11 lines expected (header + 10 rows).
fetch_link() {
  local lines
  lines="$(curl -sf "$1" | wc -l)"
  echo "   $2: $lines lines (header + 10 rows) from $1"
  [ "$lines" = 11 ] || { echo "FAILED: expected 11 lines from $1"; exit 1; }
}

say "   a download link made through the balancer, fetched as given"
link="$(large_query "$BALANCER")"
case "$link" in
  "$NGINX_URL/api/results/"*) ;;
  *) echo "FAILED: the link does not name the balancer ($NGINX_URL): $link"; exit 1 ;;
esac
fetch_link "$link" "the balancer served the result"

say "   a download link made on node a for node b's address, fetched as given"
# This script is on loopback, a trusted proxy: it forwards node b's address as the host.
link="$(large_query "http://${node_addr[a]}/api" -H "X-Forwarded-Host: ${node_addr[b]}")"
case "$link" in
  "http://${node_addr[b]}/api/results/"*) ;;
  *) echo "FAILED: the link does not name node b: $link"; exit 1 ;;
esac
fetch_link "$link" "node b served node a's result"

say "3. kill -9 of node b during uploads"
bench "$BALANCER" --uploaders 16 --duration 12 --rows 5000 --seed 13 >"$work/killed.json" &
bench_pid=$!
sleep 4
kill -9 "${node_pid[b]}"
unset 'node_pid[b]'
echo "   node b killed"
bench_status=0
wait "$bench_pid" || bench_status=$?
figure "$work/killed.json"
[ "$bench_status" = 0 ] || { echo "FAILED: rows not stored exactly once after the kill"; exit 1; }
deadline=$((SECONDS + LEASE * 3 + 10))
while :; do
  left="$(curl -sf -H "Authorization: Bearer $token" "http://${node_addr[a]}/api/jobs" \
    | .venv/bin/python -c 'import json,sys; print(sum(j["status"] == "IN PROGRESS" for j in json.load(sys.stdin)))')"
  [ "$left" = 0 ] && break
  [ "$SECONDS" -lt "$deadline" ] || { echo "FAILED: $left jobs still IN PROGRESS after the lease"; exit 1; }
  sleep 1
done
echo "   no job left IN PROGRESS (lease ${LEASE}s); node a still serves:"
curl -sf "http://${node_addr[a]}/api/status"; echo

say "4. DuckDB reads the dataset's Delta table in the bucket"
# Through the Delta log (DuckDB's `delta` extension, delta_scan), as every lake reader must: the
# bucket also keeps files that compaction replaced, for the retained history, which a glob of
# its Parquet would count again.
duck="${RAPID_TOOLS:-$HOME/.cache/rapid-rs-tools}/duckdb-delta-venv"
if [ ! -x "$duck/bin/python" ] || ! "$duck/bin/python" -c 'import duckdb_extension_delta, duckdb_extension_httpfs' 2>/dev/null; then
  python3 -m venv "$duck"
  "$duck/bin/pip" install --quiet --disable-pip-version-check duckdb==1.5.5 \
    duckdb-extension-httpfs==1.5.5 duckdb-extension-delta==1.5.5
fi
ours="$(curl -sf -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
  -d '{"select_columns": ["count(*) AS n"]}' \
  "http://${node_addr[a]}/api/datasets/default/bench/$dataset/query" \
  | .venv/bin/python -c 'import json,sys; print(json.load(sys.stdin)["0"]["n"])')"
theirs="$("$duck/bin/python" - "$STORAGE_URL" "$dataset" <<'PY'
import glob, os, sys
import duckdb
import duckdb_extension_delta, duckdb_extension_httpfs
url, dataset = sys.argv[1].rstrip("/"), sys.argv[2]
endpoint = os.environ["AWS_ENDPOINT_URL"].split("://", 1)[1]
con = duckdb.connect()
# DuckDB's own signed extension binaries, from PyPI (the machine cannot reach DuckDB's site).
for package in (duckdb_extension_httpfs, duckdb_extension_delta):
    con.load_extension(glob.glob(os.path.join(os.path.dirname(package.__file__),
                                              "extensions", "*", "*.duckdb_extension"))[0])
con.execute(f"""CREATE SECRET s3 (TYPE s3, KEY_ID '{os.environ["AWS_ACCESS_KEY_ID"]}',
    SECRET '{os.environ["AWS_SECRET_ACCESS_KEY"]}', REGION '{os.environ["AWS_REGION"]}',
    ENDPOINT '{endpoint}', URL_STYLE 'path', USE_SSL false)""")
# The latest schema version's table, data/{layer}/{domain}/{dataset}/{version}/ (what /query reads).
dataset_root = f"{url}/data/default/bench/{dataset}"
logs = con.execute(f"SELECT file FROM glob('{dataset_root}/*/_delta_log/*.json')").fetchall()
version = max(int(f[len(dataset_root) + 1:].split("/", 1)[0]) for (f,) in logs)
n = con.execute(f"SELECT count(*) FROM delta_scan('{dataset_root}/{version}')").fetchone()[0]
print(n)
PY
)"
echo "   rapid-rs counts $ours rows of default/bench/$dataset; DuckDB counts $theirs in its Delta table"
[ "$ours" = "$theirs" ] || { echo "FAILED: the counts differ"; exit 1; }
say "scale-out: all passed"
