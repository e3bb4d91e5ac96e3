"""DuckDB on the files our service stored: the growth bench's q1 and q2 (benches/growth/client.rs)
as DuckDB SQL over a Hive-partitioned glob, each run once to warm up and then RUNS times.
Prints one JSON object: DuckDB's version, the files the glob matches, the rows they hold, and for
q1 and q2 the median time in ms and the answer's row count.

    .venv/bin/python benches/growth/duckdb_q.py 'DATA/data/default/bench/appended/1/**/*.parquet' --runs 5
"""

import argparse
import json
import statistics
import time

import duckdb


def queries(files):
    return {
        "q1": f"SELECT id, price, qty FROM {files} WHERE category = 'c7' LIMIT 1000",
        "q2": f"SELECT category, avg(price) AS mean FROM {files} GROUP BY category "
              "HAVING avg(price) > 1 ORDER BY category",
    }


def timed(con, sql):
    t = time.perf_counter()
    rows = con.execute(sql).fetchall()
    return (time.perf_counter() - t) * 1000.0, len(rows)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("glob")
    parser.add_argument("--runs", type=int, default=5)
    a = parser.parse_args()
    quoted = a.glob.replace("'", "''")
    con = duckdb.connect()
    # The data files: the Delta log's checkpoints under `_delta_log/` are Parquet too.
    paths = [f for (f,) in con.execute(f"SELECT file FROM glob('{quoted}')").fetchall()
             if "/_delta_log/" not in f]
    listed = ", ".join("'" + f.replace("'", "''") + "'" for f in paths)
    files = f"read_parquet([{listed}], hive_partitioning=true)"
    out = {
        "duckdb": duckdb.__version__,
        "files": len(paths),
        "rows": con.execute(f"SELECT count(*) FROM {files}").fetchone()[0],
    }
    for name, sql in queries(files).items():
        _, rows = timed(con, sql)
        times = [timed(con, sql)[0] for _ in range(max(a.runs, 1))]
        out[name] = {"ms": statistics.median(times), "rows": rows}
    con.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
