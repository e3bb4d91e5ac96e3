# Inode churn like the growth bench: 20 files created per "append", and every 16 appends the
# 320 oldest small files deleted (a merge) and one created in their place. Times the creates only.
# Usage: python3 benches/growth/churn.py DIR [ROUNDS]  (DIR on the file system to try; no fsync)
import os, sys, time, statistics
d = sys.argv[1]; n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
os.makedirs(d, exist_ok=True)
small, times = [], []
for i in range(n):
    t = time.perf_counter()
    for j in range(20):
        p = f"{d}/a{i}_{j}"
        fd = os.open(p, os.O_CREAT | os.O_WRONLY, 0o644); os.write(fd, b"x" * 4096); os.close(fd)
        small.append(p)
    times.append((time.perf_counter() - t) * 1000)
    if len(small) >= 320:
        for p in small[:320]: os.unlink(p)
        small = small[320:]
        fd = os.open(f"{d}/m{i}", os.O_CREAT | os.O_WRONLY, 0o644); os.close(fd)
m = lambda xs: statistics.median(xs)
print(f"{d}: 20 creates, median first 25 {m(times[:25]):.2f} ms, last 25 {m(times[-25:]):.2f} ms (x{m(times[-25:])/m(times[:25]):.2f})")
