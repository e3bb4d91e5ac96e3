#!/usr/bin/env bash
# Latency of cheap requests while slow queries run (benches/README.md, "queries under load").
#
# Starts the given rapid-rs binary on 127.0.0.1 (port 0) with a fresh data folder, uploads a
# dataset of ROWS rows, then measures a cheap query (and GET /api/status) twice: alone, and while
# SLOW clients each send slow queries back to back for DURATION seconds. Bounded in time and
# count; loopback only. Prints one JSON object.
#
#   scripts/load-queries.sh [BINARY] [-- extra server flags]
#   ROWS=300000 SLOW=4 DURATION=20 SAMPLES=200 scripts/load-queries.sh target/release/rapid-rs
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-target/release/rapid-rs}
shift || true
[ "${1:-}" = "--" ] && shift
[ -x .venv/bin/python ] || scripts/setup-python.sh >/dev/null
exec .venv/bin/python - "$BIN" "$@" <<'PY'
import json, os, statistics, subprocess, sys, tempfile, threading, time
import requests

binary, extra = sys.argv[1], sys.argv[2:]
rows = int(os.environ.get("ROWS", "300000"))
slow_clients = int(os.environ.get("SLOW", "4"))
duration = min(float(os.environ.get("DURATION", "20")), 120.0)
samples = min(int(os.environ.get("SAMPLES", "200")), 2000)
secret = "load-secret-0123456789abcdef0123456789"
folder = tempfile.mkdtemp(prefix="rapid-load-")
env = dict(os.environ, RAPID_ADMIN_CLIENT_ID="load", RAPID_ADMIN_CLIENT_SECRET=secret)
server = subprocess.Popen(
    [binary, "serve", "--bind", "127.0.0.1:0", "--data-dir", folder + "/data", *extra],
    stdout=subprocess.PIPE, stderr=open(folder + "/server.log", "w"), env=env, text=True)
try:
    base = server.stdout.readline().split()[-1]
    assert base.startswith("http://127.0.0.1:"), base
    token = requests.post(base + "/api/oauth2/token", auth=("load", secret)).json()["access_token"]
    auth = {"Authorization": "Bearer " + token}
    schema = {"metadata": {"domain": "load", "dataset": "rows", "sensitivity": "PUBLIC",
                           "update_behaviour": "APPEND",
                           "owners": [{"name": "Load", "email": "load@example.com"}]},
              "columns": [{"name": "a", "data_type": "int", "allow_null": False},
                          {"name": "s", "data_type": "string", "allow_null": True}]}
    assert requests.post(base + "/api/schema", json=schema, headers=auth).status_code == 201
    csv = "a,s\n" + "".join(f"{i},x{i}\n" for i in range(rows))
    r = requests.post(base + "/api/datasets/default/load/rows", headers=auth,
                      files={"file": ("rows.csv", csv)})
    job = r.json()["details"]["job_id"]
    while requests.get(f"{base}/api/jobs/{job}", headers=auth).json()["status"] == "IN PROGRESS":
        time.sleep(0.1)
    query = base + "/api/datasets/default/load/rows/query"
    cheap = {"filter": "a < 10"}
    key = "s"
    for _ in range(45):
        key = f"concat({key}, s)"
    slow = {"select_columns": ["a"], "order_by_columns": [{"column": key}], "limit": 5}

    def measure(n):
        query_ms, status_ms = [], []
        for _ in range(n):
            t = time.perf_counter()
            assert requests.post(query, json=cheap, headers=auth).status_code == 200
            query_ms.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            assert requests.get(base + "/api/status").status_code == 200
            status_ms.append((time.perf_counter() - t) * 1000)
        return query_ms, status_ms

    def summary(ms):
        ms = sorted(ms)
        pick = lambda q: round(ms[min(len(ms) - 1, int(q * len(ms)))], 1)
        return {"n": len(ms), "p50": pick(0.5), "p99": pick(0.99), "max": round(ms[-1], 1),
                "mean": round(statistics.mean(ms), 1)}

    measure(20)  # warm-up
    alone = measure(samples)
    stop = time.monotonic() + duration
    outcomes, lock = {}, threading.Lock()

    def slow_client():
        while time.monotonic() < stop:
            t = time.perf_counter()
            try:
                code = requests.post(query, json=slow, headers=auth, timeout=300).status_code
            except requests.RequestException:
                code = "error"
            with lock:
                outcomes.setdefault(str(code), []).append(round(time.perf_counter() - t, 2))

    threads = [threading.Thread(target=slow_client) for _ in range(slow_clients)]
    for th in threads:
        th.start()
    time.sleep(min(2.0, duration / 4))
    loaded = ([], [])
    while time.monotonic() < stop and len(loaded[0]) < samples:
        q, s = measure(1)
        loaded[0].extend(q)
        loaded[1].extend(s)
    for th in threads:
        th.join()
    print(json.dumps({
        "binary": binary, "flags": extra, "rows": rows, "slow_clients": slow_clients,
        "duration_s": duration,
        "cheap_query_alone_ms": summary(alone[0]), "status_alone_ms": summary(alone[1]),
        "cheap_query_under_load_ms": summary(loaded[0]) if loaded[0] else None,
        "status_under_load_ms": summary(loaded[1]) if loaded[1] else None,
        "slow_queries": {code: {"count": len(v), "median_s": statistics.median(v)}
                         for code, v in outcomes.items()},
    }, indent=1))
finally:
    server.terminate()
    server.wait(timeout=60)
PY
