"""What change events cost (issue 58's goals: the first delivery attempt within 1 s of the commit
at p99 on an idle machine; 10 subscribers cost at most 3% on the upload benchmark).

- Latency: one subscriber on loopback; `--commits` small uploads one after another; for each
  event, the time from the event's `time` (written in the commit's transaction, so a little before
  the commit itself) to the moment the receiver has read the whole delivery. Same clock: same
  machine.
- Upload cost: the peers bench's 1M-row CSV uploaded to a fresh dataset, as a client would
  (streamed, job polled to SUCCESS), on two servers of the same binary side by side, one with no
  subscriber and one with 10 subscribers to every event (each its own receiver); rounds
  alternate, the medians are compared.

    .venv/bin/python benches/events/events_bench.py --binary target/release/rapid-rs \
        [--rows 1000000] [--runs 9] [--commits 200]
"""

import argparse
import datetime
import os
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "peers"))
from peers import Ours, generate_csv, timed  # noqa: E402


class Receiver:
    """Notes when each delivery (by webhook-id) was read whole; answers 204."""

    def __init__(self):
        self.arrived = {}
        self.bodies = {}
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                now = time.time()
                wid = self.headers.get("webhook-id")
                owner.arrived.setdefault(wid, now)
                owner.bodies[wid] = body
                self.send_response(204)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def subscribe(ours, url):
    res = ours.http.post(f"{ours.base}/webhooks",
                         json={"url": url, "events": ["*"], "datasets": ["*"]})
    assert res.status_code == 201, res.text


def event_time(body):
    import json
    t = json.loads(body)["time"]
    return datetime.datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp()


def latency(binary, tmp, commits):
    ours = Ours(binary, os.path.join(tmp, "latency"))
    receiver = Receiver()
    try:
        subscribe(ours, receiver.url)
        ours.create("small")
        small = os.path.join(tmp, "small.csv")
        generate_csv(small, 10)
        for _ in range(commits):
            ours.upload("small", small)
            time.sleep(0.02)  # an idle machine between commits, as a trickle of uploads is
        until = time.time() + 30
        while len(receiver.arrived) < commits and time.time() < until:
            time.sleep(0.05)
        delays = sorted(receiver.arrived[w] - event_time(receiver.bodies[w])
                        for w in receiver.arrived
                        if b'"dataset.committed"' in receiver.bodies[w])
    finally:
        ours.stop()
    assert len(delays) >= commits, f"{len(delays)} of {commits} commits delivered"
    q = statistics.quantiles(delays, n=100)
    return {"commits": len(delays), "p50": q[49], "p99": q[98], "max": delays[-1]}


def upload_cost(binary, csv, tmp, runs, subscribers):
    plain = Ours(binary, os.path.join(tmp, "plain"))
    watched = Ours(binary, os.path.join(tmp, "watched"))
    receivers = [Receiver() for _ in range(subscribers)]
    try:
        for r in receivers:
            subscribe(watched, r.url)
        times = {"none": [], f"{subscribers} subscribers": []}
        for n in range(runs + 1):
            for name, ours in (("none", plain), (f"{subscribers} subscribers", watched)):
                ours.create(f"up{n}")
                t = timed(lambda: ours.upload(f"up{n}", csv))
                if n:  # the first round warms the page cache
                    times[name].append(t)
        delivered = sum(len(r.arrived) for r in receivers)
    finally:
        plain.stop()
        watched.stop()
    return {k: statistics.median(v) for k, v in times.items()}, delivered


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", required=True)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--commits", type=int, default=200)
    ap.add_argument("--subscribers", type=int, default=10)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="rapid-events-bench-") as tmp:
        lat = latency(args.binary, tmp, args.commits)
        print(f"first delivery after a commit, {lat['commits']} commits: p50 {lat['p50'] * 1000:.1f} ms, "
              f"p99 {lat['p99'] * 1000:.1f} ms, max {lat['max'] * 1000:.1f} ms")
        csv = os.path.join(tmp, "bench.csv")
        generate_csv(csv, args.rows)
        got, delivered = upload_cost(args.binary, csv, tmp, args.runs, args.subscribers)
        base = got["none"]
        for name, t in got.items():
            print(f"upload {args.rows} rows, {name}: {t * 1000:.1f} ms (x{t / base:.3f})")
        print(f"{delivered} deliveries to the {args.subscribers} receivers")


if __name__ == "__main__":
    sys.exit(main())
