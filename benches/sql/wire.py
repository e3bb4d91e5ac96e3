"""SQL over the PostgreSQL protocol against the same queries over HTTP (issue 35's goal: within
1.5x), and DuckDB on the very Parquet files the service stored, in one run.

A release server with RAPID_PG_LISTEN stores the peers bench's 1M-row CSV once; then, alternately
after a warm-up, each query runs RUNS times as:
- `/query` (the JSON query object over HTTP, kept-alive connection, as benches/peers does);
- `/api/sql` (the same query as SQL over HTTP);
- psycopg 3 over the wire, one open session (`fetchall`);
- DuckDB over the stored files.
q1 is the peers bench's group by + having + order, q2 its filter + 3 columns + limit 1000.

    .venv/bin/python benches/sql/wire.py [--binary target/release/rapid-rs] [--rows 1000000]
        [--runs 20]
"""

import argparse
import json
import os
import sys
import tempfile

import duckdb
import psycopg

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "peers"))
import peers  # noqa: E402

Q1_BODY = {"select_columns": ["category", "avg(amount) AS mean", "count(*) AS n"],
           "group_by_columns": ["category"], "aggregation_conditions": "avg(amount) > 1",
           "order_by_columns": [{"column": "category"}]}
Q1_SQL = ("SELECT category, avg(amount) AS mean, count(*) AS n FROM {table} GROUP BY category "
          "HAVING avg(amount) > 1 ORDER BY category")
Q2_BODY = {"select_columns": ["id", "amount", "qty"], "filter": "region = 'north'", "limit": 1000}
Q2_SQL = "SELECT id, amount, qty FROM {table} WHERE region = 'north' LIMIT 1000"


def http_sql(ours, sql):
    """`POST /api/sql` on the kept-alive connection `ours.query` uses."""
    body = json.dumps({"sql": sql}).encode()
    headers = {"Authorization": ours.http.headers["Authorization"],
               "Accept": "application/json", "Content-Type": "application/json"}
    ours.lean.request("POST", "/api/sql", body, headers)
    res = ours.lean.getresponse()
    answer = res.read()
    assert res.status == 200, answer
    return len(answer)


def main():
    args = argparse.ArgumentParser()
    args.add_argument("--binary", default="target/release/rapid-rs")
    args.add_argument("--rows", type=int, default=1_000_000)
    args.add_argument("--runs", type=int, default=20)
    args.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "rapid-peers"))
    a = args.parse_args()
    os.makedirs(a.cache, exist_ok=True)
    csv = os.path.join(a.cache, f"peers-{a.rows}.csv")
    if not os.path.exists(csv):
        peers.generate_csv(csv, a.rows)
    os.environ["RAPID_PG_LISTEN"] = "127.0.0.1:0"
    with tempfile.TemporaryDirectory() as tmp:
        ours = peers.Ours(a.binary, tmp)
        try:
            ours.create("wire")
            ours.upload("wire", csv)
            host, port = ours.pg
            conn = psycopg.connect(host=host, port=port, user=peers.ADMIN_ID,
                                   password=peers.ADMIN_SECRET, dbname="default",
                                   sslmode="disable", autocommit=True)
            files = f"read_parquet('{ours.parquet_glob('wire')}', hive_partitioning=true)"
            con = duckdb.connect()

            def wire(sql):
                with conn.cursor() as cur:
                    cur.execute(sql)
                    return len(cur.fetchall())

            print(f"{a.rows:,} rows, {a.runs} runs each, medians")
            print("| query | /query | /api/sql | wire (psycopg) | DuckDB | wire / /query | "
                  "wire / DuckDB |")
            print("|---|---|---|---|---|---|---|")
            for name, body, sql in [("q1 group by + having + order", Q1_BODY, Q1_SQL),
                                    ("q2 filter + 3 columns + limit 1000", Q2_BODY, Q2_SQL)]:
                ours_sql = sql.format(table="\"default\".peers.wire")
                times = peers.measure([
                    lambda: ours.query("wire", body),
                    lambda: http_sql(ours, ours_sql),
                    lambda: wire(ours_sql),
                    lambda: con.execute(sql.format(table=files)).fetchall(),
                ], a.runs)
                query, over_http, over_wire, duck = times
                print(f"| {name} | {peers.fmt(query)} | {peers.fmt(over_http)} | "
                      f"{peers.fmt(over_wire)} | {peers.fmt(duck)} | {over_wire / query:.2f} | "
                      f"{over_wire / duck:.2f} |")
            conn.close()
        finally:
            ours.stop()


if __name__ == "__main__":
    main()
