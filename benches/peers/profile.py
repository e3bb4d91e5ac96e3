"""Where our time goes: one work item of the peer benchmark run in a loop against a release
server while `perf record` samples that server (software clock: this machine's VM has no
hardware counters), then the top functions by self time. benches/README.md ("Profiles") keeps
the tables this prints, before and after each change.

    benches/peers/profile.sh WORK [--rows 1000000] [--seconds 20] [--binary PATH]
    WORK: json | csv | group | filter | upload
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import peers  # noqa: E402


def work_item(ours, dataset, csv, name):
    tmp = tempfile.mkdtemp(prefix="rapid-profile-")
    named = {
        "json": "100,000 rows as JSON",
        "csv": "every row as CSV",
        "group": "group by + having + order",
        "filter": "filter + 3 columns + limit 1000",
    }
    if name == "upload":
        counter = iter(range(1_000_000))

        def upload():
            target = f"prof{next(counter)}"
            ours.create(target)
            ours.upload(target, csv)
        return upload
    return peers.make_work(ours, dataset, tmp)[named[name]][0]


def main():
    args = argparse.ArgumentParser()
    args.add_argument("work", choices=["json", "csv", "group", "filter", "upload"])
    args.add_argument("--binary", default="target/release/rapid-rs")
    args.add_argument("--rows", type=int, default=1_000_000)
    args.add_argument("--seconds", type=float, default=20)
    args.add_argument("--top", type=int, default=25)
    args.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "rapid-peers"))
    a = args.parse_args()
    os.makedirs(a.cache, exist_ok=True)
    csv = os.path.join(a.cache, f"peers-{a.rows}.csv")
    if not os.path.exists(csv):
        peers.generate_csv(csv, a.rows)
    folder = tempfile.mkdtemp(prefix="rapid-profile-data-")
    ours = peers.Ours(a.binary, folder)
    try:
        ours.create("data")
        ours.upload("data", csv)
        run = work_item(ours, "data", csv, a.work)
        run()  # warm-up, outside the profile
        record = os.path.join(folder, "perf.data")
        perf = subprocess.Popen(["perf", "record", "-e", "cpu-clock", "-F", "499", "-g",
                                 "-p", str(ours.proc.pid), "-o", record],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        rounds, start = 0, time.perf_counter()
        while time.perf_counter() - start < a.seconds:
            run()
            rounds += 1
        elapsed = time.perf_counter() - start
        perf.send_signal(2)
        perf.wait()
        print(f"{a.work}: {rounds} rounds in {elapsed:.1f} s, {elapsed / rounds * 1000:.1f} ms each")
        report = subprocess.run(
            ["perf", "report", "-i", record, "--stdio", "--no-children", "--sort", "symbol",
             "-g", "none", "--percent-limit", "0.7"],
            capture_output=True, text=True).stdout
        lines = [l for l in report.splitlines() if l.strip() and not l.startswith("#")]
        print("| self | function |")
        print("|---|---|")
        for line in lines[:a.top]:
            share, _, symbol = line.strip().partition(" ")
            symbol = symbol.strip().removeprefix("[.] ").removeprefix("[k] ")
            print(f"| {share} | `{symbol[:110]}` |")
    finally:
        ours.stop()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
