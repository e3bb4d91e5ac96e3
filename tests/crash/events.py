"""Change events through power cuts: a webhook receiver in the test process (it outlives every
cut), subscribed to every event, and a pull-feed reader whose cursor is kept across rounds.

After each restart:
- no gap: the feed read from position 0 lists event ids 1..N (the SQLite outbox numbers events in
  its commits, so a rolled-back change takes no number), and the reader's cursor, read on from
  where the last round left it, has seen exactly those ids: no cursor skipped an event;
- nothing lost: every acknowledged upload has its event (SUCCESS: `dataset.committed` naming its
  raw file; refused: `upload.rejected` naming its job);
- no phantom: every commit event of the fixed datasets names a commit the dataset's history has,
  with the same operation and raw file (or one older than history keeps), and every delivery the
  receiver got is an event of the feed;
- at least once: every event of the feed reaches the receiver (within 30 s), each signature
  verified by the Standard Webhooks reference library.
"""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook

from rollbacks import ROLL
from workload import APPEND, DOMAIN, OVERWRITE, UNIQUE

# The datasets the workload never deletes (so commit numbers name one history).
FIXED = list(APPEND) + list(OVERWRITE) + [UNIQUE, ROLL]


class Receiver:
    """Records each delivery by its webhook-id; answers 204."""

    def __init__(self):
        self.lock = threading.Lock()
        self.got = {}  # webhook-id -> body
        self.deliveries = 0
        self.unverified = []  # webhook-ids whose signature did not verify on arrival
        self.secret = None  # set once subscribed
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                headers = {k.lower(): v for k, v in self.headers.items()}
                signed = {k: headers.get(k, "") for k in ("webhook-id", "webhook-timestamp", "webhook-signature")}
                try:  # on arrival: the reference library refuses timestamps older than 5 minutes
                    Webhook(owner.secret).verify(body, signed)
                    ok = True
                except Exception:  # noqa: BLE001 - any refusal counts
                    ok = False
                with owner.lock:
                    owner.got[headers.get("webhook-id")] = body.decode()
                    owner.deliveries += 1
                    if not ok:
                        owner.unverified.append(headers.get("webhook-id"))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def ids(self):
        with self.lock:
            return set(self.got)

    def stop(self):
        self.server.shutdown()


class Events:
    """The receiver, its subscription's secret and the pull-feed reader's state."""

    def __init__(self):
        self.receiver = Receiver()
        self.secret = None
        self.cursor = 0
        self.seen = []  # ids the cursor walk has read, in order

    def subscribe(self, api):
        body = {"url": self.receiver.url, "events": ["*"], "datasets": ["*"]}
        r = api.call("POST", "/webhooks", json=body)
        assert r.status_code == 201, f"subscribing: {r.status_code} {r.text}"
        self.secret = self.receiver.secret = r.json()["secret"]


def read_feed(api, after, limit):
    events = []
    while True:
        r = api.call("GET", f"/events?after={after}&limit={limit}")
        assert r.status_code == 200, f"feed: {r.status_code} {r.text[:300]}"
        page = r.json()
        if not page["events"] and page["next"] == after:
            return events, after
        events.extend(page["events"])
        after = page["next"]


def history(api, dataset):
    """{commit: (operation, raw_filename)} of version 1, as far as history keeps it."""
    out, page = {}, 1
    while True:
        r = api.call("GET", f"/datasets/default/{DOMAIN}/{dataset}/history?page={page}&per_page=1000")
        if r.status_code != 200:
            return out
        commits = r.json()
        for c in commits:
            out[c["commit"]] = (c["operation"], c.get("raw_filename"))
        if len(commits) < 1000:
            return out
        page += 1


def check_events(api, ledger, events, checks):
    everything, _ = read_feed(api, 0, 500)
    ids = [int(e["id"]) for e in everything]
    checks.expect(ids == list(range(1, len(ids) + 1)), "event ids with a gap or out of order",
                  f"{len(ids)} events, first gaps: {[i for n, i in enumerate(ids, 1) if i != n][:5]}")
    walked, events.cursor = read_feed(api, events.cursor, 7)
    events.seen.extend(int(e["id"]) for e in walked)
    checks.expect(events.seen == ids, "the kept cursor skipped or repeated events",
                  f"cursor saw {len(events.seen)}, the feed has {len(ids)}")

    commits = {}
    rejected = set()
    for e in everything:
        d = e.get("data", {})
        if e["type"] == "dataset.committed" and d.get("operation") in ("APPEND", "OVERWRITE"):
            commits.setdefault((d["dataset"], d["raw_filename"]), []).append(e)
        if e["type"] == "upload.rejected":
            rejected.add(d.get("job_id"))
    with ledger.lock:
        uploads = list(ledger.uploads)
    for up in uploads:
        if up.acked_success() and up.raw_filename:
            checks.expect((up.dataset, up.raw_filename) in commits, "acknowledged upload without its event",
                          f"{up.dataset} {up.raw_filename}")
        if (up.seen == "FAILED" or up.answer == "422") and up.job_id:
            checks.expect(up.job_id in rejected, "acknowledged refusal without its event",
                          f"{up.dataset} job {up.job_id}")

    for dataset in FIXED:
        kept = history(api, dataset)
        if not kept:
            continue
        newest = max(kept)
        for e in everything:
            d = e.get("data", {})
            if e["type"] not in ("dataset.committed", "dataset.rolled_back") or d.get("dataset") != dataset:
                continue
            if d.get("version") != 1:
                continue
            n = d["commit"]
            if n in kept:
                said = (d["operation"], d.get("raw_filename"))
                # An erasure is a DELETE commit marked ERASE once its rows left the older files
                # (its own `dataset.erased` event follows).
                if said[0] == "DELETE" and kept[n][0] == "ERASE":
                    said = ("ERASE", said[1])
                checks.expect(kept[n] == said,
                              "an event names another commit than history",
                              f"{dataset} commit {n}: event {d['operation']} {d.get('raw_filename')}, history {kept[n]}")
            else:
                checks.expect(n < newest and n < min(kept), "an event for a commit that did not happen",
                              f"{dataset} commit {n} ({d['operation']}), history newest {newest}")

    known = set(str(i) for i in ids)
    until = time.time() + 30
    while not known <= events.receiver.ids() and time.time() < until:
        time.sleep(0.1)
    missing = known - events.receiver.ids()
    checks.expect(not missing, "events never delivered", f"{len(missing)} of {len(known)}: {sorted(missing, key=int)[:5]}")
    extra = events.receiver.ids() - known
    checks.expect(not extra, "deliveries of events the feed does not have", f"{sorted(extra)[:5]}")
    with events.receiver.lock:
        unverified = list(events.receiver.unverified)
    checks.expect(not unverified, "deliveries whose signature does not verify", f"{unverified[:5]}")
    return len(ids), events.receiver.deliveries
