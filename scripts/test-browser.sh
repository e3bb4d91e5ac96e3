#!/usr/bin/env bash
# Browser tests of the web pages: playwright-core (npm, tests/browser) driving Debian's Chromium
# headless against a live debug server on 127.0.0.1 (port 0) with a temporary data folder.
# Installs what is missing: chromium (apt) and the npm packages of the committed lock file.
# Screenshots of every page (desktop and phone width) go to docs/web/ when SCREENSHOTS=1.
# Bounded: the whole run is cut at BROWSER_MAX_TIME seconds (default 300).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${RAPID_BIN:-${CARGO_TARGET_DIR:-$PWD/target}/debug/rapid-rs}"
MAX_TIME="${BROWSER_MAX_TIME:-300}"
[ -x "$BIN" ] || cargo build --locked --bin rapid-rs

if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q chromium chromium-driver
fi
command -v node >/dev/null || { echo "node (>= 18) is needed to run the browser tests"; exit 1; }
if [ ! -d tests/browser/node_modules/playwright-core ]; then
  (cd tests/browser && npm ci --no-audit --no-fund)
fi

work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

admin_id="browser-admin"
admin_secret="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
RAPID_ADMIN_CLIENT_ID="$admin_id" RAPID_ADMIN_CLIENT_SECRET="$admin_secret" \
  ALLOWED_EMAIL_DOMAINS=example.com \
  "$BIN" serve --bind 127.0.0.1:0 --workers 2 --data-dir "$work/data" \
  >"$work/stdout" 2>"$work/server.log" &
server_pid=$!
base=""
for _ in $(seq 1 300); do
  base="$(sed -n 's/^listening on //p' "$work/stdout" | head -n1)"
  [ -n "$base" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log"; echo "rapid-rs did not start"; exit 1; }
  sleep 0.1
done
[ -n "$base" ] || { echo "rapid-rs did not print its address"; exit 1; }

status=0
RAPID_URL="$base" RAPID_ADMIN_ID="$admin_id" RAPID_ADMIN_SECRET="$admin_secret" \
  RAPID_SCREENSHOTS="${SCREENSHOTS:+$PWD/docs/web}" \
  timeout "$MAX_TIME" node --test --test-concurrency=1 tests/browser/ || status=$?
if [ "$status" != 0 ]; then
  echo "--- server log (last 40 lines) ---"; tail -n 40 "$work/server.log"
fi
exit "$status"
