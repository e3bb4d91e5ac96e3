# Sourced by the test scripts: starts "$BIN" on 127.0.0.1 port 0 with a temporary data folder and
# an admin client named $1, waits for "listening on", and sets `work`, `server_pid`, `base`,
# `admin_id` and `admin_secret`. The server is stopped and the folder removed on exit.
start_server() {
  admin_id="$1"
  admin_secret="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  work="$(mktemp -d)"
  server_pid=""
  trap 'if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi; rm -rf "$work"' EXIT
  RAPID_ADMIN_CLIENT_ID="$admin_id" RAPID_ADMIN_CLIENT_SECRET="$admin_secret" \
    ALLOWED_EMAIL_DOMAINS=example.com \
    "$BIN" serve --bind 127.0.0.1:0 --workers 2 --data-dir "$work/data" \
    >"$work/stdout" 2>"$work/server.log" &
  server_pid=$!
  base=""
  for _ in $(seq 1 300); do
    base="$(sed -n 's/^listening on //p' "$work/stdout" | head -n1)"
    [ -n "$base" ] && return 0
    kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log"; echo "rapid-rs did not start"; exit 1; }
    sleep 0.1
  done
  echo "rapid-rs did not print its address"; exit 1
}
