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

# shellcheck source=scripts/lib-serve.sh
. scripts/lib-serve.sh
start_server browser-admin

status=0
RAPID_URL="$base" RAPID_ADMIN_ID="$admin_id" RAPID_ADMIN_SECRET="$admin_secret" \
  RAPID_SCREENSHOTS="${SCREENSHOTS:+$PWD/docs/web}" \
  timeout "$MAX_TIME" node --test --test-concurrency=1 tests/browser/ || status=$?
if [ "$status" != 0 ]; then
  echo "--- server log (last 40 lines) ---"; tail -n 40 "$work/server.log"
fi
exit "$status"
