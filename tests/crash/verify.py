"""The checks after every power cut and restart.

Through the API (server up, recovery done): no job IN PROGRESS; every acknowledged job kept its
outcome; each upload's rows are all there or none, and there exactly when its job says SUCCESS
(and no acknowledged deletion removed them); OVERWRITE datasets hold, per partition, the last
committed upload; raw file listings agree with the data; acknowledged schemas and dataset
deletions held; every dataset answers a query. COMPACT jobs: acknowledged outcomes kept. app_uniq:
every stored uid once, exactly the uids of the uploads whose rows are there; the unique index
agrees with the data after the restart: a stored uid sent again is refused, and the uids of
uploads that are not there (deleted, failed or cut off) are accepted again. app_roll: its
history replayed against the ledger (rollbacks.py): acknowledged rollbacks are ROLLBACK commits,
and the rows are those of commit N after a rollback to N, plus the uploads committed since.
Audit: every request answered before the cut (any status) has its row, and the log's hash chain
verifies (`rapid-rs admin audit verify`, server stopped).
On disk (server stopped): the catalog's files and the files on disk are the same set, every
Parquet file reads with the row count the catalog has, every raw file has its recorded size,
staging is empty. Which raw files' rows sit in merged files is read there, so later deletions can
aim at them.
Operations in flight at the cut are settled here to what the restart shows, so the next rounds
hold them to it.
"""

import json
import os
import random
import sqlite3

import pyarrow.parquet as pq

from rollbacks import check_rollbacks
from workload import APPEND, DOMAIN, OVERWRITE, UNIQUE, make_upload, take_answered, upload


class Checks:
    def __init__(self):
        self.failures = []  # (kind, detail)
        self.count = 0

    def expect(self, ok, kind, detail=""):
        self.count += 1
        if not ok:
            self.failures.append((kind, detail))


def settle_jobs(api, ledger, checks):
    jobs = api.call("GET", "/jobs").json()
    for j in jobs:
        checks.expect(j["status"] != "IN PROGRESS", "job still IN PROGRESS after the restart", f"{j['job_id']} ({j.get('filename')})")
    by_filename = {j["filename"]: j for j in jobs if j.get("filename")}
    for up in ledger.uploads:
        if up.after is not None or up.answer is None:
            continue
        if up.job_id:
            r = api.call("GET", f"/jobs/{up.job_id}")
            status = r.json()["status"] if r.status_code == 200 else None
        else:
            status = by_filename.get(up.filename, {}).get("status")
        what = f"upload {up.batch} (answer {up.answer}, seen {up.seen})"
        if up.acked_success():
            checks.expect(status == "SUCCESS", "acknowledged SUCCESS lost", f"{what}: job now {status}")
        if up.seen == "FAILED" or up.answer == "422":
            checks.expect(status == "FAILED", "acknowledged FAILED lost", f"{what}: job now {status}")
        if up.answer == "202":
            checks.expect(status is not None, "job of a 202 answer gone", what)
        up.after = status or "ABSENT"
    for c in ledger.compactions:
        if c.after is not None or c.job_id is None:
            continue
        r = api.call("GET", f"/jobs/{c.job_id}")
        status = r.json()["status"] if r.status_code == 200 else None
        what = f"COMPACT job {c.job_id} of {c.dataset} (seen {c.seen})"
        checks.expect(status is not None, "job of a 202 answer gone", what)
        if c.seen in ("SUCCESS", "FAILED"):
            checks.expect(status == c.seen, f"acknowledged {c.seen} lost", f"{what}: job now {status}")
        c.after = status or "ABSENT"


def batches(counts):
    out = {}
    for (batch, part), c in counts.items():
        out.setdefault(batch, {})[part] = c
    return out


def check_append(api, ledger, checks, dataset):
    present = batches(api.query_counts(dataset, 1))
    ups = [u for u in ledger.uploads if u.dataset == dataset]
    known = {u.batch for u in ups}
    for batch in present:
        checks.expect(batch in known, "rows of an upload never sent", f"{dataset}: {batch}")
    for up in ups:
        here = present.get(up.batch)
        if here is not None:
            checks.expect(here == dict(up.counts), "upload half there", f"{dataset}: {up.batch}: {here} of {dict(up.counts)}")
        committed = up.after == "SUCCESS"
        if committed and up.deletion == "unknown":
            up.deletion = None if here is not None else "acked"
        gone = up.deletion == "acked"
        if committed and not gone:
            checks.expect(here is not None, "committed upload's rows missing", f"{dataset}: {up.batch}{' (acknowledged)' if up.acked_success() else ''}")
        else:
            checks.expect(here is None, "rows of an uncommitted or deleted upload", f"{dataset}: {up.batch} (job {up.after}, deletion {up.deletion})")
    check_erasures(api, checks, dataset, [u for u in ups if u.erase == "acked"])
    r = api.call("GET", f"/datasets/default/{DOMAIN}/{dataset}/1/files")
    # Raw names are {timestamp}-{random}-{original stem}.{ext}; batch names have no dash.
    names = r.json() if r.status_code == 200 else []
    listed = {name.split("-", 2)[2].rsplit(".", 1)[0] for name in names}
    checks.expect(listed == set(present), "raw file listing disagrees with the data", f"{dataset}: {sorted(listed ^ set(present))}")


def check_erasures(api, checks, dataset, erased):
    """Acknowledged erasures: an ERASE commit in the history, and no retained commit before it
    (the three newest, which the others' files were rewritten like) holds the upload's rows."""
    if not erased:
        return
    r = api.call("GET", f"/datasets/default/{DOMAIN}/{dataset}/history?version=1&per_page=1000")
    commits = r.json() if r.status_code == 200 else []
    for up in erased:
        mine = [c for c in commits if c["raw_filename"] == up.raw_filename and c["operation"] != "APPEND"]
        if not mine:
            continue  # older than the page
        checks.expect(mine[0]["operation"] == "ERASE", "acknowledged erasure not in the history",
                      f"{dataset}: {up.batch}: {mine[0]}")
        for n in range(mine[0]["commit"] - 1, max(0, mine[0]["commit"] - 4), -1):
            try:
                counts = batches(api.query_counts(dataset, 1, as_of_commit=n))
            except AssertionError:
                continue  # past retention
            checks.expect(up.batch not in counts, "erased rows in an earlier commit",
                          f"{dataset}: {up.batch} as of commit {n}")


def check_unique(api, ledger, checks, round_no):
    """app_uniq after check_append: stored uids against the data, then the index by probes."""
    def query(body):
        r = api.call("POST", f"/datasets/default/{DOMAIN}/{UNIQUE}/query?version=1", json=body)
        if r.status_code != 200:
            raise AssertionError(f"query of {UNIQUE}: {r.status_code} {r.text[:300]}")
        return list(r.json().values())

    twice = query({"select_columns": ["uid", "count(*) AS c"], "group_by_columns": ["uid"],
                   "aggregation_conditions": "count(*) > 1"})
    checks.expect(not twice, "a unique value stored more than once", f"{UNIQUE}: {twice[:10]}")
    present = set(batches(api.query_counts(UNIQUE, 1)))
    ups = [u for u in ledger.uploads if u.dataset == UNIQUE]
    expected = [uid for up in ups if up.batch in present for uid in up.uids]
    # The whole set of uids would be a long answer after many rounds: its size and sums instead.
    got = query({"select_columns": ["count(*) AS n", "count(DISTINCT uid) AS d", "sum(uid) AS s",
                                    "sum(uid * uid) AS s2"]})[0]
    want = {"n": len(expected), "d": len(set(expected)), "s": sum(expected) if expected else None,
            "s2": sum(u * u for u in expected) if expected else None}
    checks.expect(got == want, "stored unique values are not those of the uploads there",
                  f"{UNIQUE}: stored {got}, uploads there {want}")
    rng = random.Random(round_no)
    # A stored value sent again: refused (the index kept the keys of what is there).
    there = [u for u in ups if u.batch in present]
    for k, old in enumerate(rng.sample(there, min(2, len(there)))):
        up, payload, ctype = make_upload(rng, UNIQUE, 1, f"probe{round_no}d{k}", True,
                                         [rng.choice(old.uids)], valid=True)
        up.duplicate, up.valid = True, False
        upload(api, ledger, up, payload, ctype)
        refused = up.answer == "422" and "unique" in up.refusal.lower() or up.seen == "FAILED"
        checks.expect(refused, "a stored unique value accepted again after the restart",
                      f"uid of {old.batch} (merged {old.merged}): answer {up.answer} {up.refusal}, job {up.seen}")
    # Values of uploads not there, never sent again: accepted (no key left without its rows).
    # Those cut off in flight first, then deleted ones.
    gone = [u for u in ups if u.batch not in present and not u.duplicate and not u.reused]
    gone.sort(key=lambda u: (u.deletion == "acked", u.answer != "none"))
    for k, old in enumerate(gone[:3]):
        old.reused = True
        up, payload, ctype = make_upload(rng, UNIQUE, 1, f"probe{round_no}f{k}", True, list(old.uids),
                                         valid=True)
        up.reuse_of = old
        upload(api, ledger, up, payload, ctype)
        checks.expect(up.seen == "SUCCESS", "unique values of rows not there refused after the restart",
                      f"uids of {old.batch} (job {old.after}, answer {old.answer}, deletion {old.deletion}, "
                      f"merged {old.merged}): answer {up.answer} {up.refusal}, job {up.seen}")
        up.after = up.seen


def check_overwrite(api, ledger, checks, dataset, partitioned):
    present = api.query_counts(dataset, 1)
    expected = {}
    for up in ledger.uploads:
        if up.dataset == dataset and up.after == "SUCCESS":
            if not partitioned:
                expected = {}
            for part, c in up.counts.items():
                expected[part] = (up.batch, c)
    want = {(b, p): c for p, (b, c) in expected.items()}
    checks.expect(present == want, "OVERWRITE dataset does not hold the last committed uploads", f"{dataset}: holds {sorted(present.items())}, expected {sorted(want.items())}")


def listing(api):
    r = api.call("POST", "/datasets", json={})
    assert r.status_code == 200, f"listing: {r.status_code} {r.text[:200]}"
    return {d["dataset"]: d for d in r.json() if d["domain"] == DOMAIN}


def check_scratch(api, ledger, checks, listed):
    for s in ledger.scratch:
        if s.deleted == "gone":
            checks.expect(s.name not in listed, "deleted dataset back", s.name)
            continue
        exists = s.name in listed
        if s.deleted == "acked":
            checks.expect(not exists, "acknowledged dataset deletion lost", s.name)
            s.deleted = "gone"
            continue
        if s.created == "acked" and s.deleted is None:
            checks.expect(exists, "acknowledged schema creation lost", s.name)
        if not exists:
            s.deleted = "gone"
            continue
        s.created, s.deleted = "acked", None
        version = int(listed[s.name].get("version", 1))
        if s.bumped == "acked":
            checks.expect(version >= 2, "acknowledged schema update lost", f"{s.name}: latest version {version}")
        s.bumped = "acked" if version >= 2 else None
        for up in s.uploads:
            if up.version > version:
                checks.expect(up.after != "SUCCESS", "upload committed to a schema version that is gone", up.batch)
                continue
            here = batches(api.query_counts(s.name, up.version)).get(up.batch)
            if up.after == "SUCCESS":
                checks.expect(here == dict(up.counts), "committed upload's rows missing or partial", f"{up.batch}: {here}")
            else:
                checks.expect(here is None, "rows of an uncommitted or deleted upload", f"{up.batch} (job {up.after})")


def check_audit(api, checks, answered, ledger):
    """Every request answered before the cut has its audit row (rows are stored before answers)."""
    seen, after = set(), 0
    while True:
        r = api.call("GET", f"/audit?after={after}&limit=1000")
        if r.status_code != 200:
            raise AssertionError(f"audit log: {r.status_code} {r.text[:200]}")
        page = r.json()
        for row in page:
            if row["request_id"] in seen and row["request_id"] and row["front"] != "job":
                checks.expect(False, "a request with two audit rows", row["request_id"])
            seen.add(row["request_id"])
            if row["status"] == 0:  # an opened row the cut left without its outcome
                ledger.add(None, "status-0 audit row")
        if len(page) < 1000:  # each page read adds a row: "until empty" would never end
            break
        after = page[-1]["id"]
    lost = answered - seen
    checks.expect(not lost, "answered request without its audit row",
                  f"{len(lost)} of {len(answered)}, e.g. {sorted(lost)[:3]}")


def verify_api(api, ledger, round_no):
    checks = Checks()
    answered = take_answered()  # before this phase's own calls add theirs
    try:
        check_audit(api, checks, answered, ledger)
    except AssertionError as e:
        checks.expect(False, "audit log unreadable", str(e))
    steps = [lambda: settle_jobs(api, ledger, checks)]
    steps += [lambda n=n: check_append(api, ledger, checks, n) for n in list(APPEND) + [UNIQUE]]
    steps += [lambda: check_unique(api, ledger, checks, round_no)]
    steps += [lambda: check_rollbacks(api, ledger, checks, batches)]
    steps += [lambda n=n, p=p: check_overwrite(api, ledger, checks, n, p) for n, p in OVERWRITE.items()]
    for step in steps:
        try:
            step()
        except AssertionError as e:  # a query that fails is a finding, not the end of the checks
            checks.expect(False, "dataset does not answer queries", str(e))
    listed = listing(api)
    try:
        check_scratch(api, ledger, checks, listed)
    except AssertionError as e:
        checks.expect(False, "dataset does not answer queries", str(e))
    for name in listed:  # every dataset answers a query
        r = api.call("POST", f"/datasets/default/{DOMAIN}/{name}/query",
                     json={"select_columns": ["count(*) AS c"]})
        checks.expect(r.status_code == 200, "dataset does not answer queries", f"{name}: {r.status_code} {r.text[:200]}")
    return checks


def files_under(root, top):
    out = set()
    for dirpath, _, files in os.walk(os.path.join(root, top)):
        for f in files:
            out.add(os.path.relpath(os.path.join(dirpath, f), root))
    return out


def delta_logs_complete(conn, data_dir, checks):
    """Every version with commits has a Delta log up to its newest commit after the restart
    (start-up writes what a cut between a commit and its log version left out)."""
    for layer, domain, key, version, latest in conn.execute(
            "SELECT d.layer, d.domain, d.dataset_key, c.version, max(c.commit_no) "
            "FROM commits c JOIN datasets d ON d.id = c.dataset_id GROUP BY 1, 2, 3, 4"):
        log = os.path.join(data_dir, "data", layer, domain, key, str(version), "_delta_log")
        zero = os.path.join(log, f"{0:020d}.json")
        if not os.path.exists(zero):
            checks.expect(False, "Delta log missing after recovery", log)
            continue
        with open(zero) as f:
            first = json.loads(f.readline())["commitInfo"]["rapidCommit"]
        last = os.path.join(log, f"{latest - first:020d}.json")
        checks.expect(os.path.exists(last), "Delta log behind the catalog after recovery", last)


def verify_files(data_dir):
    """Catalog against disk, with the server stopped."""
    checks = Checks()
    conn = sqlite3.connect(os.path.join(data_dir, "catalog.sqlite"))
    try:
        data = dict(conn.execute("SELECT path, rows FROM data_files"))
        # Files replaced by a commit stay on disk, listed here, while a retained commit reads them.
        retired = dict(conn.execute("SELECT path, rows FROM retired_files"))
        raw = {os.path.join("raw", l, d, k, str(v), f): b for l, d, k, v, f, b in conn.execute(
            "SELECT d.layer, d.domain, d.dataset_key, r.version, r.raw_filename, r.bytes "
            "FROM raw_files r JOIN datasets d ON d.id = r.dataset_id")}
        running = conn.execute("SELECT count(*) FROM jobs WHERE status = 'IN PROGRESS'").fetchone()[0]
        merged = {r for (r,) in conn.execute("SELECT DISTINCT raw_filename FROM data_file_parts")}
        delta_logs_complete(conn, data_dir, checks)
    finally:
        conn.close()
    checks.expect(running == 0, "job still IN PROGRESS after the restart", f"{running} in the catalog")
    # Each version's Delta log is derived from the catalog, not listed in it (checked above).
    on_disk = {f for f in files_under(data_dir, "data") if "/_delta_log/" not in f} \
        | files_under(data_dir, "raw")
    listed = set(data) | set(retired) | set(raw)
    checks.expect(not (listed - on_disk), "files in the catalog missing on disk", str(sorted(listed - on_disk)[:10]))
    checks.expect(not (on_disk - listed), "orphan files left after recovery", str(sorted(on_disk - listed)[:10]))
    for rel, rows in list(data.items()) + list(retired.items()):
        path = os.path.join(data_dir, rel)
        if os.path.exists(path):
            try:
                got = pq.read_metadata(path).num_rows
            except Exception as e:  # an empty or torn file
                got = f"unreadable ({e})"
            checks.expect(got == rows, "Parquet file broken or with other rows than the catalog says", f"{rel}: {got}, catalog {rows}")
    for rel, size in raw.items():
        path = os.path.join(data_dir, rel)
        if os.path.exists(path):
            checks.expect(os.path.getsize(path) == size, "raw file of another size than the catalog says", f"{rel}: {os.path.getsize(path)}, catalog {size}")
    staged = files_under(data_dir, "staging")
    checks.expect(not staged, "staging not empty after recovery", str(sorted(staged)[:5]))
    compacted = sum(1 for p in data if os.path.basename(p).startswith("compacted-"))
    return checks, len(data), len(raw), compacted, merged
