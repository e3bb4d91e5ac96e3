"""Two builds of the server compared on the query items of peers.py, without a peer engine in
between: both servers up at once with the same rows, each item run RUNS times alternating
between them, so load and cache drift hit both alike. For a change whose effect is smaller than
the spread of peers.py's ratios (a group by's rounds spread by 0.1 of DuckDB's time).

    .venv/bin/python benches/peers/ab.py BEFORE_BINARY AFTER_BINARY [--runs 60] [--rows 1000000]
"""

import argparse
import os
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
    args.add_argument("--rows", type=int, default=1_000_000)
    args.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "rapid-peers"))
    a = args.parse_args()
    os.makedirs(a.cache, exist_ok=True)
    csv = os.path.join(a.cache, f"peers-{a.rows}.csv")
    if not os.path.exists(csv):
        peers.generate_csv(csv, a.rows)
    servers = []
    try:
        for binary in a.binaries:
            ours = peers.Ours(binary, tempfile.mkdtemp(prefix="rapid-ab-"))
            servers.append(ours)
            ours.create("data")
            ours.upload("data", csv)
        works = [peers.make_work(o, "data", tempfile.mkdtemp()) for o in servers]
        print("| item | build | median | p25 | mean |\n|---|---|---|---|---|")
        for item in ITEMS:
            runs = [w[item][0] for w in works]
            for run in runs:  # warm-up: the plan cache and the page cache
                run()
            times = [[], []]
            for _ in range(a.runs):
                for i, run in enumerate(runs):
                    times[i].append(peers.timed(run))
            for binary, t in zip(a.binaries, times):
                print(f"| {item} | {binary} | {statistics.median(t) * 1e3:.2f} ms "
                      f"| {statistics.quantiles(t, n=4)[0] * 1e3:.2f} ms "
                      f"| {statistics.mean(t) * 1e3:.2f} ms |", flush=True)
    finally:
        for ours in servers:
            ours.stop()


if __name__ == "__main__":
    main()
