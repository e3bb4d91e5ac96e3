"""What the crash test does to the service, and the record of every answer it got.

An operation is acknowledged when its answer arrived (before the cut, since a dead server answers
nothing): a job seen SUCCESS or FAILED, a 200 on a deletion, a 201 on a schema. An operation with
no answer was in flight at the cut and may have happened or not, but only whole. Every answer
received, whatever its status, must have its audit row after the cut.

The server compacts on its own (crash_test.py starts it with RAPID_COMPACT_MIN_FILES=3 and
RAPID_COMPACT_IDLE_SECS=1), and a client asks for COMPACT jobs too, so uploads, deletions and cuts
meet merges; deletions prefer raw files whose rows verify.py saw merged into other files.
`app_uniq` has a unique column `uid`, driven by one client that also re-sends stored values
(refused) and the values of deleted uploads (accepted).
"""

import collections
import io
import threading
import time
import uuid

import requests

from procs import ADMIN_ID, ADMIN_SECRET

DOMAIN = "crash"
PARTS = ["p0", "p1", "p2", "p3", "p4"]
# name -> partitioned
APPEND = {"app_flat": False, "app_part": True}
OVERWRITE = {"ovw_flat": False, "ovw_part": True}
# APPEND, partitioned, with a unique column `uid`.
UNIQUE = "app_uniq"
TIMEOUT = (5, 120)


def schema(name, partitioned, behaviour, unique=False):
    part = {"name": "part", "data_type": "string", "allow_null": False}
    if partitioned:
        part["partition_index"] = 0
    uid = [{"name": "uid", "data_type": "int", "allow_null": False, "unique": True}] if unique else []
    return {
        "metadata": {"domain": DOMAIN, "dataset": name, "sensitivity": "PUBLIC",
                     "update_behaviour": behaviour,
                     "owners": [{"name": "Crash", "email": "crash@example.com"}]},
        "columns": [
            {"name": "batch", "data_type": "string", "allow_null": False},
            part,
            {"name": "n", "data_type": "int", "allow_null": False},
            {"name": "val", "data_type": "double", "allow_null": True},
        ] + uid,
    }


# Request ids of every answer received (any status): each must have its audit row after a cut,
# since the service stores the row before it answers. verify.py takes and clears them.
ANSWERED = set()
ANSWERED_LOCK = threading.Lock()
# Liveness, readiness and metrics are not requests for data or access: the service keeps no row.
UNAUDITED = {"/status", "/ready", "/metrics"}


def take_answered():
    with ANSWERED_LOCK:
        ids = set(ANSWERED)
        ANSWERED.clear()
    return ids


class Api:
    """One client (one per thread): a token, JSON calls; transport errors propagate."""

    def __init__(self, base):
        self.base = base
        self.http = requests.Session()
        r = self.http.post(f"{base}/oauth2/token", auth=(ADMIN_ID, ADMIN_SECRET), timeout=TIMEOUT)
        r.raise_for_status()
        self.http.headers["Authorization"] = f"Bearer {r.json()['access_token']}"

    def call(self, method, path, **kw):
        request_id = uuid.uuid4().hex
        headers = {**kw.pop("headers", {}), "x-request-id": request_id}
        r = self.http.request(method, f"{self.base}{path}", timeout=TIMEOUT, headers=headers, **kw)
        if path not in UNAUDITED:
            with ANSWERED_LOCK:
                ANSWERED.add(request_id)
        return r

    def query_counts(self, dataset, version, as_of_commit=None):
        """{(batch, part): rows} of a dataset version (as of a commit), by the service's own query path."""
        body = {"select_columns": ["batch", "part", "count(*) AS c"],
                "group_by_columns": ["batch", "part"]}
        as_of = f"&as_of_commit={as_of_commit}" if as_of_commit is not None else ""
        r = self.call("POST", f"/datasets/default/{DOMAIN}/{dataset}/query?version={version}{as_of}",
                      json=body)
        if r.status_code != 200:
            raise AssertionError(f"query of {dataset} v{version}: {r.status_code} {r.text[:300]}")
        return {(row["batch"], row["part"]): row["c"] for row in r.json().values()}


class Upload:
    def __init__(self, dataset, version, batch, counts, fmt, valid, uids=None):
        self.dataset, self.version, self.batch = dataset, version, batch
        self.counts = counts  # {part: rows}
        self.fmt, self.valid = fmt, valid
        self.refusal = ""  # the text of a 422
        self.uids = uids  # app_uniq: the upload's `uid` values
        self.duplicate = False  # sends a `uid` already stored: must be refused
        self.reused = False  # its uids were sent again after its deletion (or its absence)
        self.reuse_of = None  # the upload whose uids it sends again
        self.merged = False  # verify.py saw its rows in a merged (compacted) file
        self.answer = None  # "202", "422", "none" or "other"
        self.job_id = self.raw_filename = None
        self.seen = None  # last job status seen before the cut
        self.after = None  # job status after the restart (settled once known)
        self.deletion = None  # None, "acked" or "unknown"
        self.deleted_merged = False  # its deletion was sent after its rows were seen merged
        self.erase = None  # deleted with ?erase=true: "sent", then "acked" once answered 200

    @property
    def filename(self):
        return f"{self.batch}.{self.fmt}"

    def acked_success(self):
        return self.seen == "SUCCESS"


class Scratch:
    """A dataset created, uploaded to, bumped to version 2 and deleted by the scratch worker."""

    def __init__(self, name):
        self.name = name
        self.created = None  # "acked" or "unknown"
        self.bumped = None  # None, "acked" or "unknown"
        self.deleted = None  # None, "acked", "unknown" or "gone" (checked absent after a restart)
        self.uploads = []


class Ledger:
    def __init__(self):
        self.lock = threading.Lock()
        self.uploads = []  # every upload ever, in order of sending
        self.scratch = []
        self.problems = []  # answers that are wrong whatever the cut did
        self.ops = collections.Counter()
        self.compactions = []  # COMPACT jobs asked for
        self.roll_ops = []  # app_roll's uploads and rollbacks, in order of sending (rollbacks.py)
        self.next_uid = 0

    def add(self, item, kind):
        with self.lock:
            if isinstance(item, Upload):
                self.uploads.append(item)
            self.ops[kind] += 1

    def problem(self, text):
        with self.lock:
            self.problems.append(text)

    def fresh_uids(self, count):
        with self.lock:
            first = self.next_uid
            self.next_uid += count
        return list(range(first, first + count))


class Compaction:
    def __init__(self, dataset):
        self.dataset = dataset
        self.answer = None  # "202", "none" or "other"
        self.job_id = None
        self.seen = None  # last job status seen before the cut
        self.after = None  # job status after the restart

def make_upload(rng, dataset, version, batch, partitioned, uids=None, valid=None):
    """An upload of 1-300 rows (one per uid when `uids` are given: app_uniq)."""
    rows = len(uids) if uids is not None else rng.randint(1, 300)
    parts = rng.sample(PARTS, rng.randint(1, 2 if partitioned else len(PARTS)))
    data = [(batch, rng.choice(parts), i, i * 0.5 if i % 7 else None) for i in range(rows)]
    valid = rng.random() >= 0.08 if valid is None else valid
    fmt = "parquet" if valid and rng.random() < 0.3 else "csv"
    up = Upload(dataset, version, batch, collections.Counter(r[1] for r in data), fmt, valid, uids)
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq
        columns = {"batch": [r[0] for r in data], "part": [r[1] for r in data],
                   "n": pa.array([r[2] for r in data], pa.int64()),
                   "val": pa.array([r[3] for r in data], pa.float64())}
        if uids is not None:
            columns["uid"] = pa.array(uids, pa.int64())
        sink = io.BytesIO()
        pq.write_table(pa.table(columns), sink)
        return up, sink.getvalue(), "application/octet-stream"
    bad = -1 if valid else rng.randrange(rows)  # that row's int column gets a letter
    lines = ["batch,part,n,val" + (",uid" if uids is not None else "")]
    for i, (b, p, n, v) in enumerate(data):
        extra = f",{uids[i]}" if uids is not None else ""
        lines.append(f"{b},{p},{'x' if n == bad else ''}{n},{'' if v is None else v}{extra}")
    return up, ("\n".join(lines) + "\n").encode(), "text/csv"


def upload(api, ledger, up, body, ctype):
    """Sends one upload and follows its job to the end (or to the cut)."""
    ledger.add(up, "upload")
    try:
        r = api.call("POST", f"/datasets/default/{DOMAIN}/{up.dataset}?version={up.version}",
                     files={"file": (up.filename, body, ctype)})
    except requests.RequestException:
        up.answer = "none"
        return
    if r.status_code == 422 and not up.valid:
        up.answer, up.refusal = "422", r.text[:300]
        return
    if r.status_code != 202:
        up.answer = "other"
        ledger.problem(f"upload {up.batch} (valid={up.valid}) answered {r.status_code}: {r.text[:300]}")
        return
    up.answer = "202"
    details = r.json()["details"]
    up.job_id, up.raw_filename, up.seen = details["job_id"], details["raw_filename"], "IN PROGRESS"
    while True:
        try:
            job = api.call("GET", f"/jobs/{up.job_id}").json()
        except (requests.RequestException, ValueError):
            return
        up.seen = job["status"]
        if up.seen == "FAILED" and not up.duplicate:
            ledger.problem(f"valid upload {up.batch} FAILED: {job.get('errors')}")
        if up.seen != "IN PROGRESS":
            return
        time.sleep(0.02)


def uploader(api, ledger, rng, stop, tag, datasets):
    """Uploads to `datasets` (APPEND: several uploaders at once; OVERWRITE: one, in order)."""
    seq = 0
    while not stop.is_set():
        name = rng.choice(sorted(datasets))
        seq += 1
        up, body, ctype = make_upload(rng, name, 1, f"{tag}u{seq}", datasets[name])
        upload(api, ledger, up, body, ctype)
        if up.answer == "none":
            return


def stored_for_sure(up):
    return up.deletion is None and (up.after == "SUCCESS" or up.acked_success())


def pick_to_delete(rng, candidates):
    """Half the time (when there is one) an upload whose rows verify.py saw merged."""
    merged = [u for u in candidates if u.merged]
    return rng.choice(merged if merged and rng.random() < 0.5 else candidates)


def delete_raw(api, ledger, up, erase=False):
    """Deletes the raw file of `up` (with erasure: from every retained commit too); False when
    the answer never came (the cut)."""
    ledger.add(None, "file erasure" if erase else "file deletion")
    up.deletion, up.deleted_merged = "unknown", up.merged
    up.erase = "sent" if erase else None
    try:
        r = api.call("DELETE", f"/datasets/default/{DOMAIN}/{up.dataset}/1/{up.raw_filename}"
                     + ("?erase=true" if erase else ""))
    except requests.RequestException:
        return False
    if r.status_code == 200:
        up.deletion = "acked"
        if erase:
            up.erase = "acked"
    else:
        ledger.problem(f"deleting {up.batch} ({up.raw_filename}) answered {r.status_code}: {r.text[:200]}")
    return True


def deleter(api, ledger, rng, stop):
    """Deletes raw files of acknowledged APPEND uploads, one at a time."""
    while not stop.is_set():
        time.sleep(rng.uniform(0.05, 0.3))
        with ledger.lock:
            candidates = [u for u in ledger.uploads if u.dataset in APPEND and stored_for_sure(u)]
        if not candidates or rng.random() < 0.4:
            continue
        if not delete_raw(api, ledger, pick_to_delete(rng, candidates), erase=rng.random() < 0.5):
            return


def compactor(api, ledger, rng, stop):
    """Asks for COMPACT jobs on the APPEND datasets and ovw_part, and follows each to its end."""
    while not stop.is_set():
        time.sleep(rng.uniform(0.1, 0.6))
        c = Compaction(rng.choice(sorted(APPEND) + [UNIQUE, "ovw_part"]))
        ledger.add(None, "compaction")
        with ledger.lock:
            ledger.compactions.append(c)
        try:
            r = api.call("POST", f"/datasets/default/{DOMAIN}/{c.dataset}/compact?version=1")
        except requests.RequestException:
            c.answer = "none"
            return
        if r.status_code != 202:
            c.answer = "other"
            ledger.problem(f"compacting {c.dataset} answered {r.status_code}: {r.text[:200]}")
            continue
        c.answer, c.job_id, c.seen = "202", r.json()["details"]["job_id"], "IN PROGRESS"
        while c.seen == "IN PROGRESS":
            try:
                job = api.call("GET", f"/jobs/{c.job_id}").json()
            except (requests.RequestException, ValueError):
                return
            c.seen = job["status"]
            if c.seen == "FAILED":
                ledger.problem(f"COMPACT job of {c.dataset} FAILED: {job.get('errors')}")
            time.sleep(0.02)


def unique_worker(api, ledger, rng, stop, round_no):
    """Everything on app_uniq, in sequence (so what `unique` must answer is known): new values;
    a stored value sent again (refused: 422, or a FAILED job); a deletion; the values of a
    deleted upload sent again (accepted)."""
    seq = 0
    while not stop.is_set():
        seq += 1
        batch = f"r{round_no}uq{seq}"
        with ledger.lock:
            ours = [u for u in ledger.uploads if u.dataset == UNIQUE and not u.duplicate]
        stored = [u for u in ours if stored_for_sure(u)]
        freed = [u for u in ours if u.deletion == "acked" and not u.reused]
        roll = rng.random()
        if roll < 0.15 and stored:
            old = rng.choice(stored)
            uids = ledger.fresh_uids(rng.randint(0, 20)) + [rng.choice(old.uids)]
            rng.shuffle(uids)
            up, body, ctype = make_upload(rng, UNIQUE, 1, batch, True, uids, valid=True)
            up.duplicate, up.valid = True, False  # well-formed, but must be refused
            upload(api, ledger, up, body, ctype)
            if up.answer == "none":
                return
            if up.seen == "SUCCESS":
                ledger.problem(f"{batch} stored a uid of {old.batch} again (unique not enforced)")
            elif up.answer == "422" and "unique" not in up.refusal.lower():
                ledger.problem(f"{batch} (a uid of {old.batch} again) refused for another reason: {up.refusal}")
            continue
        if roll < 0.3 and stored:
            if not delete_raw(api, ledger, pick_to_delete(rng, stored)):
                return
            continue
        if roll < 0.45 and freed:
            old = rng.choice(freed)
            old.reused = True
            uids = list(old.uids)
        else:
            old, uids = None, ledger.fresh_uids(rng.randint(1, 300))
        up, body, ctype = make_upload(rng, UNIQUE, 1, batch, True, uids)
        up.reuse_of = old
        upload(api, ledger, up, body, ctype)
        if up.answer == "none":
            return


def scratch_worker(api, ledger, rng, stop, round_no):
    """Schema creation, upload, schema update (version 2), upload to it; then deletion of the
    earlier rounds' scratch datasets."""
    s = Scratch(f"scratch_r{round_no}")
    with ledger.lock:
        ledger.scratch.append(s)
    steps = [("create", "POST", 201), ("upload", 1, None), ("bump", "PUT", 200), ("upload", 2, None)]
    for step, arg, want in steps:
        if stop.is_set():
            return
        if step == "upload":
            up, body, ctype = make_upload(rng, s.name, arg, f"{s.name}v{arg}", False)
            s.uploads.append(up)
            upload(api, ledger, up, body, ctype)
            if up.answer == "none":
                return
            continue
        attr = "created" if step == "create" else "bumped"
        setattr(s, attr, "unknown")
        ledger.add(None, "schema " + ("creation" if step == "create" else "update"))
        try:
            r = api.call(arg, "/schema", json=schema(s.name, False, "APPEND"))
        except requests.RequestException:
            return
        if r.status_code != want:
            ledger.problem(f"{step} of {s.name} answered {r.status_code}: {r.text[:200]}")
            return
        setattr(s, attr, "acked")
    for old in [o for o in ledger.scratch if o is not s and o.deleted in (None, "unknown")]:
        if stop.is_set():
            return
        ledger.add(None, "dataset deletion")
        old.deleted = "unknown"
        try:
            r = api.call("DELETE", f"/datasets/default/{DOMAIN}/{old.name}")
        except requests.RequestException:
            return
        if r.status_code in (200, 202):
            old.deleted = "acked"
        elif r.status_code == 404 and old.created != "acked":
            old.deleted = "gone"  # its creation never happened
        else:
            ledger.problem(f"deleting dataset {old.name} answered {r.status_code}: {r.text[:200]}")
