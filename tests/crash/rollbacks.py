"""Rollbacks in the crash test: one client alone drives `app_roll` (APPEND, not partitioned;
merged by automatic compaction like the others), in sequence: uploads, and rollbacks
(`POST .../rollback?to_commit=N`) to one of the 30 newest commits but the current. Each change is
in the ledger in order of sending (`ledger.roll_ops`); a rollback is "sent", then "acked" with
the commit number of its 200 answer.

After each restart the history of version 1 is replayed, oldest first, against the ledger: an
APPEND commit adds its upload's rows, a ROLLBACK commit makes the content that of its commit N,
a COMPACT commit changes nothing. The history must hold the ledger's changes in their order:
every upload whose job is SUCCESS, every acknowledged rollback (as a ROLLBACK commit numbered as
its answer said); a change in flight at the cut is in it or not, and is settled so. The
dataset's rows must then be the replayed content, each upload's rows whole.
"""

import requests

from workload import DOMAIN, Upload, make_upload, upload

ROLL = "app_roll"
HISTORY = f"/datasets/default/{DOMAIN}/{ROLL}/history?version=1"


class Rollback:
    def __init__(self, to_commit):
        self.to_commit = to_commit
        # "sent", "acked" (answered 200); after a restart one "sent" is settled to "happened"
        # (its commit is in the history) or "lost".
        self.state = "sent"
        self.commit = None  # the ROLLBACK commit's number

    def __repr__(self):
        return f"rollback to commit {self.to_commit} ({self.state}, commit {self.commit})"


def rollback(api, ledger, rng):
    """One rollback to an older commit among the 30 newest; False when an answer never came."""
    try:
        r = api.call("GET", f"{HISTORY}&per_page=30")
    except requests.RequestException:
        return False
    if r.status_code != 200:
        ledger.problem(f"history of {ROLL} answered {r.status_code}: {r.text[:200]}")
        return True
    older = [c["commit"] for c in r.json()[1:]]
    if not older:
        return True
    rb = Rollback(rng.choice(older))
    ledger.add(None, "rollback")
    with ledger.lock:
        ledger.roll_ops.append(rb)
    try:
        r = api.call("POST", f"/datasets/default/{DOMAIN}/{ROLL}/rollback?version=1&to_commit={rb.to_commit}")
    except requests.RequestException:
        return False
    if r.status_code == 200:
        rb.state, rb.commit = "acked", r.json()["details"]["commit"]
    else:
        rb.state = "refused"
        ledger.problem(f"{rb} answered {r.status_code}: {r.text[:200]}")
    return True


def roll_worker(api, ledger, rng, stop, round_no):
    """Uploads to app_roll and rollbacks of it (a third of the changes), one at a time."""
    seq = 0
    while not stop.is_set():
        seq += 1
        if rng.random() < 0.33:
            if not rollback(api, ledger, rng):
                return
            continue
        up, body, ctype = make_upload(rng, ROLL, 1, f"r{round_no}rb{seq}", False)
        with ledger.lock:
            ledger.roll_ops.append(up)
        upload(api, ledger, up, body, ctype)
        if up.answer == "none":
            return


def full_history(api):
    """Every commit of app_roll's version 1, oldest first."""
    commits, page = [], 1
    while True:
        r = api.call("GET", f"{HISTORY}&per_page=1000&page={page}")
        if r.status_code != 200:
            raise AssertionError(f"history of {ROLL}: {r.status_code} {r.text[:300]}")
        got = r.json()
        commits += got
        if len(got) < 1000:
            return commits[::-1]
        page += 1


def certain(op):
    """Whether the change must be in the history (its success was answered or settled)."""
    if isinstance(op, Upload):
        return op.after == "SUCCESS"
    return op.state in ("acked", "happened")


class Replay:
    """The ledger's changes walked in order beside the history's commits."""

    def __init__(self, ops, checks):
        self.ops, self.next, self.checks = ops, 0, checks

    def find(self, wanted):
        """The next change `wanted` accepts; those skipped on the way did not happen."""
        while self.next < len(self.ops):
            op = self.ops[self.next]
            self.next += 1
            if wanted(op):
                return op
            self.skip(op)
        return None

    def skip(self, op):
        if isinstance(op, Rollback) and op.state == "sent":
            op.state = "lost"
        self.checks.expect(not certain(op), "acknowledged change missing from the history or out of order",
                           f"{ROLL}: {op.batch if isinstance(op, Upload) else op}")

    def finish(self):
        while self.next < len(self.ops):
            self.skip(self.ops[self.next])
            self.next += 1


def replay(commits, replayer, checks):
    """The content the history and the ledger give: {batch: {part: rows}}."""
    content, at = {}, {}
    for c in commits:
        n, op = c["commit"], c["operation"]
        if op == "APPEND":
            batch = c["raw_filename"].split("-", 2)[2].rsplit(".", 1)[0]
            up = replayer.find(lambda o: isinstance(o, Upload) and o.batch == batch)
            checks.expect(up is not None and up.after == "SUCCESS", "history commit of an upload not committed",
                          f"{ROLL}: commit {n} of {batch} ({up.after if up else 'never sent or out of order'})")
            content = {**content, batch: dict(up.counts)} if up else content
        elif op == "ROLLBACK":
            rb = replayer.find(lambda o: isinstance(o, Rollback) and (
                o.commit == n if o.commit is not None else o.state == "sent"))
            checks.expect(rb is not None, "ROLLBACK commit of no rollback sent", f"{ROLL}: commit {n}")
            if rb is not None:
                if rb.state == "sent":
                    rb.state, rb.commit = "happened", n
                checks.expect(rb.to_commit in at, "rollback to a commit not before it", f"{ROLL}: {rb}")
                content = at.get(rb.to_commit, content)
        else:
            checks.expect(op == "COMPACT", "unexpected operation in the history", f"{ROLL}: commit {n}: {op}")
        at[n] = content
    replayer.finish()
    return content


def check_rollbacks(api, ledger, checks, batches):
    """After settle_jobs: the history against the ledger, then the rows against the replay."""
    with ledger.lock:
        ops = list(ledger.roll_ops)
    commits = full_history(api)
    by_number = {c["commit"]: c for c in commits}
    for rb in ops:
        if isinstance(rb, Rollback) and rb.state == "acked":
            c = by_number.get(rb.commit)
            checks.expect(c is not None and c["operation"] == "ROLLBACK", "acknowledged rollback not in the history",
                          f"{ROLL}: {rb}: commit {c}")
    expected = replay(commits, Replay(ops, checks), checks)
    present = batches(api.query_counts(ROLL, 1))
    wrong = sorted(b for b in set(present) | set(expected) if present.get(b) != expected.get(b))
    checks.expect(not wrong, "content after rollbacks is not the history's replay",
                  f"{ROLL}: {len(wrong)} batches differ, e.g. "
                  + ", ".join(f"{b}: {present.get(b)} (expected {expected.get(b)})" for b in wrong[:3]))
