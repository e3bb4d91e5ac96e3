#!/usr/bin/env bash
# Garage (https://garagehq.deuxfleurs.fr, from crates.io), the S3-compatible server the storage
# tests run against: a single node on free loopback ports, in a temporary folder.
#
#   source scripts/garage.sh && garage_start && trap garage_stop EXIT
#       starts it and exports AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID,
#       AWS_SECRET_ACCESS_KEY, AWS_ALLOW_HTTP and RAPID_TEST_S3_URL (s3://rapid-test);
#       garage_stop stops it and removes its folder.
#   scripts/garage.sh COMMAND [ARGS...]   runs COMMAND with Garage up, then stops it.
#   scripts/garage.sh                     starts it, prints the settings, waits for Ctrl-C.
#
# The binary is installed once (a debug build: about 20 minutes on 2 cores) into
# ${RAPID_TOOLS:-$HOME/.cache/rapid-rs-tools}/garage, or taken from $GARAGE_BIN.

GARAGE_VERSION=2.5.0
GARAGE_BUCKET=rapid-test

garage_install() {
  local tools="${RAPID_TOOLS:-$HOME/.cache/rapid-rs-tools}"
  GARAGE_BIN="${GARAGE_BIN:-$tools/garage/bin/garage}"
  if [ -x "$GARAGE_BIN" ] && "$GARAGE_BIN" --version 2>/dev/null | grep -q "$GARAGE_VERSION"; then
    return 0
  fi
  echo "garage.sh: installing garage $GARAGE_VERSION into $tools/garage (a debug build, ~20 min)" >&2
  cargo install --locked --debug --root "$tools/garage" --target-dir "$tools/garage-target" \
    "garage@$GARAGE_VERSION" --no-default-features --features bundled-libs,sqlite >&2 || return 1
  GARAGE_BIN="$tools/garage/bin/garage"
}

# A free loopback TCP port (the kernel's pick; released just before Garage binds it).
garage_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

garage_cli() {
  GARAGE_CONFIG_FILE="$GARAGE_DIR/garage.toml" "$GARAGE_BIN" "$@"
}

garage_start() {
  garage_install || return 1
  GARAGE_DIR="$(mktemp -d "${TMPDIR:-/tmp}/rapid-garage.XXXXXX")"
  local rpc s3
  rpc="$(garage_free_port)"
  s3="$(garage_free_port)"
  (umask 077 && cat >"$GARAGE_DIR/garage.toml" <<EOF
metadata_dir = "$GARAGE_DIR/meta"
data_dir = "$GARAGE_DIR/data"
db_engine = "sqlite"
replication_factor = 1
rpc_bind_addr = "127.0.0.1:$rpc"
rpc_public_addr = "127.0.0.1:$rpc"
rpc_secret = "$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"

[s3_api]
s3_region = "garage"
api_bind_addr = "127.0.0.1:$s3"
root_domain = ".s3.garage.localhost"
EOF
  )
  # The binary itself in the background (not the garage_cli function, whose subshell would be
  # what $! names and what garage_stop kills, leaving the server running).
  GARAGE_CONFIG_FILE="$GARAGE_DIR/garage.toml" "$GARAGE_BIN" server >"$GARAGE_DIR/garage.log" 2>&1 &
  GARAGE_PID=$!
  local node="" _
  for _ in $(seq 1 300); do
    node="$(garage_cli node id -q 2>/dev/null)" && [ -n "$node" ] && break
    kill -0 "$GARAGE_PID" 2>/dev/null || { cat "$GARAGE_DIR/garage.log" >&2; echo "garage.sh: garage did not start" >&2; return 1; }
    sleep 0.1
  done
  [ -n "$node" ] || { echo "garage.sh: garage did not answer" >&2; return 1; }
  local key_id secret
  key_id="GK$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  secret="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  {
    garage_cli layout assign -z dc1 -c 1G "${node%%@*}" &&
      garage_cli layout apply --version 1 &&
      garage_cli key import --yes -n rapid-test "$key_id" "$secret" &&
      garage_cli bucket create "$GARAGE_BUCKET" &&
      garage_cli bucket allow --read --write --owner "$GARAGE_BUCKET" --key rapid-test
  } >"$GARAGE_DIR/setup.log" 2>&1 || { cat "$GARAGE_DIR/setup.log" >&2; return 1; }
  export AWS_ENDPOINT_URL="http://127.0.0.1:$s3" AWS_REGION=garage AWS_ALLOW_HTTP=true
  export AWS_ACCESS_KEY_ID="$key_id" AWS_SECRET_ACCESS_KEY="$secret"
  export RAPID_TEST_S3_URL="s3://$GARAGE_BUCKET"
  # Ready when the S3 API answers (any HTTP status: an unsigned request is refused).
  for _ in $(seq 1 300); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$AWS_ENDPOINT_URL/")" != "000" ] && return 0
    sleep 0.1
  done
  echo "garage.sh: the S3 API on $AWS_ENDPOINT_URL did not answer" >&2
  return 1
}

garage_stop() {
  if [ -n "${GARAGE_PID:-}" ]; then
    kill "$GARAGE_PID" 2>/dev/null || true
    wait "$GARAGE_PID" 2>/dev/null || true
    GARAGE_PID=""
  fi
  if [ -n "${GARAGE_DIR:-}" ]; then
    rm -rf "$GARAGE_DIR"
    GARAGE_DIR=""
  fi
}

# Run, not sourced.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  trap garage_stop EXIT
  garage_start
  if [ "$#" -gt 0 ]; then
    "$@"
  else
    env | grep -E '^(AWS_(ENDPOINT_URL|REGION|ALLOW_HTTP|ACCESS_KEY_ID|SECRET_ACCESS_KEY)|RAPID_TEST_S3_URL)=' |
      sed 's/^/export /'
    echo "# Garage is up (log: $GARAGE_DIR/garage.log); Ctrl-C stops it." >&2
    wait "$GARAGE_PID"
  fi
fi
