"""Wall time and the server's own CPU time per upload of the peers bench's CSV, for comparing two
builds on a loaded machine (CPU time moves less with the load than wall time does).

    .venv/bin/python benches/feedback/upload_cpu.py BINARY [UPLOADS] [ROWS]

Alternate two binaries, several times each, and compare medians.
"""

import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "peers"))
import peers  # noqa: E402


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    binary = sys.argv[1]
    uploads = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    rows = int(sys.argv[3]) if len(sys.argv) > 3 else 1_000_000
    cache = os.path.join(tempfile.gettempdir(), "rapid-peers")
    os.makedirs(cache, exist_ok=True)
    csv = os.path.join(cache, f"peers-{rows}.csv")
    if not os.path.exists(csv):
        peers.generate_csv(csv, rows)
    with tempfile.TemporaryDirectory() as folder:
        ours = peers.Ours(binary, folder)
        ours.create("p")
        runs = []
        for _ in range(uploads):
            cpu, wall = cpu_seconds(ours.proc.pid), time.perf_counter()
            ours.upload("p", csv)
            runs.append((time.perf_counter() - wall, cpu_seconds(ours.proc.pid) - cpu))
        ours.stop()
    print(binary, " ".join(f"{w:.2f}s/{c:.2f}cpu" for w, c in runs))


if __name__ == "__main__":
    main()
