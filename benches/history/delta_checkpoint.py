"""Delta readers on a table of many commits (issue 53): time to count a dataset version's rows
through its Delta log with DuckDB's `delta_scan` and delta-rs, for a table of `--commits`
small appends against a one-commit table of the same rows, with the checkpoints the service
writes and with them removed (a copy of the table, as a log without checkpoints is read).

    .venv/bin/python benches/history/delta_checkpoint.py [--binary target/release/rapid-rs]
        [--commits 1000] [--rows 10] [--runs 11]

DuckDB runs in .venv-ext's Python (its delta extension); delta-rs in this one. Each figure is
the median of `--runs` fresh opens (a new DuckDB connection, a new DeltaTable) after a warm-up.
The server only builds the tables: its build profile does not change what the readers do.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import asof  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")

DUCKDB = """
import json, statistics, sys, time
import duckdb_ext
path, runs = sys.argv[1], int(sys.argv[2])
def once():
    con = duckdb_ext.connect("duckdb_extension_delta")
    t = time.perf_counter()
    n = con.execute("SELECT count(*) FROM delta_scan('%s')" % path.replace("'", "''")).fetchone()[0]
    return time.perf_counter() - t, n
once()
runs = [once() for _ in range(runs)]
print(json.dumps({"ms": statistics.median(r[0] for r in runs) * 1000, "rows": runs[0][1]}))
"""


def deltalake_ms(path, runs):
    from deltalake import DeltaTable

    def once():
        t = time.perf_counter()
        n = DeltaTable(path).to_pyarrow_dataset().count_rows()
        return time.perf_counter() - t, n

    once()
    done = [once() for _ in range(runs)]
    return {"ms": statistics.median(r[0] for r in done) * 1000, "rows": done[0][1]}


def duckdb_ms(path, runs):
    ext = os.path.join(ROOT, ".venv-ext", "bin", "python")
    out = subprocess.run([ext, "-c", DUCKDB, path, str(runs)], check=True,
                         capture_output=True, text=True, cwd=os.path.join(ROOT, "tests", "python"))
    return json.loads(out.stdout)


def without_checkpoints(table, folder):
    copy = os.path.join(folder, "no-checkpoints")
    shutil.copytree(table, copy)
    log = os.path.join(copy, "_delta_log")
    for name in os.listdir(log):
        if ".checkpoint." in name or name == "_last_checkpoint":
            os.remove(os.path.join(log, name))
    return copy


def main():
    args = argparse.ArgumentParser()
    args.add_argument("--binary", default="target/release/rapid-rs")
    args.add_argument("--commits", type=int, default=1000)
    args.add_argument("--rows", type=int, default=10)
    args.add_argument("--runs", type=int, default=11)
    a = args.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        csv = os.path.join(folder, "all.csv")
        asof.peers.generate_csv(csv, a.commits * a.rows)
        parts = asof.cut(csv, a.commits, a.rows, folder)
        data = os.path.join(folder, "data")
        server = asof.Server(a.binary, data, keep=a.commits + 100)
        try:
            server.create("many")
            server.create("one")
            start = time.perf_counter()
            for p in parts:
                server.append("many", p)
            print(f"{a.commits} appends in {time.perf_counter() - start:.1f} s", flush=True)
            server.append("one", csv)
            time.sleep(2)
        finally:
            server.stop()
        tables = {name: os.path.join(data, "data", "default", "peers", name, "1")
                  for name in ("many", "one")}
        tables["many, no checkpoints"] = without_checkpoints(tables["many"], folder)
        log = os.listdir(os.path.join(tables["many"], "_delta_log"))
        print(f"many: {sum(n.endswith('.json') for n in log)} JSON versions, "
              f"{sum('.checkpoint.' in n for n in log)} checkpoints")
        print("| table | DuckDB delta_scan count | delta-rs count |")
        print("|---|---|---|")
        for name, path in tables.items():
            d, r = duckdb_ms(path, a.runs), deltalake_ms(path, a.runs)
            assert d["rows"] == r["rows"] == a.commits * a.rows, (d, r)
            print(f"| {name} | {d['ms']:.1f} ms | {r['ms']:.1f} ms |", flush=True)


if __name__ == "__main__":
    main()
