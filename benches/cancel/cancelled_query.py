"""How long a query stopped at its time limit keeps a core after its answer (issue 40).

Starts the given rapid-rs binary on a free loopback port with a 2 s limit for synchronous
queries, uploads 300,000 rows, then for each round sends two queries that sort by a string built
with 45 nested concat calls (far longer than the limit) and, once both are answered 400,
samples the server: the CPU seconds it spent from the answers until its query slots were
free again (rapid_queries_running = 0, rapid_query_memory_reserved_bytes = 0 in /api/metrics),
how long that took, and the CPU it used in the second after (idle: ~0).

    python benches/cancel/cancelled_query.py target/release/rapid-rs [ROUNDS]
"""
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import requests

ADMIN = ("bench-admin", "bench-admin-secret-0123456789abcdef")


def start(binary, data):
    env = dict(os.environ, RAPID_ADMIN_CLIENT_ID=ADMIN[0], RAPID_ADMIN_CLIENT_SECRET=ADMIN[1])
    env.pop("RUST_LOG", None)
    proc = subprocess.Popen(
        [binary, "serve", "--bind", "127.0.0.1:0", "--data-dir", data,
         "--query-timeout-seconds", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
    for line in proc.stdout:
        if line.startswith("listening on "):
            threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()
            return proc, line.split()[2].strip()
    raise SystemExit("the server did not start")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def gauges(base, headers):
    text = requests.get(base + "/api/metrics", headers=headers).text
    values = {}
    for line in text.splitlines():
        for name in ('rapid_queries_running{pool="sync"}', "rapid_query_memory_reserved_bytes"):
            if line.startswith(name + " "):
                values[name] = float(line.split()[-1])
    return values


def main():
    binary = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    with tempfile.TemporaryDirectory() as data:
        proc, base = start(binary, data)
        try:
            token = requests.post(base + "/api/oauth2/token", auth=ADMIN,
                                  data={"grant_type": "client_credentials"}).json()["access_token"]
            h = {"Authorization": "Bearer " + token}
            schema = {"metadata": {"domain": "heavy", "dataset": "rows", "sensitivity": "PUBLIC",
                                   "update_behaviour": "APPEND",
                                   "owners": [{"name": "Owner", "email": "owner@example.com"}]},
                      "columns": [{"name": "a", "data_type": "int", "allow_null": False},
                                  {"name": "s", "data_type": "string", "allow_null": True}]}
            assert requests.post(base + "/api/schema", json=schema, headers=h).status_code == 201
            csv = "a,s\n" + "".join(f"{i},x{i}\n" for i in range(300_000))
            job = requests.post(base + "/api/datasets/default/heavy/rows", headers=h,
                                files={"file": ("rows.csv", csv)}).json()["details"]["job_id"]
            while requests.get(f"{base}/api/jobs/{job}", headers=h).json()["status"] == "IN PROGRESS":
                time.sleep(0.1)
            key = "s"
            for _ in range(45):
                key = f"concat({key}, s)"
            query = {"select_columns": ["a"], "order_by_columns": [{"column": key}], "limit": 5}
            answered, after_cpu, after_wall, idle_cpu = [], [], [], []
            for _ in range(rounds):
                statuses = []
                sent = time.monotonic()
                runs = [threading.Thread(target=lambda: statuses.append(requests.post(
                    base + "/api/datasets/default/heavy/rows/query", json=query, headers=h).status_code))
                    for _ in range(2)]
                for r in runs:
                    r.start()
                for r in runs:
                    r.join()
                assert statuses == [400, 400], statuses
                answered.append(time.monotonic() - sent)
                cpu0, t0 = cpu_seconds(proc.pid), time.monotonic()
                while True:
                    g = gauges(base, h)
                    if not any(g.values()):
                        break
                    time.sleep(0.005)
                after_cpu.append(cpu_seconds(proc.pid) - cpu0)
                after_wall.append(time.monotonic() - t0)
                cpu1 = cpu_seconds(proc.pid)
                time.sleep(1)
                idle_cpu.append(cpu_seconds(proc.pid) - cpu1)
            med = statistics.median
            print(f"{rounds} rounds of two queries stopped at their 2 s limit ({binary}):")
            print(f"  both answered 400 after: median {med(answered):.2f} s (max {max(answered):.2f} s)")
            print(f"  CPU after the answers until the slots were free: median {med(after_cpu):.3f} s "
                  f"(max {max(after_cpu):.3f} s, both queries together)")
            print(f"  wall time from the answers until the slots were free: median {med(after_wall)*1000:.0f} ms "
                  f"(max {max(after_wall)*1000:.0f} ms)")
            print(f"  CPU in the second after that: median {med(idle_cpu):.3f} s (max {max(idle_cpu):.3f} s)")
        finally:
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    main()
