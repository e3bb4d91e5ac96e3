"""Our service against DuckDB and polars on the same work, same machine, same run.

Ours is a release `rapid-rs serve` over loopback HTTP; the peers run in this process and read
the very Parquet files our service stored (so the comparison is on equal data). Each work item is
run ours / DuckDB / polars alternately, RUNS times after a warm-up; the table shows medians and
the ratios ours / DuckDB (issue 17's goals are against DuckDB) and ours / best peer. See
benches/README.md ("peers") for the figures and the goals.

    benches/peers/run.sh [--rows 1000000 5000000] [--runs 5] [--binary target/release/rapid-rs]
                         [--only upload|csv-upload] [--buffered-upload] [--requests-queries]
"""

import argparse
import glob
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import duckdb
import numpy as np
import polars as pl
import requests

ADMIN_ID = "peers-admin"
ADMIN_SECRET = "peers-admin-secret-0123456789abcdef"
REGIONS = ["north", "south", "east", "west", "centre", "islands", "coast", "hills"]
CATEGORIES = ["food", "tools", "books", "toys"]

SCHEMA_COLUMNS = [
    {"name": "region", "data_type": "string", "allow_null": False, "partition_index": 0},
    {"name": "id", "data_type": "int", "allow_null": False},
    {"name": "day", "data_type": "date", "format": "%Y-%m-%d", "allow_null": True},
    {"name": "amount", "data_type": "double", "allow_null": True},
    {"name": "qty", "data_type": "int", "allow_null": True, "checks": {
        "range": {"check_type": "in_range", "parameters": {"min_value": 0, "max_value": 100}}}},
    {"name": "paid", "data_type": "boolean", "allow_null": True},
    {"name": "note", "data_type": "string", "allow_null": True},
    {"name": "category", "data_type": "string", "allow_null": True, "checks": {
        "known": {"check_type": "isin", "parameters": {"allowed_values": CATEGORIES}}}},
    {"name": "score", "data_type": "double", "allow_null": True},
    {"name": "created", "data_type": "date", "format": "%d/%m/%Y", "allow_null": True},
]


def generate_csv(path, rows):
    """A 10-column CSV: two date formats, quoted text with commas, booleans with nulls, one
    partition column with 8 values, an in_range and an isin check. Deterministic."""
    rng = np.random.default_rng(7)
    ids = np.arange(rows)
    day = (np.datetime64("2010-01-01") + rng.integers(0, 5000, rows)).astype(str)
    created = np.datetime64("2010-01-01") + rng.integers(0, 5000, rows)
    frame = pl.DataFrame({
        "region": np.array(REGIONS)[rng.integers(0, 8, rows)],
        "id": ids,
        "day": day,
        "amount": np.round(rng.integers(0, 1_000_000, rows) / 100, 2),
        "qty": rng.integers(0, 101, rows),
        "paid": np.array(["", "true", "FALSE"])[rng.integers(0, 3, rows)],
        "note": "item " + pl.Series(ids).cast(pl.Utf8) + ", batch "
                + pl.Series(ids // 1000).cast(pl.Utf8),
        "category": np.array(CATEGORIES)[rng.integers(0, 4, rows)],
        "score": np.round(rng.integers(0, 100_000, rows) / 7.0, 3),
        "created": pl.Series(created).dt.strftime("%d/%m/%Y"),
    })
    frame.write_csv(path)
    return os.path.getsize(path)


def multipart_stream(path, boundary):
    """A multipart/form-data body with one file part, read as it is sent."""
    yield (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
           f'filename="{os.path.basename(path)}"\r\n\r\n').encode()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            yield chunk
    yield f"\r\n--{boundary}--\r\n".encode()


class Ours:
    """A release server on a fresh data folder, on a free loopback port."""

    def __init__(self, binary, folder, buffered_upload=False, requests_queries=False):
        self.folder = folder
        self.buffered_upload = buffered_upload
        self.requests_queries = requests_queries
        # The peers glob the data folder: keep no files of earlier commits (history retention).
        env = dict(os.environ, RAPID_ADMIN_CLIENT_ID=ADMIN_ID,
                   RAPID_ADMIN_CLIENT_SECRET=ADMIN_SECRET, RAPID_HISTORY_KEEP_COMMITS="1",
                   RAPID_HISTORY_KEEP_SECONDS="0")
        self.proc = subprocess.Popen(
            [binary, "serve", "--bind", "127.0.0.1:0", "--log-level", "warn",
             "--data-dir", folder], stdout=subprocess.PIPE, env=env, text=True)
        self.pg = None  # (host, port) of the PostgreSQL listener when RAPID_PG_LISTEN is set
        for line in self.proc.stdout:
            if line.startswith("postgresql listening on "):
                host, port = line.split(" ", 3)[3].strip().rsplit(":", 1)
                self.pg = (host, int(port))
            if line.startswith("listening on "):
                self.base = line.split(" ", 2)[2].strip() + "/api"
                break
        else:
            raise SystemExit("rapid-rs exited before listening")
        self.http = requests.Session()
        res = self.http.post(f"{self.base}/oauth2/token", auth=(ADMIN_ID, ADMIN_SECRET),
                             data={"grant_type": "client_credentials"})
        res.raise_for_status()
        self.http.headers["Authorization"] = "Bearer " + res.json()["access_token"]
        address = self.base.split("//", 1)[1].split("/", 1)[0]
        self.lean = http.client.HTTPConnection(address)

    def create(self, dataset, unique=False):
        """A dataset of the bench's schema; `unique` declares its `id` column unique."""
        columns = [dict(c, unique=True) if unique and c["name"] == "id" else c
                   for c in SCHEMA_COLUMNS]
        schema = {"metadata": {"domain": "peers", "dataset": dataset, "sensitivity": "PUBLIC",
                               "owners": [{"name": "Bench", "email": "bench@example.com"}]},
                  "columns": columns}
        res = self.http.post(f"{self.base}/schema", json=schema)
        assert res.status_code == 201, res.text

    def wait(self, job_id):
        while True:
            job = self.http.get(f"{self.base}/jobs/{job_id}").json()
            if job["status"] != "IN PROGRESS":
                assert job["status"] == "SUCCESS", job
                return job
            time.sleep(0.005)

    def upload(self, dataset, path):
        """The file streamed as a multipart body in 1 MB chunks (chunked transfer), as curl -F
        or any streaming client sends it. `requests`' own `files=` first builds the whole body
        in memory (about 100 ms for 90 MB before the first byte leaves): `--buffered-upload`
        measures that way."""
        url = f"{self.base}/datasets/default/peers/{dataset}"
        if self.buffered_upload:
            with open(path, "rb") as f:
                res = self.http.post(url, files={"file": (os.path.basename(path), f)})
        else:
            boundary = "rapid-peers-7f3a9c"
            res = self.http.post(url, data=multipart_stream(path, boundary), headers={
                "Content-Type": f"multipart/form-data; boundary={boundary}"})
        assert res.status_code == 202, res.text
        self.wait(res.json()["details"]["job_id"])

    def query(self, dataset, body, accept="application/json"):
        """One request on a kept-alive `http.client` connection. `requests` spends about 2 ms
        of Python per call on top (measured against a raw socket: 13.1 against 11.0 ms for the
        1M-row group-by), client time that a millisecond-scale query would carry as ours:
        `--requests-queries` measures that way."""
        path = f"/api/datasets/default/peers/{dataset}/query"
        if self.requests_queries:
            res = self.http.post(self.base.rsplit("/api", 1)[0] + path, json=body,
                                 headers={"Accept": accept})
            assert res.status_code == 200, res.text
            return len(res.content)
        request = ("POST", path, json.dumps(body).encode(), {
            "Authorization": self.http.headers["Authorization"], "Accept": accept,
            "Content-Type": "application/json"})
        try:
            self.lean.request(*request)
            res = self.lean.getresponse()
        except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
            # The server closes a connection left idle past its keep-alive time: open anew.
            self.lean.close()
            self.lean.request(*request)
            res = self.lean.getresponse()
        answer = res.read()
        assert res.status == 200, answer
        return len(answer)

    def export_csv(self, dataset):
        res = self.http.post(f"{self.base}/datasets/default/peers/{dataset}/query/large", json={})
        assert res.status_code == 202, res.text
        job = self.wait(res.json()["details"]["job_id"])
        with self.http.get(job["result_url"], stream=True) as download:
            return sum(len(chunk) for chunk in download.iter_content(1 << 18))

    def parquet_glob(self, dataset):
        return os.path.join(self.folder, "data", "default", "peers", dataset, "*", "**",
                            "*.parquet")

    def stop(self):
        self.lean.close()
        self.proc.terminate()
        self.proc.wait()


CSV_TYPES = """{'region':'VARCHAR','id':'BIGINT','day':'DATE','amount':'DOUBLE','qty':'BIGINT',
    'paid':'BOOLEAN','note':'VARCHAR','category':'VARCHAR','score':'DOUBLE','created':'VARCHAR'}"""


def duckdb_upload(source, out, unique=False):
    """Read with the schema's types and date formats, check (with `unique`, also that no id
    repeats), write partitioned Parquet."""
    con = duckdb.connect()
    if source.endswith(".csv"):
        con.execute(f"""CREATE TEMP TABLE t AS SELECT * REPLACE
            (strptime(created, '%d/%m/%Y')::DATE AS created)
            FROM read_csv('{source}', header=true, columns={CSV_TYPES})""")
    else:
        con.execute(f"CREATE TEMP TABLE t AS SELECT * FROM read_parquet('{source}')")
    bad = con.execute("""SELECT count(*) FROM t WHERE region IS NULL OR id IS NULL
        OR qty NOT BETWEEN 0 AND 100 OR category NOT IN ('food','tools','books','toys')""").fetchone()
    assert bad[0] == 0, bad
    if unique:
        repeats = con.execute("SELECT count(*) - count(DISTINCT id) FROM t").fetchone()
        assert repeats[0] == 0, repeats
    con.execute(f"COPY t TO '{out}' (FORMAT parquet, PARTITION_BY (region))")
    con.close()


def make_work(ours, dataset, tmp):
    """Each work item as three callables (ours, DuckDB, polars or None)."""
    files = f"read_parquet('{ours.parquet_glob(dataset)}', hive_partitioning=true)"
    scan = lambda: pl.scan_parquet(ours.parquet_glob(dataset), hive_partitioning=True)
    con = duckdb.connect()
    out_json, out_csv = os.path.join(tmp, "peer.json"), os.path.join(tmp, "peer.csv")
    group = {"select_columns": ["category", "avg(amount) AS mean", "count(*) AS n"],
             "group_by_columns": ["category"], "aggregation_conditions": "avg(amount) > 1",
             "order_by_columns": [{"column": "category"}]}
    narrow = {"select_columns": ["id", "amount", "qty"], "filter": "region = 'north'",
              "limit": 1000}
    return {
        "100,000 rows as JSON": (
            lambda: ours.query(dataset, {"limit": 100000}),
            lambda: con.execute(f"COPY (SELECT * FROM {files} LIMIT 100000) TO '{out_json}' "
                                "(FORMAT json)"),
            lambda: scan().head(100000).collect().write_json(out_json)),
        "every row as CSV": (
            lambda: ours.export_csv(dataset),
            lambda: con.execute(f"COPY (SELECT * FROM {files}) TO '{out_csv}' (HEADER)"),
            lambda: scan().sink_csv(out_csv)),
        "group by + having + order": (
            lambda: ours.query(dataset, group),
            lambda: con.execute(f"SELECT category, avg(amount) AS mean, count(*) AS n FROM {files}"
                                " GROUP BY category HAVING avg(amount) > 1 ORDER BY category"
                                ).fetchall(),
            lambda: scan().group_by("category").agg(pl.col("amount").mean().alias("mean"),
                                                    pl.len().alias("n"))
            .filter(pl.col("mean") > 1).sort("category").collect()),
        "filter + 3 columns + limit 1000": (
            lambda: ours.query(dataset, narrow),
            lambda: con.execute(f"SELECT id, amount, qty FROM {files} WHERE region = 'north' "
                                "LIMIT 1000").fetchall(),
            lambda: scan().filter(pl.col("region") == "north").select("id", "amount", "qty")
            .head(1000).collect()),
    }


def timed(f):
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


def measure(named, runs):
    """Medians of `runs` alternating rounds after one warm-up round; None for a missing peer."""
    for f in named:
        if f:
            f()
    times = [[] for _ in named]
    for _ in range(runs):
        for i, f in enumerate(named):
            if f:
                times[i].append(timed(f))
    return [statistics.median(t) if t else None for t in times]


def parquet_copy(csv, path):
    """The CSV as a typed Parquet file (what a client with Parquet would upload)."""
    frame = pl.read_csv(csv, schema_overrides={"paid": pl.Utf8})
    frame = frame.with_columns(
        pl.col("day").str.to_date("%Y-%m-%d"),
        pl.col("created").str.to_date("%d/%m/%Y"),
        pl.col("paid").str.to_lowercase().replace({"": None}).eq("true"))
    frame.write_parquet(path)


def upload_round(ours, csv, tmp, rows, runs, unique=False):
    """Upload to a fresh dataset each time against DuckDB's read-cast-check-write; with `unique`
    the dataset's id is unique (and DuckDB checks that no id repeats)."""
    mine, peer = [], []
    for r in range(runs + 1):
        name = f"up{rows}{os.path.splitext(csv)[1][1:]}{'u' if unique else ''}{r}"
        ours.create(name, unique)
        out = os.path.join(tmp, f"duck{r}")
        t_ours = timed(lambda: ours.upload(name, csv))
        t_peer = timed(lambda: duckdb_upload(csv, out, unique))
        shutil.rmtree(out, ignore_errors=True)
        if r:  # the first round warms the page cache
            mine.append(t_ours)
            peer.append(t_peer)
    return statistics.median(mine), statistics.median(peer)


def fmt(seconds):
    if seconds is None:
        return ""
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def main():
    args = argparse.ArgumentParser()
    args.add_argument("--binary", default="target/release/rapid-rs")
    args.add_argument("--rows", type=int, nargs="+", default=[1_000_000])
    args.add_argument("--runs", type=int, default=5)
    args.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "rapid-peers"))
    args.add_argument("--only", choices=["upload", "csv-upload"],
                      help="run only the upload rows (all, or the CSV ones)")
    args.add_argument("--buffered-upload", action="store_true",
                      help="upload with requests' files= (whole body built in memory first)")
    args.add_argument("--requests-queries", action="store_true",
                      help="send sync queries with requests (about 2 ms of client time each)")
    a = args.parse_args()
    os.makedirs(a.cache, exist_ok=True)
    print(f"duckdb {duckdb.__version__}, polars {pl.__version__}, {a.runs} runs, medians")
    print("| rows | work | ours | DuckDB | polars | ours / DuckDB | ours / best peer |")
    print("|---|---|---|---|---|---|---|")
    for rows in a.rows:
        csv = os.path.join(a.cache, f"peers-{rows}.csv")
        if not os.path.exists(csv):
            generate_csv(csv, rows)
        mb = os.path.getsize(csv) / 1e6
        parquet = csv[:-4] + ".parquet"
        if not os.path.exists(parquet):
            parquet_copy(csv, parquet)
        with tempfile.TemporaryDirectory() as tmp:
            ours = Ours(a.binary, os.path.join(tmp, "data"), a.buffered_upload,
                        a.requests_queries)
            try:
                up_ours, up_duck = upload_round(ours, csv, tmp, rows, a.runs)
                print(f"| {rows:,} | upload CSV ({mb:.0f} MB) | {fmt(up_ours)} | {fmt(up_duck)} |"
                      f" | {up_ours / up_duck:.2f} | {up_ours / up_duck:.2f} |", flush=True)
                keyed, keyed_duck = upload_round(ours, csv, tmp, rows, a.runs, unique=True)
                print(f"| {rows:,} | upload CSV, `id` unique (x{keyed / up_ours:.2f} of without) |"
                      f" {fmt(keyed)} | {fmt(keyed_duck)} | | {keyed / keyed_duck:.2f} |"
                      f" {keyed / keyed_duck:.2f} |", flush=True)
                if a.only == "csv-upload":
                    continue
                up_ours, up_duck = upload_round(ours, parquet, tmp, rows, a.runs)
                print(f"| {rows:,} | upload Parquet | {fmt(up_ours)} | {fmt(up_duck)} |"
                      f" | {up_ours / up_duck:.2f} | {up_ours / up_duck:.2f} |", flush=True)
                if a.only:
                    continue
                dataset = f"up{rows}csv0"
                for name, fs in make_work(ours, dataset, tmp).items():
                    t = measure(fs, a.runs)
                    best = min(x for x in t[1:] if x is not None)
                    print(f"| {rows:,} | {name} | {fmt(t[0])} | {fmt(t[1])} | {fmt(t[2])} |"
                          f" {t[0] / t[1]:.2f} | {t[0] / best:.2f} |", flush=True)
            finally:
                ours.stop()


if __name__ == "__main__":
    sys.exit(main())
