"""As-of reads and rollback on a dataset with many commits (issue 36), timed as a client sees them.

    .venv/bin/python benches/history/asof.py [--binary target/release/rapid-rs] [--commits 100]
        [--rows 10000] [--runs 21]

One release server keeping every commit (RAPID_HISTORY_KEEP_COMMITS above the commit count),
compaction on as by default. The peers bench's CSV cut into `--commits` appends of `--rows` rows:
- `h` gets every append; `half` gets the first half only, so `half` now holds what `h` held at
  its middle append's commit.
- q1 (group by + having + order) and q2 (filter + 3 columns + limit 1000), medians after a warm-up:
  current `h` against `h` as of its newest commit (the same files through the as-of path), and
  current `half` against `h` as of its middle append (the same rows; the as-of read takes the
  files that commit listed, the current one the files `half` has now, compacted or not).
- Before timing, the data folder settles (no Parquet file added or removed for 15 s: the
  compactor's idle pass has merged what it will), so both datasets are read as a user would
  read them a little after their last upload.
- Answers are checked: q1's groups and counts equal and its means equal to 1e-9 (a sum's
  rounding follows the files' order), q2's row count (it has no order, so which 1,000 rows
  come back may differ).
- Rollback of `h` to its first commit (undoing all the later ones), timed to the 200 answer.
"""

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import requests

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "peers"))
import peers  # noqa: E402

Q1 = {"select_columns": ["category", "avg(amount) AS mean", "count(*) AS n"],
      "group_by_columns": ["category"], "aggregation_conditions": "avg(amount) > 1",
      "order_by_columns": [{"column": "category"}]}
Q2 = {"select_columns": ["id", "amount", "qty"], "filter": "region = 'north'", "limit": 1000}


class Server:
    def __init__(self, binary, folder, keep):
        env = dict(os.environ, RAPID_ADMIN_CLIENT_ID=peers.ADMIN_ID,
                   RAPID_ADMIN_CLIENT_SECRET=peers.ADMIN_SECRET,
                   RAPID_HISTORY_KEEP_COMMITS=str(keep), RAPID_HISTORY_KEEP_SECONDS="0")
        self.proc = subprocess.Popen(
            [binary, "serve", "--bind", "127.0.0.1:0", "--log-level", "warn",
             "--data-dir", folder], stdout=subprocess.PIPE, env=env, text=True)
        for line in self.proc.stdout:
            if line.startswith("listening on "):
                self.base = line.split(" ", 2)[2].strip()
                break
        else:
            raise SystemExit("rapid-rs exited before listening")
        self.http = requests.Session()
        res = self.http.post(f"{self.base}/api/oauth2/token",
                             auth=(peers.ADMIN_ID, peers.ADMIN_SECRET),
                             data={"grant_type": "client_credentials"})
        res.raise_for_status()
        self.token = "Bearer " + res.json()["access_token"]
        self.http.headers["Authorization"] = self.token
        self.lean = http.client.HTTPConnection(self.base.split("//", 1)[1])

    def url(self, dataset, tail=""):
        return f"{self.base}/api/datasets/default/peers/{dataset}{tail}"

    def create(self, dataset):
        schema = {"metadata": {"domain": "peers", "dataset": dataset, "sensitivity": "PUBLIC",
                               "owners": [{"name": "Bench", "email": "bench@example.com"}]},
                  "columns": peers.SCHEMA_COLUMNS}
        res = self.http.post(f"{self.base}/api/schema", json=schema)
        assert res.status_code == 201, res.text

    def append(self, dataset, path):
        with open(path, "rb") as f:
            res = self.http.post(self.url(dataset), files={"file": (os.path.basename(path), f)})
        assert res.status_code == 202, res.text
        job_id = res.json()["details"]["job_id"]
        while True:
            job = self.http.get(f"{self.base}/api/jobs/{job_id}").json()
            if job["status"] != "IN PROGRESS":
                assert job["status"] == "SUCCESS", job
                return job
            time.sleep(0.005)

    def commits(self, dataset):
        """Every commit of version 1, oldest first."""
        out, page = [], 1
        while True:
            res = self.http.get(self.url(dataset, "/history"),
                                params={"version": 1, "page": page, "per_page": 100})
            assert res.status_code == 200, res.text
            body = res.json()
            rows = body["commits"] if isinstance(body, dict) else body
            out.extend(rows)
            if len(rows) < 100:
                return sorted(out, key=lambda c: c["commit"])
            page += 1

    def query(self, dataset, body, as_of=None):
        """One query on a kept-alive connection; the answer's length and the commit it read."""
        path = f"/api/datasets/default/peers/{dataset}/query"
        if as_of is not None:
            path += f"?as_of_commit={as_of}"
        self.lean.request("POST", path, json.dumps(body).encode(), {
            "Authorization": self.token, "Content-Type": "application/json"})
        res = self.lean.getresponse()
        answer = res.read()
        assert res.status == 200, answer
        return answer, res.getheader("X-Rapid-Commit")

    def stop(self):
        self.lean.close()
        self.proc.terminate()
        self.proc.wait()


def settle(folder, quiet=15, limit=300):
    """Waits until the set of Parquet files under `folder` has not changed for `quiet` s."""
    def files():
        return {os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs
                if f.endswith(".parquet")}
    seen, since, start = files(), time.time(), time.time()
    while time.time() - since < quiet and time.time() - start < limit:
        time.sleep(0.5)
        now = files()
        if now != seen:
            seen, since = now, time.time()
    return len(seen), time.time() - start


def same_answer(name, a, b):
    a, b = json.loads(a), json.loads(b)
    if name.startswith("q2"):
        return len(a) == len(b)
    if a.keys() != b.keys():
        return False
    for k in a:
        x, y = a[k], b[k]
        if x["category"] != y["category"] or x["n"] != y["n"]:
            return False
        if abs(x["mean"] - y["mean"]) > 1e-9 * max(1.0, abs(x["mean"])):
            return False
    return True


def median_ms(f, runs):
    f()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def cut(csv, parts, rows, folder):
    """`parts` CSV files of `rows` rows each, the header repeated."""
    paths = []
    with open(csv) as f:
        header = f.readline()
        for i in range(parts):
            path = os.path.join(folder, f"part-{i:04}.csv")
            with open(path, "w") as out:
                out.write(header)
                for _ in range(rows):
                    out.write(f.readline())
            paths.append(path)
    return paths


def main():
    args = argparse.ArgumentParser()
    args.add_argument("--binary", default="target/release/rapid-rs")
    args.add_argument("--commits", type=int, default=100)
    args.add_argument("--rows", type=int, default=10_000)
    args.add_argument("--runs", type=int, default=21)
    a = args.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        csv = os.path.join(folder, "all.csv")
        peers.generate_csv(csv, a.commits * a.rows)
        parts = cut(csv, a.commits, a.rows, folder)
        data = os.path.join(folder, "data")
        server = Server(a.binary, data, keep=4 * a.commits + 100)
        try:
            run(server, parts, a, data)
        finally:
            server.stop()


def run(server, parts, a, data):
    middle = len(parts) // 2
    server.create("h")
    server.create("half")
    start = time.perf_counter()
    for p in parts:
        server.append("h", p)
    print(f"{len(parts)} appends of {a.rows} rows to h: {time.perf_counter() - start:.1f} s")
    for p in parts[:middle]:
        server.append("half", p)
    files, took = settle(data)
    print(f"settled: {files} Parquet files after {took:.0f} s")
    commits = server.commits("h")
    appends = [c for c in commits if c["operation"] == "APPEND"]
    at_middle, newest, first = appends[middle - 1]["commit"], commits[-1]["commit"], commits[0]
    kinds = {}
    for c in commits:
        kinds[c["operation"]] = kinds.get(c["operation"], 0) + 1
    print(f"h: {len(commits)} commits {kinds}; middle append is commit {at_middle}")
    print("| query | current h ms | h as of newest ms | ratio | current half ms "
          "| h as of middle ms | ratio |")
    print("|---|---|---|---|---|---|---|")
    for name, body in [("q1 group by + having + order", Q1), ("q2 filter + limit", Q2)]:
        now = median_ms(lambda: server.query("h", body), a.runs)
        old = median_ms(lambda: server.query("h", body, newest), a.runs)
        half = median_ms(lambda: server.query("half", body), a.runs)
        mid = median_ms(lambda: server.query("h", body, at_middle), a.runs)
        same = same_answer(name, server.query("half", body)[0],
                           server.query("h", body, at_middle)[0])
        print(f"| {name} | {now:.1f} | {old:.1f} | {old / now:.2f} | {half:.1f} | {mid:.1f} "
              f"| {mid / half:.2f} |{'' if same else ' ANSWERS DIFFER'}")
    t = time.perf_counter()
    res = server.http.post(server.url("h", "/rollback"), params={"to_commit": first["commit"]})
    took = (time.perf_counter() - t) * 1000
    assert res.status_code == 200, res.text
    rows = json.loads(server.query("h", {"select_columns": ["count(*) AS n"]})[0])
    print(f"rollback of h to commit {first['commit']} (undoing {newest - first['commit']} "
          f"commits): {took:.0f} ms; h now counts {rows}")


if __name__ == "__main__":
    main()
