"""Two builds of the server compared on the items of peers.py, without a peer engine in
between: both servers up at once with the same rows, each item run RUNS times alternating
between them, so load and cache drift hit both alike. For a change whose effect is smaller than
the spread of peers.py's ratios (a group by's rounds spread by 0.1 of DuckDB's time).

The query items run RUNS times each; the three uploads (CSV, CSV with a unique `id`, Parquet),
each to a fresh dataset, UPLOADS times each (0: none), after one upload of each that is not
counted (it warms the page cache).

    .venv/bin/python benches/peers/ab.py BEFORE_BINARY AFTER_BINARY [--runs 60 (0: none)] [--uploads 10]
        [--rows 1000000]
"""

import argparse
import os
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers  # noqa: E402

ITEMS = ("group by + having + order", "filter + 3 columns + limit 1000", "100,000 rows as JSON")


def main():
    args = argparse.ArgumentParser()
    args.add_argument("binaries", nargs=2)
    args.add_argument("--runs", type=int, default=60)
    args.add_argument("--uploads", type=int, default=10)
    args.add_argument("--rows", type=int, default=1_000_000)
    args.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "rapid-peers"))
    a = args.parse_args()
    os.makedirs(a.cache, exist_ok=True)
    csv = os.path.join(a.cache, f"peers-{a.rows}.csv")
    if not os.path.exists(csv):
        peers.generate_csv(csv, a.rows)
    servers = []
    # Each server's data (a copy of the rows per upload: gigabytes after an --uploads run) and
    # the answers' scratch folders, removed at the end.
    folders = []
    try:
        for binary in a.binaries:
            folders.append(tempfile.mkdtemp(prefix="rapid-ab-"))
            ours = peers.Ours(binary, folders[-1])
            servers.append(ours)
            ours.create("data")
            ours.upload("data", csv)
        works = []
        for ours in servers:
            folders.append(tempfile.mkdtemp(prefix="rapid-ab-work-"))
            works.append(peers.make_work(ours, "data", folders[-1]))
        print("| item | build | median | p25 | mean |\n|---|---|---|---|---|")
        for item in ITEMS if a.runs else ():  # --runs 0: the uploads alone
            runs = [w[item][0] for w in works]
            for run in runs:  # warm-up: the plan cache and the page cache
                run()
            times = [[], []]
            for _ in range(a.runs):
                for i, run in enumerate(runs):
                    times[i].append(peers.timed(run))
            report(item, a.binaries, times)
        if a.uploads:
            parquet = os.path.join(a.cache, f"peers-{a.rows}.parquet")
            if not os.path.exists(parquet):
                peers.parquet_copy(csv, parquet)
            for item, path, unique in (("upload CSV", csv, False),
                                       ("upload CSV, `id` unique", csv, True),
                                       ("upload Parquet", parquet, False)):
                times = [[], []]
                for r in range(a.uploads + 1):
                    # Which build goes first alternates: an upload's fsyncs and background
                    # work overlap the start of the next.
                    for i in (0, 1) if r % 2 else (1, 0):
                        ours = servers[i]
                        name = f"ab{'u' if unique else ''}{os.path.splitext(path)[1][1:]}{r}"
                        ours.create(name, unique)
                        t = peers.timed(lambda: ours.upload(name, path))
                        if r:
                            times[i].append(t)
                report(item, a.binaries, times)
    finally:
        for ours in servers:
            ours.stop()
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)


def report(item, binaries, times):
    for binary, t in zip(binaries, times):
        # A quartile needs two runs at least.
        p25 = f"{statistics.quantiles(t, n=4)[0] * 1e3:.2f} ms" if len(t) > 1 else "-"
        print(f"| {item} | {binary} | {statistics.median(t) * 1e3:.2f} ms | {p25} "
              f"| {statistics.mean(t) * 1e3:.2f} ms |", flush=True)


if __name__ == "__main__":
    main()
