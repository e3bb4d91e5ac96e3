"""The SQL clients with their defaults reading as many rows of a 1M-row dataset as a synchronous
answer holds (100,000, the cap of `/query` and the SQL fronts alike; issue 53's goal: within 1.5x
of `/query` Arrow): the ADBC PostgreSQL driver (`fetch_arrow_table`) and DuckDB's `postgres`
extension with no settings (binary COPY), against `/query` with `Accept:
application/vnd.apache.arrow.stream` read into a pyarrow table. Alternated, after a warm-up.
DuckDB's extension runs in `.venv-ext` (built for DuckDB 1.5.5), one process kept open.

With a PostgreSQL URL (`--pg-url`, or PG_URL as `scripts/pg.sh` exports it), the same two clients
also read the same 100,000 rows from PostgreSQL 15 itself (loaded from `/query`'s Arrow answer by
ADBC's ingest: bigint, double precision, text, date, boolean): what the clients cost against the
server they were written for, and the ratio of ours to it.

    scripts/pg.sh .venv/bin/python benches/sql/clients.py [--binary target/release/rapid-rs]
        [--rows 1000000] [--runs 7]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from urllib.parse import quote, urlparse

import adbc_driver_postgresql.dbapi as adbc
import pyarrow as pa

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "peers"))
import peers  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
ROWS = 100_000  # the synchronous answer's cap
# One line in: a statement; one line out: seconds and rows, read into a DuckDB table (the
# extension loaded once; .venv-ext has no pyarrow).
DUCKDB_LOOP = """
import sys, time
sys.path.insert(0, sys.argv[1])
from duckdb_ext import connect
con = connect("duckdb_extension_postgres_scanner")
con.execute(sys.argv[2])
for line in sys.stdin:
    started = time.perf_counter()
    con.execute("CREATE OR REPLACE TEMP TABLE copied AS " + line)
    rows = con.execute("SELECT count(*) FROM copied").fetchone()[0]
    print(time.perf_counter() - started, rows, flush=True)
"""


def main():
    args = argparse.ArgumentParser()
    args.add_argument("--binary", default="target/release/rapid-rs")
    args.add_argument("--rows", type=int, default=1_000_000)
    args.add_argument("--runs", type=int, default=7)
    args.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "rapid-peers"))
    args.add_argument("--pg-url", default=os.environ.get("PG_URL"))
    a = args.parse_args()
    os.makedirs(a.cache, exist_ok=True)
    csv = os.path.join(a.cache, f"peers-{a.rows}.csv")
    if not os.path.exists(csv):
        peers.generate_csv(csv, a.rows)
    os.environ["RAPID_PG_LISTEN"] = "127.0.0.1:0"
    with tempfile.TemporaryDirectory() as tmp:
        ours = peers.Ours(a.binary, tmp)
        readers = []
        try:
            ours.create("clients")
            ours.upload("clients", csv)
            host, port = ours.pg
            user, secret = peers.ADMIN_ID, peers.ADMIN_SECRET

            def arrow():
                path = "/api/datasets/default/peers/clients/query"
                ours.lean.request("POST", path, json.dumps({"limit": ROWS}).encode(), {
                    "Authorization": ours.http.headers["Authorization"],
                    "Accept": "application/vnd.apache.arrow.stream",
                    "Content-Type": "application/json"})
                res = ours.lean.getresponse()
                table = pa.ipc.open_stream(res.read()).read_all()
                assert table.num_rows == ROWS, table.num_rows
                return table

            url = (f"postgresql://{user}:{quote(secret, safe='')}@{host}:{port}"
                   "/default?sslmode=disable")
            attach = f"dbname=default host={host} port={port} user={user} password={secret}"
            adbc_ours, duck_ours = Adbc(url), Duck(attach)
            readers += [adbc_ours, duck_ours]
            cases = [("arrow", arrow, None),
                     ("adbc", adbc_ours.read, "peers.clients"),
                     ("duckdb", duck_ours.read, "r.peers.clients")]
            if a.pg_url:
                adbc_pg = Adbc(a.pg_url)
                readers.append(adbc_pg)
                with adbc_pg.conn.cursor() as cur:
                    cur.adbc_ingest("clients", arrow(), mode="replace")
                adbc_pg.conn.commit()
                pg = urlparse(a.pg_url)
                duck_pg = Duck(f"dbname={pg.path.lstrip('/')} host={pg.hostname} "
                               f"port={pg.port} user={pg.username}")
                readers.append(duck_pg)
                cases += [("adbc_pg", adbc_pg.read, "clients"),
                          ("duckdb_pg", duck_pg.read, "r.public.clients")]
            times = {name: [] for name, _, _ in cases}
            for run in range(a.runs + 1):
                for name, f, table in cases:
                    started = time.perf_counter()
                    inner = f(table) if table else f()
                    spent = inner if isinstance(inner, float) else time.perf_counter() - started
                    if run:  # the first round warms up
                        times[name].append(spent)
            report({k: sorted(v)[len(v) // 2] for k, v in times.items()}, a)
        finally:
            for reader in readers:
                reader.close()
            ours.stop()


class Adbc:
    """An ADBC PostgreSQL connection with its defaults."""

    def __init__(self, url):
        self.conn = adbc.connect(url)

    def read(self, table):
        with self.conn.cursor() as cur:
            cur.execute(f"SELECT * FROM {table} LIMIT {ROWS}")
            assert cur.fetch_arrow_table().num_rows == ROWS

    def close(self):
        self.conn.close()


class Duck:
    """DuckDB with its `postgres` extension attached (no settings), in `.venv-ext`."""

    def __init__(self, libpq):
        self.proc = subprocess.Popen(
            [os.path.join(ROOT, ".venv-ext", "bin", "python"), "-c", DUCKDB_LOOP,
             os.path.join(ROOT, "tests", "python"), f"ATTACH '{libpq}' AS r (TYPE postgres)"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def read(self, table):
        self.proc.stdin.write(f"SELECT * FROM {table} LIMIT {ROWS}\n")
        self.proc.stdin.flush()
        seconds, rows = self.proc.stdout.readline().split()
        assert int(rows) == ROWS, rows
        return float(seconds)

    def close(self):
        self.proc.kill()


def report(med, a):
    """The medians as a table row, and as JSON."""
    print(f"{ROWS:,} of {a.rows:,} rows x 10 columns, {a.runs} runs each, medians")
    print("| `/query` Arrow | ADBC | DuckDB `postgres`, no settings | ADBC / Arrow | "
          "DuckDB / Arrow |")
    print("|---|---|---|---|---|")
    print(f"| {peers.fmt(med['arrow'])} | {peers.fmt(med['adbc'])} | "
          f"{peers.fmt(med['duckdb'])} | {med['adbc'] / med['arrow']:.2f} | "
          f"{med['duckdb'] / med['arrow']:.2f} |")
    if "adbc_pg" in med:
        print("\nThe same clients reading the same rows from PostgreSQL 15:")
        print("| ADBC from PostgreSQL | DuckDB from PostgreSQL | ADBC ours / PostgreSQL | "
              "DuckDB ours / PostgreSQL |")
        print("|---|---|---|---|")
        print(f"| {peers.fmt(med['adbc_pg'])} | {peers.fmt(med['duckdb_pg'])} | "
              f"{med['adbc'] / med['adbc_pg']:.2f} | {med['duckdb'] / med['duckdb_pg']:.2f} |")
    print(json.dumps(med))


if __name__ == "__main__":
    main()
