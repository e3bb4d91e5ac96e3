"""Upload feedback at scale (issue 37): a 5,000,000-row CSV with 500,000 bad rows (every tenth
row's `qty` breaks its in_range check), against the same file without them, each on a fresh
release server (peak RSS is the server's VmHWM, a high-water mark per process):

- clean: the valid file, the usual upload (its peak RSS is the bound the others must stay under);
- reject: the bad file refused (422); its report must list all 500,000 problems;
- quarantine: the bad file with `on_error=quarantine`; the 4,500,000 good rows must be queryable
  and the quarantine file must hold the other 500,000.

    .venv/bin/python benches/feedback/quarantine.py [--binary target/release/rapid-rs]
        [--rows 5000000]
"""

import argparse
import os
import sys
import tempfile
import time

import polars as pl

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "peers"))
import peers  # noqa: E402  (the peers bench's server wrapper, schema and file generator)


def peak_rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def files(folder, rows):
    clean = os.path.join(folder, f"clean-{rows}.csv")
    bad = os.path.join(folder, f"bad-{rows}.csv")
    if not os.path.exists(clean):
        peers.generate_csv(clean, rows)
    if not os.path.exists(bad):
        frame = pl.read_csv(clean, infer_schema_length=0)
        every_tenth = (pl.int_range(0, pl.len()) % 10) == 9
        frame = frame.with_columns(pl.when(every_tenth).then(pl.lit("500"))
                                   .otherwise(pl.col("qty")).alias("qty"))
        frame.write_csv(bad)
    return clean, bad


def upload(ours, dataset, path, query=""):
    url = f"{ours.base}/datasets/default/peers/{dataset}{query}"
    boundary = "rapid-feedback-5c1e"
    start = time.perf_counter()
    res = ours.http.post(url, data=peers.multipart_stream(path, boundary), headers={
        "Content-Type": f"multipart/form-data; boundary={boundary}"})
    body = res.json()
    if res.status_code == 202:
        job = ours.wait(body["details"]["job_id"])
        return time.perf_counter() - start, res.status_code, body, job
    return time.perf_counter() - start, res.status_code, body, None


def data_lines(ours, url):
    """Lines of a downloaded CSV, header not counted, streamed."""
    count = -1
    with ours.http.get(url, stream=True) as res:
        res.raise_for_status()
        for chunk in res.iter_content(1 << 20):
            count += chunk.count(b"\n")
    return count


def fresh(binary, tmp, name):
    folder = os.path.join(tmp, name)
    ours = peers.Ours(binary, folder)
    ours.create(name)
    return ours


def main():
    args = argparse.ArgumentParser()
    args.add_argument("--binary", default="target/release/rapid-rs")
    args.add_argument("--rows", type=int, default=5_000_000)
    args.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "rapid-feedback"))
    a = args.parse_args()
    os.makedirs(a.cache, exist_ok=True)
    clean, bad = files(a.cache, a.rows)
    bad_rows = a.rows // 10
    mb = os.path.getsize(bad) / 1e6
    print(f"{a.rows:,} rows, {mb:.0f} MB; {bad_rows:,} bad rows")
    with tempfile.TemporaryDirectory() as tmp:
        ours = fresh(a.binary, tmp, "clean")
        seconds, status, _, job = upload(ours, "clean", clean)
        assert status == 202 and job["status"] == "SUCCESS", job
        bound = peak_rss_mb(ours.proc.pid)
        print(f"clean      {seconds:6.2f} s  peak RSS {bound:5.0f} MB")
        ours.stop()

        ours = fresh(a.binary, tmp, "reject")
        seconds, status, body, _ = upload(ours, "reject", bad)
        assert status == 422, body
        listed = data_lines(ours, body["report_url"])
        peak = peak_rss_mb(ours.proc.pid)
        print(f"reject     {seconds:6.2f} s  peak RSS {peak:5.0f} MB  422, report lists {listed:,}")
        assert listed == bad_rows, listed
        ours.stop()

        ours = fresh(a.binary, tmp, "quarantine")
        seconds, status, body, job = upload(ours, "quarantine", bad, "?on_error=quarantine")
        assert status == 202 and job["status"] == "SUCCESS", (body, job)
        d = body["details"]
        assert (d["rows_accepted"], d["rows_rejected"]) == (a.rows - bad_rows, bad_rows), d
        stored = ours.http.post(f"{ours.base}/datasets/default/peers/quarantine/query",
                                json={"select_columns": ["count(*) AS n"]}).json()["0"]["n"]
        kept_apart = data_lines(ours, d["quarantine_url"])
        listed = data_lines(ours, d["report_url"])
        peak = peak_rss_mb(ours.proc.pid)
        print(f"quarantine {seconds:6.2f} s  peak RSS {peak:5.0f} MB  stored {stored:,}, "
              f"quarantined {kept_apart:,}, report lists {listed:,}")
        assert (stored, kept_apart, listed) == (a.rows - bad_rows, bad_rows, bad_rows)
        ours.stop()
    print(f"bound: peak RSS of the clean upload, {bound:.0f} MB")


if __name__ == "__main__":
    main()
