#!/usr/bin/env bash
# Screenshots of every page at 1280 and 390 px into docs/web/ (PNG): the browser suite run against
# the real debug server with Debian's Chromium (scripts/test-browser.sh, SCREENSHOTS=1), then each
# file made small with pngquant (256 colours, apt's pngquant; skipped, with a word, when absent).
set -euo pipefail
cd "$(dirname "$0")/.."
rm -f docs/web/*.png
SCREENSHOTS=1 scripts/test-browser.sh
if command -v pngquant >/dev/null; then
  pngquant --force --skip-if-larger --strip --quality 60-90 --ext .png docs/web/*.png || true
else
  echo "pngquant not found (apt-get install pngquant): the screenshots are left uncompressed"
fi
du -sh docs/web
