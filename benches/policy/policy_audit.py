"""What a dataset policy and the audit log cost (issue 55's goals: a policy at most 10% on q1 and
q2, the audit log at most 3% on uploads and queries).

- Policy: one server, two datasets holding the same 1M rows (the peers bench's CSV); the second
  has a policy applying to the reader: a row filter (`region <> 'islands'`, about 7/8 of the rows
  kept) and a `hash` mask on `note`. The reader runs q1 (filter + 3 columns + limit 1000) and q2
  (group by + having + order, the peers bench's two queries) on both, alternately.
- Audit: the same uploads and queries on a binary from before the audit log (`--baseline`) and the
  current one (`--binary`), each on a fresh data folder, servers started one after the other;
  rounds alternate between the two servers running side by side.

    .venv/bin/python benches/policy/policy_audit.py --binary target/release/rapid-rs \
        --baseline /path/to/rapid-rs-before-audit [--rows 1000000] [--runs 9]
"""

import argparse
import os
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
    """Alternating runs of each (name, f) after a warm-up; the median of each."""
    for _, f in pairs:
        f()
    times = {name: [] for name, _ in pairs}
    for _ in range(runs):
        for name, f in pairs:
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


def audit_cost(binary, baseline, csv, tmp, runs):
    before = Ours(baseline, os.path.join(tmp, "before"))
    after = Ours(binary, os.path.join(tmp, "after"))
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
        for r in range(runs + 1):
            for label, server in (("before", before), ("after", after)):
                t = timed(upload(server))
                if r:
                    uploads[label].append(t)
        got = {f"upload {k}": statistics.median(v) for k, v in uploads.items()}
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="target/release/rapid-rs")
    ap.add_argument("--baseline", help="a binary from before the audit log (audit cost)")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--audit-only", action="store_true", help="skip the policy's cost")
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
            a = audit_cost(args.binary, args.baseline, csv, tmp, args.runs)
            print(f"audit log, {args.rows:,} rows, median of {args.runs}:")
            for w in ("upload", "q1", "q2"):
                b, n = a[f"{w} before"], a[f"{w} after"]
                print(f"  {w}: {b * 1000:.2f} ms before, {n * 1000:.2f} ms with it (x{n / b:.3f})")


if __name__ == "__main__":
    main()
