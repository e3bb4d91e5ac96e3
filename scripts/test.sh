#!/usr/bin/env bash
# The project's test command: unit tests of every crate and the HTTP integration tests, which
# start the real rapid-rs binary on free loopback ports with temporary data folders.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --locked "$@"
