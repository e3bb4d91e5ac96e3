#!/usr/bin/env python3
"""The slowest units and the critical path of a cargo build, from the HTML report that
`cargo build --timings` writes (target/cargo-timings/cargo-timing.html), as Markdown tables for
docs/DESIGN.md ("Build timings").

    cargo metadata --format-version 1 --locked --filter-platform x86_64-unknown-linux-gnu >meta.json
    scripts/build-timings.py [REPORT.html] [--top 20] [--metadata meta.json]

The report embeds each unit (a crate's lib, bin, build script...) as JSON in `UNIT_DATA`: its
start and duration, its sections (the front end's end is when its metadata was ready; older
cargo: `rmeta_time`), and which units it let start (`unblocked_units` when it finished,
`unblocked_rmeta_units` when its metadata was ready; older cargo: `unlocked_*`). Those lists name
only the last dependency each unit waited for, so the critical path (the longest chain of
dependencies, weighted by measured time) takes the dependency graph from `cargo metadata`.
"""

import argparse
import json
import re
import sys


def load_units(path):
    text = open(path, encoding="utf-8").read()
    match = re.search(r"const UNIT_DATA = (\[.*?\]);\n", text, re.S)
    if not match:
        sys.exit(f"{path}: no UNIT_DATA (not a cargo --timings report?)")
    return json.loads(match.group(1))


def label(unit):
    target = unit.get("target", "").strip()
    mode = unit.get("mode", "")
    extra = f"{target}" if target else ""
    if mode and mode != "todo":
        extra = f"{extra} ({mode})".strip()
    return f"{unit['name']} {unit['version']}{(' ' + extra) if extra else ''}"


def rmeta_at(unit):
    """Seconds after the unit's start when its metadata was ready."""
    for name, span in unit.get("sections") or []:
        if name == "frontend":
            return span["end"]
    return unit.get("rmeta_time") or unit["duration"]


def package_graph(metadata_path):
    """name@version -> the name@version of its normal and build dependencies, from
    `cargo metadata --format-version 1` (the timings report names only, for each unit, the one
    dependency whose end let it start)."""
    meta = json.load(open(metadata_path, encoding="utf-8"))
    key = {p["id"]: f"{p['name']}@{p['version']}" for p in meta["packages"]}
    graph = {}
    for node in meta["resolve"]["nodes"]:
        graph[key[node["id"]]] = [
            key[d["pkg"]] for d in node["deps"]
            if any(k["kind"] in (None, "build") for k in d["dep_kinds"])
        ]
    return graph


def critical_path(units, graph):
    """The longest chain of dependencies, each package weighted by its units' measured time: what
    the build would take with as many cores as it could use (a crate starts when the metadata
    of its dependencies is ready; the front end's end stands for that)."""
    cost, rmeta = {}, {}
    for u in units:
        k = f"{u['name']}@{u['version']}"
        cost[k] = cost.get(k, 0.0) + u["duration"]
        if u.get("target", "").strip() == "" and u.get("mode") != "run-custom-build":
            rmeta[k] = rmeta_at(u)
    done, ready_at, via = {}, {}, {}

    def visit(k):
        if k in done:
            return done[k]
        best, came = 0.0, None
        for d in graph.get(k, []):
            if d not in cost:
                continue
            end = visit(d)
            t = end - cost[d] + rmeta.get(d, cost[d])
            if t >= best:
                best, came = t, d
        ready_at[k], via[k] = best, came
        done[k] = best + cost[k]
        return done[k]

    for k in cost:
        visit(k)
    last = max(done, key=done.get)
    path = [last]
    while via.get(path[-1]):
        path.append(via[path[-1]])
    return list(reversed(path)), done[last], cost, ready_at


def main():
    args = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    args.add_argument("report", nargs="?", default="target/cargo-timings/cargo-timing.html")
    args.add_argument("--top", type=int, default=20)
    args.add_argument("--metadata", help="`cargo metadata --format-version 1` output, for the "
                      "critical path (the report alone does not hold every dependency)")
    a = args.parse_args()
    units = load_units(a.report)
    total = max(u["start"] + u["duration"] for u in units)
    busy = sum(u["duration"] for u in units)
    print(f"{len(units)} units, {total / 60:.1f} min wall, {busy / 60:.1f} min of unit time "
          f"(summed; units overlap on the cores)\n")
    print(f"| slowest {a.top} units | seconds | share of unit time |")
    print("|---|---|---|")
    for u in sorted(units, key=lambda u: -u["duration"])[: a.top]:
        print(f"| {label(u)} | {u['duration']:.1f} | {100 * u['duration'] / busy:.1f}% |")
    if not a.metadata:
        return
    path, length, cost, ready_at = critical_path(units, package_graph(a.metadata))
    print("\n| critical path (in order) | could start at s | seconds |")
    print("|---|---|---|")
    for k in path:
        if cost[k] >= 1.0:
            print(f"| {k} | {ready_at[k]:.0f} | {cost[k]:.1f} |")
    print(f"\ncritical path: {len(path)} crates (those under 1 s not listed), {length / 60:.1f} min "
          f"with unlimited cores, against {total / 60:.1f} min measured: the rest is waiting for "
          "a core")

if __name__ == "__main__":
    main()
