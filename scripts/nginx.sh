#!/usr/bin/env bash
# A round-robin load balancer in front of several rapid-rs nodes, on loopback, for the
# multi-node tests and the demo: nginx from Debian's packages (installed if missing), its own
# configuration and logs in a temporary folder, no root privileges kept, no system service.
#
# Sourced:   . scripts/nginx.sh; start_nginx 127.0.0.1:8001 127.0.0.1:8002
#            -> sets NGINX_URL (http://127.0.0.1:PORT) and stops nginx on exit (stop_nginx).
# Run:       scripts/nginx.sh 127.0.0.1:8001 127.0.0.1:8002   (prints the URL, runs until ^C)
set -euo pipefail

nginx_bin() {
  if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q nginx-light >/dev/null
  fi
  command -v nginx 2>/dev/null || echo /usr/sbin/nginx
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start_nginx() {
  [ "$#" -ge 1 ] || { echo "start_nginx: give the nodes' host:port" >&2; return 2; }
  local bin port servers=""
  bin="$(nginx_bin)"
  NGINX_DIR="$(mktemp -d)"
  chmod 755 "$NGINX_DIR"
  port="$(free_port)"
  for node in "$@"; do servers="$servers    server $node max_fails=1 fail_timeout=2s;"$'\n'; done
  # Uploads stream through unbuffered and uncapped (the nodes enforce their own limits);
  # a node that fails mid-request is retried on the next one only for idempotent methods.
  cat >"$NGINX_DIR/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $NGINX_DIR/nginx.pid;
error_log $NGINX_DIR/error.log warn;
events { worker_connections 1024; }
http {
  # Which node served each request, for the tests' spread check.
  log_format upstream '\$upstream_addr \$request_method \$uri \$status';
  access_log $NGINX_DIR/access.log upstream;
  client_body_temp_path $NGINX_DIR/body;
  proxy_temp_path $NGINX_DIR/proxy;
  fastcgi_temp_path $NGINX_DIR/fastcgi;
  uwsgi_temp_path $NGINX_DIR/uwsgi;
  scgi_temp_path $NGINX_DIR/scgi;
  upstream rapid {
$servers  }
  server {
    listen 127.0.0.1:$port;
    client_max_body_size 0;
    proxy_request_buffering off;
    proxy_buffering off;
    proxy_http_version 1.1;
    proxy_read_timeout 3600s;
    proxy_send_timeout 3600s;
    location / {
      proxy_pass http://rapid;
      # The host as the client wrote it, port included (\$host drops the port), and the
      # scheme: the nodes build download links from them (believed from RAPID_TRUSTED_PROXIES).
      proxy_set_header Host \$http_host;
      proxy_set_header X-Forwarded-Host \$http_host;
      proxy_set_header X-Forwarded-Proto \$scheme;
      proxy_set_header X-Forwarded-For \$remote_addr;
      proxy_set_header Connection "";
      proxy_next_upstream error timeout;
    }
  }
}
CONF
  "$bin" -c "$NGINX_DIR/nginx.conf" -p "$NGINX_DIR" >"$NGINX_DIR/stdout" 2>&1 &
  NGINX_PID=$!
  NGINX_URL="http://127.0.0.1:$port"
  for _ in $(seq 1 100); do
    if python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $port), 0.2)" 2>/dev/null; then
      export NGINX_URL NGINX_PID NGINX_DIR
      return 0
    fi
    kill -0 "$NGINX_PID" 2>/dev/null || { cat "$NGINX_DIR/stdout" "$NGINX_DIR/error.log" >&2; return 1; }
    sleep 0.1
  done
  echo "nginx did not listen on $port" >&2
  return 1
}

stop_nginx() {
  if [ -n "${NGINX_PID:-}" ]; then
    kill "$NGINX_PID" 2>/dev/null || true
    wait "$NGINX_PID" 2>/dev/null || true
    NGINX_PID=""
  fi
  [ -n "${NGINX_DIR:-}" ] && rm -rf "$NGINX_DIR"
  NGINX_DIR=""
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  trap stop_nginx EXIT
  start_nginx "$@"
  echo "$NGINX_URL"
  wait "$NGINX_PID"
fi
