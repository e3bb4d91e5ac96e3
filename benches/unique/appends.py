"""Many small keyed appends (issue 52's last goal): 2,000 appends of 500 rows to one dataset whose
`id` is unique; prints the median time to SUCCESS of the first and last 25 and their ratio.

    .venv/bin/python benches/unique/appends.py [--binary PATH] [--appends 2000] [--rows 500]
"""

import argparse
import io
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "peers"))
from peers import Ours  # noqa: E402


def csv_bytes(first_id, rows):
    out = io.StringIO()
    out.write("region,id,day,amount,qty,paid,note,category,score,created\n")
    for i in range(first_id, first_id + rows):
        out.write(f"north,{i},2020-01-02,{i % 1000}.5,{i % 100},true,item {i},food,1.5,03/04/2020\n")
    return out.getvalue().encode()


def main():
    args = argparse.ArgumentParser()
    args.add_argument("--binary", default="target/release/rapid-rs")
    args.add_argument("--appends", type=int, default=2000)
    args.add_argument("--rows", type=int, default=500)
    a = args.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ours = Ours(a.binary, os.path.join(tmp, "data"))
        try:
            ours.create("appended", unique=True)
            url = f"{ours.base}/datasets/default/peers/appended"
            times = []
            for n in range(a.appends):
                body = csv_bytes(n * a.rows, a.rows)
                started = time.perf_counter()
                res = ours.http.post(url, files={"file": (f"a{n}.csv", body)})
                assert res.status_code == 202, res.text
                ours.wait(res.json()["details"]["job_id"])
                times.append(time.perf_counter() - started)
            first, last = statistics.median(times[:25]), statistics.median(times[-25:])
            print(f"| {a.appends:,} appends of {a.rows} rows, `id` unique | first 25 {first * 1000:.1f} ms"
                  f" | last 25 {last * 1000:.1f} ms | x{last / first:.2f} |")
        finally:
            ours.stop()


if __name__ == "__main__":
    sys.exit(main())
