"""What a dataset policy and the audit log cost (issue 55's goals: a policy at most 10% on q1 and
q2, the audit log at most 3% on uploads and queries).

- Policy: one server, two datasets holding the same 1M rows (the peers bench's CSV); the second
  has a policy applying to the reader: a row filter (`region <> 'islands'`, about 7/8 of the rows
  kept) and a `hash` mask on `note`. The reader runs q1 (filter + 3 columns + limit 1000) and q2
  (group by + having + order, the peers bench's two queries) on both, alternately.
- Audit: the same uploads and queries on a binary without the audit log (`--baseline`: the same
  commit with `AuditLog::finish` and `AuditLog::open` returning at once) and the current one
  (`--binary`), each on a fresh data folder, rounds alternating between the two servers running
  side by side; `--pairs` pairs of fresh servers, the median of their ratios.

    .venv/bin/python benches/policy/policy_audit.py --binary target/release/rapid-rs \
        --baseline /path/to/rapid-rs-without-audit [--rows 1000000] [--runs 9] [--pairs 5] \
        [--audit-only]
"""

import argparse
import os
import random
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "peers"))
from peers import Ours, generate_csv, timed  # noqa: E402

Q1 = {"select_columns": ["id", "amount", "qty"], "filter": "region = 'north'", "limit": 1000}
Q2 = {"select_columns": ["category", "avg(amount) AS mean", "count(*) AS n"],
      "group_by_columns": ["category"], "aggregation_conditions": "avg(amount) > 1",
      "order_by_columns": [{"column": "category"}]}
POLICY = {"row_filters": [{"name": "no_islands", "filter": "region <> 'islands'",
                           "applies_to": ["READ_ALL"]}],
          "column_masks": [{"column": "note", "mask": "hash", "applies_to": ["READ_ALL"]}]}


def reader(ours):
    """A READ_ALL client's token on `ours`, used for its queries."""
    res = ours.http.post(f"{ours.base}/client",
                         json={"client_name": f"reader{time.monotonic_ns()}", "permissions": ["READ_ALL"]})
    assert res.status_code == 201, res.text
    body = res.json()
    tok = ours.http.post(f"{ours.base}/oauth2/token", auth=(body["client_id"], body["client_secret"]),
                         data={"grant_type": "client_credentials"})
    tok.raise_for_status()
    return "Bearer " + tok.json()["access_token"]


def as_reader(ours, token):
    ours.http.headers["Authorization"] = token


def medians(pairs, runs):
    """Rounds of each (name, f) after a warm-up, in a new random order each round (a fixed order
    favours whichever call follows the same query on the other server: up to 20% on q1 between
    two servers of one binary); the median of each."""
    for _, f in pairs:
        f()
    times = {name: [] for name, _ in pairs}
    order = random.Random(55)
    for _ in range(runs):
        for name, f in order.sample(pairs, len(pairs)):
            times[name].append(timed(f))
    return {name: statistics.median(t) for name, t in times.items()}


def policy_cost(binary, csv, tmp, runs):
    ours = Ours(binary, os.path.join(tmp, "policy"))
    try:
        for name in ("plain", "policed"):
            ours.create(name)
            ours.upload(name, csv)
        res = ours.http.put(f"{ours.base}/datasets/default/peers/policed/policy", json=POLICY)
        assert res.status_code == 200, res.text
        as_reader(ours, reader(ours))
        got = medians([
            ("q1 plain", lambda: ours.query("plain", Q1)),
            ("q1 policy", lambda: ours.query("policed", Q1)),
            ("q2 plain", lambda: ours.query("plain", Q2)),
            ("q2 policy", lambda: ours.query("policed", Q2)),
        ], runs)
    finally:
        ours.stop()
    return got


def audit_pair(binary, baseline, csv, tmp, runs, pair):
    """One pair of fresh servers: medians of alternating uploads and queries on each."""
    before = Ours(baseline, os.path.join(tmp, f"before{pair}"))
    after = Ours(binary, os.path.join(tmp, f"after{pair}"))
    try:
        for server in (before, after):
            server.create("q")
            server.upload("q", csv)
        counter = iter(range(10_000))

        def upload(server):
            name = f"u{next(counter)}"
            server.create(name)
            return lambda: server.upload(name, csv)

        uploads = {"before": [], "after": []}
        for r in range(min(runs, 9) + 1):
            for label, server in (("before", before), ("after", after)):
                t = timed(upload(server))
                if r:
                    uploads[label].append(t)
        got = {f"upload {k}": statistics.median(v) for k, v in uploads.items()}
        # The uploads' data reaches the disk first: an fsync of the log would otherwise wait for
        # that writeback (ext4 commits it with the journal) and the queries would measure it.
        os.sync()
        got.update(medians([
            ("q1 before", lambda: before.query("q", Q1)),
            ("q1 after", lambda: after.query("q", Q1)),
            ("q2 before", lambda: before.query("q", Q2)),
            ("q2 after", lambda: after.query("q", Q2)),
        ], runs))
    finally:
        before.stop()
        after.stop()
    return got


def audit_cost(binary, baseline, csv, tmp, runs, pairs):
    """Per work, the ratio of each pair's medians: two servers differ by a few percent even on one
    binary (their files, their threads' places), so one pair cannot resolve 3%; the median of
    several pairs' ratios can. Run with `--binary` = `--baseline` for the noise floor."""
    ratios = {w: [] for w in ("upload", "q1", "q2")}
    for pair in range(pairs):
        got = audit_pair(binary, baseline, csv, tmp, runs, pair)
        for w in ratios:
            b, n = got[f"{w} before"], got[f"{w} after"]
            ratios[w].append(n / b)
            print(f"  pair {pair + 1} {w}: {b * 1000:.2f} ms before, {n * 1000:.2f} ms with it "
                  f"(x{n / b:.3f})", flush=True)
    return ratios


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="target/release/rapid-rs")
    ap.add_argument("--baseline", help="a binary from before the audit log (audit cost)")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--audit-only", action="store_true", help="skip the policy's cost")
    ap.add_argument("--pairs", type=int, default=5, help="pairs of fresh servers (audit cost)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        csv = os.path.join(tmp, "rows.csv")
        generate_csv(csv, args.rows)
        if not args.audit_only:
            p = policy_cost(args.binary, csv, tmp, args.runs)
            print(f"policy, {args.rows:,} rows, median of {args.runs}:")
            for q in ("q1", "q2"):
                plain, policed = p[f"{q} plain"], p[f"{q} policy"]
                print(f"  {q}: {plain * 1000:.1f} ms without, {policed * 1000:.1f} ms with "
                      f"(x{policed / plain:.3f})")
        if args.baseline:
            print(f"audit log, {args.rows:,} rows, {args.pairs} pairs, medians of {args.runs}:")
            ratios = audit_cost(args.binary, args.baseline, csv, tmp, args.runs, args.pairs)
            for w, r in ratios.items():
                print(f"  {w}: median ratio x{statistics.median(r):.3f} "
                      f"(x{min(r):.3f} to x{max(r):.3f})")


if __name__ == "__main__":
    main()
