#!/usr/bin/env bash
# Hostile load on loopback, bounded in count and time (about a minute and a half in all):
# a sign-in flood (200 password guessers on one user, 40 on unknown names, 20 on the admin
# client's secret) sent from SOURCES loopback addresses (127.0.0.2 and up) while a good client on
# 127.0.0.1 asks for /api/status, the dataset listing and tokens; 100 concurrent 50 MB schema
# generations; and the two decoding bombs. Each phase gets a fresh server; the tool
# (examples/load_signin.rs) samples its RSS from /proc.
#
#   scripts/load-signin.sh [seconds-of-flood [sources [phases]]]
#     seconds default 8 (at most 30); sources default 50 (0: every request from 127.0.0.1);
#     phases default "signin generate bombs". PROFILE=debug uses a debug build.
#     Extra server flags (e.g. the "before" settings): SERVER_ARGS="--hash-workers 2".
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_OF_FLOOD="${1:-8}"
SOURCES="${2:-50}"
PHASES="${3:-signin generate bombs}"
PROFILE="${PROFILE:-release}"
if [ "$PROFILE" = release ]; then
  cargo build --release --locked --bin rapid-rs --example load_signin
else
  cargo build --locked --bin rapid-rs --example load_signin
fi
# RAPID_BIN: another server binary (e.g. an older build, for "before" figures).
BIN="${RAPID_BIN:-target/$PROFILE/rapid-rs}"
TOOL="target/$PROFILE/examples/load_signin"
echo "build: $PROFILE; attackers from $SOURCES address(es)"
read -r -a SERVER_FLAGS <<<"${SERVER_ARGS:-}"
ADMIN_ID=loadadmin
ADMIN_SECRET="load-admin-secret-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"

run_phase() {
  local phase="$1"
  local dir
  dir="$(mktemp -d)"
  RAPID_ADMIN_CLIENT_ID="$ADMIN_ID" RAPID_ADMIN_CLIENT_SECRET="$ADMIN_SECRET" \
  ALLOWED_EMAIL_DOMAINS=example.com RUST_LOG=warn,rapid_actors::auth::signin=info \
    "$BIN" serve --bind 127.0.0.1:0 --data-dir "$dir/data" ${SERVER_FLAGS[@]+"${SERVER_FLAGS[@]}"} >"$dir/out" 2>"$dir/log" &
  local pid=$!
  local addr=""
  for _ in $(seq 1 200); do
    addr="$(sed -n 's/^listening on //p' "$dir/out" | head -1)"
    [ -n "$addr" ] && break
    sleep 0.05
  done
  [ -n "$addr" ] || { echo "server did not start"; cat "$dir/log"; kill "$pid"; exit 1; }
  echo "== $phase (server pid $pid, $addr)"
  "$TOOL" --base "$addr" --pid "$pid" --admin-id "$ADMIN_ID" --admin-secret "$ADMIN_SECRET" \
    --seconds "$SECONDS_OF_FLOOD" --phase "$phase" --sources "$SOURCES"
  if kill -0 "$pid" 2>/dev/null; then
    echo "server still up: yes"
  else
    echo "server still up: NO"
  fi
  # The server's own counters (never a secret): the last summary line.
  grep 'sign-in counters' "$dir/log" | tail -1 | sed 's/^.*counts=/sign-in counters: /' || true
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -rf "$dir"
}

for phase in $PHASES; do
  run_phase "$phase"
done
