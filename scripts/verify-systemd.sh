#!/usr/bin/env bash
# Checks deploy/rapid-rs.service with `systemd-analyze verify` (installing systemd's tools when
# missing) and prints its `systemd-analyze security` exposure score. The unit names
# /usr/local/bin/rapid-rs; when this machine has no such file, a copy of the unit
# pointing at the debug build is verified instead: everything else is the same.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v systemd-analyze >/dev/null; then
    echo "installing systemd (for systemd-analyze)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq systemd >/dev/null
fi

unit=deploy/rapid-rs.service
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$unit" "$work/rapid-rs.service"
if [ ! -x /usr/local/bin/rapid-rs ]; then
    [ -x target/debug/rapid-rs ] || cargo build --locked --bin rapid-rs
    sed -i "s|^ExecStart=/usr/local/bin/rapid-rs|ExecStart=$PWD/target/debug/rapid-rs|" "$work/rapid-rs.service"
fi

out=$(SYSTEMD_LOG_LEVEL=notice systemd-analyze verify --man=no "$work/rapid-rs.service" 2>&1) || {
    echo "$out"
    echo "FAIL: systemd-analyze verify $unit"
    exit 1
}
# Warnings about the host (no running systemd in a container) are not about the unit.
if echo "$out" | grep -v -e "Failed to connect" -e "System has not been booted" -e '^$' | grep -q .; then
    echo "$out"
    echo "FAIL: systemd-analyze verify reported problems in $unit"
    exit 1
fi
echo "ok: systemd-analyze verify $unit"
systemd-analyze security --offline=yes "$work/rapid-rs.service" 2>/dev/null | tail -1 || true
