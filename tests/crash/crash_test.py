"""Crash test: rounds of concurrent uploads (APPEND and OVERWRITE, partitioned and not, one with a
unique column), file deletions (also of rows merged by compaction), rollbacks, compactions
(automatic and COMPACT jobs), schema creations and updates and dataset deletions against rapid-rs running on crashfs,
with a power cut at a random moment of each round; after each restart everything acknowledged
must be there, whole, and catalog and files must agree (see verify.py), and every change must
have its event, delivered at least once to a webhook receiver, with no phantom and no gap
(see events.py).

python tests/crash/crash_test.py --server target/debug/rapid-rs --crashfs target/debug/crashfs --rounds 200
Exit code 0 when every round passed (or FUSE cannot be mounted here: then it says so and skips).
"""

import argparse
import collections
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from events import Events, check_events  # noqa: E402
from procs import CrashFs, Server, fuse_unavailable  # noqa: E402
from readers import reader  # noqa: E402
from rollbacks import ROLL, Rollback, roll_worker  # noqa: E402
from verify import verify_api, verify_files  # noqa: E402
from workload import (APPEND, OVERWRITE, UNIQUE, Api, Ledger, compactor, deleter, schema,  # noqa: E402
                      scratch_worker, unique_worker, uploader)

# Merges during the workload: after 3 files of a size tier, and of everything once a version has
# been quiet for a second (so also right after each restart).
COMPACTION_ENV = {"RAPID_COMPACT_AUTO": "true", "RAPID_COMPACT_MIN_FILES": "3",
                  "RAPID_COMPACT_IDLE_SECS": "1"}


def setup(server, fs_dir, events):
    api = Api(server.base)
    events.subscribe(api)
    for datasets, behaviour in [(APPEND, "APPEND"), (OVERWRITE, "OVERWRITE")]:
        for name, partitioned in datasets.items():
            r = api.call("POST", "/schema", json=schema(name, partitioned, behaviour))
            assert r.status_code == 201, f"creating {name}: {r.status_code} {r.text}"
    r = api.call("POST", "/schema", json=schema(UNIQUE, True, "APPEND", unique=True))
    assert r.status_code == 201, f"creating {UNIQUE}: {r.status_code} {r.text}"
    r = api.call("POST", "/schema", json=schema(ROLL, False, "APPEND"))
    assert r.status_code == 201, f"creating {ROLL}: {r.status_code} {r.text}"


def compaction_figures(api):
    r = api.call("GET", "/metrics")
    assert r.status_code == 200, f"metrics: {r.status_code}"
    return [line for line in r.text.splitlines() if line.startswith("rapid_compaction")]


def compactor_quiet(api, timeout=60):
    """Waits until no merge runs and none started for longer than RAPID_COMPACT_IDLE_SECS plus
    the compactor's tick, so none is due."""
    start = time.time()
    last, since = None, start
    while time.time() < start + timeout:
        now = compaction_figures(api)
        if now != last or "rapid_compaction_running 0" not in now:
            last, since = now, time.time()
        elif time.time() - since >= 1.6:
            stats_quiet.append(time.time() - start)
            return True
        time.sleep(0.2)
    return False


stats_quiet = []  # seconds waited for a quiet compactor, per round


def run_round(n, rng, seed, server, fs, ledger, stats, events):
    """One round: workers until a random cut; power cut; restart; checks. Returns failures."""
    stop = threading.Event()
    workers = [
        (uploader, (f"r{n}a", APPEND)), (uploader, (f"r{n}b", APPEND)),
        (uploader, (f"r{n}of", {"ovw_flat": False})), (uploader, (f"r{n}op", {"ovw_part": True})),
        (deleter, ()), (scratch_worker, (n,)), (compactor, ()), (unique_worker, (n,)),
        (roll_worker, (n,)), (reader, ()),
    ]
    threads = []
    for i, (fn, extra) in enumerate(workers):
        wrng = random.Random(seed * 7919 + n * 31 + i)
        threads.append(threading.Thread(target=fn, args=(Api(server.base), ledger, wrng, stop, *extra)))
    for t in threads:
        t.start()
    quiet = rng.random() < 0.15
    cut_at = rng.uniform(0.05, 2.5)
    time.sleep(cut_at)
    if quiet:  # everything answered first: the cut finds nothing in flight
        stop.set()
        for t in threads:
            t.join()
    server.kill()
    stop.set()
    for t in threads:
        t.join()
    tear = rng.random() < 0.5
    fs.power_cut(tear)
    stats["cuts"] += 1
    stats["cuts " + ("after a quiet moment" if quiet else "with operations in flight")] += 1
    stats["cuts tearing the last unsynced write" if tear else "cuts losing every unsynced write"] += 1
    fs.mount()
    server.start()
    api = Api(server.base)
    checks = verify_api(api, ledger, n)
    feed, deliveries = check_events(api, ledger, events, checks)
    stats["events in the feed (last round)"] = feed
    stats["webhook deliveries received"] = deliveries
    # A stop in the middle of a merge leaves its staged file and the files it replaced for the
    # next start-up to sweep; the on-disk checks want a quiet compactor (recovery after a cut
    # mid-merge is what they check).
    checks.expect(compactor_quiet(api), "compactor still busy a minute after the checks")
    api.http.close()  # an open keep-alive connection holds up the graceful stop
    server.stop()
    file_checks, data_files, raw_files, compacted, merged = verify_files(fs.mountpoint)
    # The audit log's hash chain, as an operator checks it (server stopped here; it also runs live).
    audit = subprocess.run([server.binary, "admin", "--data-dir", fs.mountpoint, "audit", "verify"],
                           capture_output=True, text=True)
    file_checks.expect(audit.returncode == 0, "audit log chain broken after the cut",
                       (audit.stdout + audit.stderr)[-300:])
    server.start()
    with ledger.lock:
        for up in ledger.uploads:
            if up.raw_filename in merged:
                up.merged = True
    stats["merged files seen in the catalog"] += compacted
    stats["checks"] += checks.count + file_checks.count
    failures = checks.failures + file_checks.failures
    with ledger.lock:
        failures += [("wrong answer while running", p) for p in ledger.problems]
        ledger.problems.clear()
    print(f"round {n}: cut at {cut_at:.2f}s{' (quiet)' if quiet else ''}{', torn' if tear else ''}; "
          f"{checks.count + file_checks.count} checks; catalog lists {data_files} Parquet "
          f"({compacted} merged) and {raw_files} raw files; {len(failures)} failures", flush=True)
    return failures


def summary(ledger, stats, rounds):
    outcomes = collections.Counter()
    for up in ledger.uploads:
        if up.answer == "422":
            outcomes["rejected 422, FAILED kept"] += 1
        elif up.acked_success():
            outcomes["acknowledged SUCCESS"] += 1
        elif up.answer == "202":
            outcomes["202, cut before the job ended: " + (up.after or "?")] += 1
        else:
            outcomes["no answer (in flight at the cut): job " + (up.after or "?")] += 1
    compactions = collections.Counter(
        "acknowledged " + c.seen if c.seen in ("SUCCESS", "FAILED")
        else "no answer (in flight at the cut)" if c.answer == "none"
        else f"{c.answer}, cut before the job ended: {c.after}" for c in ledger.compactions)
    dups = [u for u in ledger.uploads if u.duplicate]
    refused = sum(1 for u in dups if u.answer == "422" or u.after == "FAILED")
    reused = [u for u in ledger.uploads if u.reuse_of is not None]
    deleted_merged = sum(1 for u in ledger.uploads if u.deleted_merged and u.deletion == "acked")
    print(f"\n{rounds} rounds, {sum(ledger.ops.values())} operations: "
          + ", ".join(f"{v} {k}s" for k, v in sorted(ledger.ops.items())))
    print("uploads: " + ", ".join(f"{v} {k}" for k, v in sorted(outcomes.items())))
    print("COMPACT jobs: " + ", ".join(f"{v} {k}" for k, v in sorted(compactions.items()))
          + f"; {deleted_merged} acknowledged deletions of raw files whose rows were merged")
    print(f"{UNIQUE}: {len(dups)} uploads of a stored uid ({refused} refused, the rest cut off), "
          f"{len(reused)} of the uids of deleted or absent uploads "
          f"({sum(1 for u in reused if u.after == 'SUCCESS')} stored)")
    rollbacks = collections.Counter(op.state for op in ledger.roll_ops if isinstance(op, Rollback))
    print(f"{ROLL} rollbacks: " + ", ".join(f"{v} {k}" for k, v in sorted(rollbacks.items()))
          + " (happened or lost: in flight at the cut)")
    print(", ".join(f"{v} {k}" for k, v in sorted(stats.items())))
    if stats_quiet:
        print(f"waited {sum(stats_quiet) / len(stats_quiet):.1f} s a round (at most {max(stats_quiet):.1f} s) "
              "for a quiet compactor before the on-disk checks")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server", required=True)
    ap.add_argument("--crashfs", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seed", type=int)
    ap.add_argument("--keep", action="store_true", help="keep the work folder (kept anyway on failure)")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    work = tempfile.mkdtemp(prefix="rapid-crash-")
    print(f"crash test: {args.rounds} rounds, seed {seed}, work folder {work}", flush=True)
    reason = fuse_unavailable(os.path.abspath(args.crashfs), work)
    if reason:
        print(f"SKIP crash test: FUSE cannot be mounted here ({reason})")
        shutil.rmtree(work, ignore_errors=True)
        return 0
    rng = random.Random(seed)
    fs = CrashFs(os.path.abspath(args.crashfs), os.path.join(work, "backing"),
                 os.path.join(work, "data"), os.path.join(work, "crashfs.log"), seed)
    server = Server(os.path.abspath(args.server), fs.mountpoint, os.path.join(work, "server.log"),
                    COMPACTION_ENV)
    ledger, stats, failures, passed = Ledger(), collections.Counter(), [], 0
    events = Events()
    try:
        fs.mount()
        server.start()
        setup(server, fs.mountpoint, events)
        server.stop()  # the datasets are made durable by a clean stop, whatever the build
        server.start()
        for n in range(1, args.rounds + 1):
            failures = run_round(n, rng, seed, server, fs, ledger, stats, events)
            if failures:
                print(f"\nround {n} FAILED (seed {seed}):")
                kinds = collections.defaultdict(list)
                for kind, detail in failures:
                    kinds[kind].append(detail)
                for kind, details in kinds.items():
                    print(f"  {len(details)} x {kind}, e.g.")
                    for d in details[:3]:
                        print(f"      {d}")
                break
            passed += 1
        if passed >= 3 and not stats["merged files seen in the catalog"]:
            failures = [("no merged file ever seen: compaction did not run", "")]
            print(f"\nFAILED (seed {seed}): no merged file seen in {passed} rounds")
    finally:
        if server.proc is not None:
            server.stop()
        fs.stop()
        events.receiver.stop()
    summary(ledger, stats, passed)
    print(f"crash: {passed} passed, {1 if failures else 0} failed")
    if failures or args.keep:
        print(f"work folder kept: {work} (server.log, crashfs.log, backing/)")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
