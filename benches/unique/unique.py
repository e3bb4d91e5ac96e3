"""The cost of a `unique` column as uploads grow (issue 52), against the same work without it,
on one release server per case (benches/peers' `Ours`), DuckDB's checked write in the same run.

1. concurrent: 200 files of 5,000 rows by 8 uploaders into one dataset (`rapid-rs bench
   --pregenerate`), `id` unique or not.
2. big append: 1M rows appended to a dataset that holds 10M keys, against the same append to an
   empty dataset; ids in order (as counters give them) and shuffled (as hashes or UUIDs spread).
3. memory (only when asked): the server's peak resident memory during a 1M-row keyed append to
   an empty dataset and to one holding --keys keys (default 50M).

    benches/unique/run.sh [--only concurrent|append|memory] [--keys N] [--binary PATH] [--runs 3]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import polars as pl

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "peers"))
from peers import ADMIN_ID, ADMIN_SECRET, REGIONS, Ours, duckdb_upload, timed  # noqa: E402


def concurrent(binary, unique):
    """Seconds for 200 files x 5,000 rows by 8 uploaders, as `rapid-rs bench` reports them."""
    with tempfile.TemporaryDirectory() as tmp:
        ours = Ours(binary, os.path.join(tmp, "data"))
        try:
            args = [binary, "bench", "--url", ours.base, "--client-id", ADMIN_ID,
                    "--client-secret", ADMIN_SECRET, "--rows", "5000", "--files", "200",
                    "--uploaders", "8", "--partitions", "20", "--pregenerate", "--json"]
            out = subprocess.run(args + (["--unique"] if unique else []), check=True,
                                 capture_output=True, text=True).stdout
            report = json.loads(out)
            assert report["rows_stored"] == 1_000_000, report
            return report["seconds"]
        finally:
            ours.stop()


def keyed_csv(path, rows, ids):
    """`rows` rows of the peers' schema whose ids are `ids`."""
    rng = np.random.default_rng(len(ids))
    day = (np.datetime64("2010-01-01") + rng.integers(0, 5000, rows)).astype(str)
    created = np.datetime64("2010-01-01") + rng.integers(0, 5000, rows)
    pl.DataFrame({
        "region": np.array(REGIONS)[rng.integers(0, 8, rows)],
        "id": ids,
        "day": day,
        "amount": np.round(rng.integers(0, 1_000_000, rows) / 100, 2),
        "qty": rng.integers(0, 101, rows),
        "paid": np.array(["", "true", "FALSE"])[rng.integers(0, 3, rows)],
        "note": "item " + pl.Series(ids).cast(pl.Utf8),
        "category": np.array(["food", "tools", "books", "toys"])[rng.integers(0, 4, rows)],
        "score": np.round(rng.integers(0, 100_000, rows) / 7.0, 3),
        "created": pl.Series(created).dt.strftime("%d/%m/%Y"),
    }).write_csv(path)


def append_files(cache, order):
    """The 10M-row prefill and the 1M-row append (distinct ids), made once per order."""
    big, small = (os.path.join(cache, f"unique-{order}-{n}.csv") for n in ("10m", "1m"))
    if not (os.path.exists(big) and os.path.exists(small)):
        ids = np.arange(11_000_000, dtype=np.int64)
        if order == "shuffled":
            ids = np.random.default_rng(52).permutation(ids) * 7_919 + 13
        keyed_csv(big, 10_000_000, ids[:10_000_000])
        keyed_csv(small, 1_000_000, ids[10_000_000:])
    return big, small


def big_append(binary, cache, order, runs):
    """Medians of the 1M-row append to an empty dataset and to one holding 10M keys."""
    big, small = append_files(cache, order)
    with tempfile.TemporaryDirectory() as tmp:
        ours = Ours(binary, os.path.join(tmp, "data"))
        try:
            ours.create("grown", unique=True)
            started = time.perf_counter()
            ours.upload("grown", big)
            prefill = time.perf_counter() - started
            empty, grown, duck = [], [], []
            for r in range(runs):
                ours.create(f"empty{r}", unique=True)
                empty.append(timed(lambda: ours.upload(f"empty{r}", small)))
                duck.append(timed(lambda: duckdb_upload(small, os.path.join(tmp, f"d{r}"), True)))
            listing = f"{ours.base}/datasets/default/peers/grown/1/files"
            for r in range(runs):
                before = set(ours.http.get(listing).json())
                grown.append(timed(lambda: ours.upload("grown", small)))
                # Deleting the appended file frees its ids again for the next run.
                for f in set(ours.http.get(listing).json()) - before:
                    res = ours.http.delete(f"{ours.base}/datasets/default/peers/grown/1/{f}")
                    assert res.status_code in (200, 202), res.text
            return prefill, statistics.median(empty), statistics.median(grown), \
                statistics.median(duck)
        finally:
            ours.stop()


def vm(pid, field):
    """A `/proc/PID/status` figure in MB (`VmHWM`: the peak resident set; `VmRSS`: now)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise SystemExit(f"no {field} for {pid}")


def memory(binary, cache, keys):
    """The server's peak resident memory during a 1M-row keyed append to an empty dataset and to
    one holding `keys` keys (prefilled 10M rows at a time, each file made, uploaded and removed):
    the check reads one block at a time, so the peak should not grow with the stored keys."""
    small = os.path.join(cache, "unique-memory-1m.csv")
    if not os.path.exists(small):
        keyed_csv(small, 1_000_000, np.arange(1_000_000, dtype=np.int64) * 3 + 2)
    with tempfile.TemporaryDirectory() as tmp:
        ours = Ours(binary, os.path.join(tmp, "data"))
        pid = ours.proc.pid

        def peak_during(work):
            """(resident before, peak during) `work`."""
            before = vm(pid, "VmRSS")
            with open(f"/proc/{pid}/clear_refs", "w") as refs:
                refs.write("5")  # resets VmHWM to the current resident set
            work()
            return before, vm(pid, "VmHWM")

        try:
            ours.create("empty", unique=True)
            empty = peak_during(lambda: ours.upload("empty", small))
            ours.create("grown", unique=True)
            chunk = 10_000_000
            for start in range(0, keys, chunk):
                rows = min(chunk, keys - start)
                path = os.path.join(tmp, "prefill.csv")
                keyed_csv(path, rows, np.arange(start, start + rows, dtype=np.int64) * 3 + 1)
                ours.upload("grown", path)
                os.remove(path)
            grown = peak_during(lambda: ours.upload("grown", small))
            return empty, grown
        finally:
            ours.stop()


def main():
    args = argparse.ArgumentParser()
    args.add_argument("--binary", default="target/release/rapid-rs")
    args.add_argument("--only", choices=["concurrent", "append", "memory"])
    args.add_argument("--keys", type=int, default=50_000_000,
                      help="keys stored before the append whose memory --only memory measures")
    args.add_argument("--runs", type=int, default=3)
    args.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "rapid-peers"))
    a = args.parse_args()
    os.makedirs(a.cache, exist_ok=True)
    if a.only in (None, "concurrent"):
        off = statistics.median(concurrent(a.binary, False) for _ in range(a.runs))
        on = statistics.median(concurrent(a.binary, True) for _ in range(a.runs))
        print("| 200 files x 5,000 rows, 8 uploaders | unique off | unique on | on / off |")
        print("|---|---|---|---|")
        print(f"| seconds (median of {a.runs}) | {off:.2f} s | {on:.2f} s | {on / off:.2f} |",
              flush=True)
    if a.only == "memory":
        empty, grown = memory(a.binary, a.cache, a.keys)
        print(f"| 1M-row keyed append, resident MB | to empty | to {a.keys:,} keys |")
        print("|---|---|---|")
        print(f"| before | {empty[0]:.0f} | {grown[0]:.0f} |")
        print(f"| peak during | {empty[1]:.0f} | {grown[1]:.0f} |")
        print(f"| growth | {empty[1] - empty[0]:.0f} | {grown[1] - grown[0]:.0f} |", flush=True)
        return
    if a.only in (None, "append"):
        print("| ids | 10M prefill | 1M append to empty | to 10M keys | grown / empty |"
              " DuckDB 1M checked write |")
        print("|---|---|---|---|---|---|")
        for order in ("ordered", "shuffled"):
            prefill, empty, grown, duck = big_append(a.binary, a.cache, order, a.runs)
            print(f"| {order} | {prefill:.2f} s | {empty:.2f} s | {grown:.2f} s |"
                  f" {grown / empty:.2f} | {duck:.2f} s |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
