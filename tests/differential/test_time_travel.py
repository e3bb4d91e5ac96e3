"""The differential test's time-travel mode (issue 36): a dataset of four commits (three appends
and the deletion of the second's raw file) is read by delta-rs (the `deltalake` package) from its
Delta Lake log at the current version and two earlier ones; the same random query bodies must
answer the same from DuckDB over those rows and from our service as of the same commits
(`as_of_commit`). Commit N is Delta version N - 1. DIFF_TT_CASES cases per commit (default 60).
DuckDB's delta extension (`delta_scan(..., version := V)`, in .venv-ext: its PyPI build needs
DuckDB 1.5.5) must read the same rows at each of those versions."""
import datetime
import json
import os
import subprocess
from collections import Counter

import duckdb
import requests
from deltalake import DeltaTable

import data
from conftest import DOMAIN, create, upload, version_dir
from exprs import Gen
from queries import random_query
from runner import Service, report, run_case, shrink

DATASET = "travel"
DUCKDB_DATASET = "travel_duckdb"


def path_of(dataset):
    return f"/api/datasets/default/{DOMAIN}/{dataset}"


PATH = path_of(DATASET)
MAX_REPORTED = 5


def tt_cases():
    return int(os.environ.get("DIFF_TT_CASES", "60"))


def four_commits(base, token, dataset=DATASET):
    """Three appends of the seeded rows, then the second upload's raw file deleted."""
    create(base, token, dataset)
    path = path_of(dataset)
    rng = data.make_rng(int(os.environ.get("DIFF_SEED", "21")) + 36)
    parts = [data.rows(rng, 150, 0), data.rows(rng, 120, 1000), data.rows(rng, 90, 2000)]
    for i, rows in enumerate(parts):
        upload(base, token, f"part{i}.parquet", data.parquet_bytes(rows), path)
    auth = {"Authorization": f"Bearer {token}"}
    raws = requests.get(f"{base}{path}/1/files", headers=auth, timeout=30).json()
    second = next(raw for raw in raws if raw.endswith("-part1.parquet"))
    res = requests.delete(f"{base}{path}/1/{second}", headers=auth, timeout=60)
    assert res.status_code == 200, res.text
    history = requests.get(f"{base}{path}/history", headers=auth, timeout=30).json()
    assert [c["operation"] for c in history] == ["DELETE", "APPEND", "APPEND", "APPEND"], history
    # Rows at commits 4 (the deletion), 3 and 2.
    return {4: 150 + 90, 3: 150 + 120 + 90, 2: 150 + 120}


ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def comparable(rows):
    """Rows as sorted JSON text: dates as ISO text, the partition column's NULL as ''."""
    def value(k, v):
        if isinstance(v, (datetime.date, datetime.datetime)):
            return v.isoformat()
        return "" if (k == "region" and v is None) else v
    return sorted(json.dumps({k: value(k, v) for k, v in row.items()}, sort_keys=True)
                  for row in rows)


def duckdb_delta_rows(table_path, versions):
    """Each Delta version's rows as DuckDB's delta extension reads them."""
    python = os.path.join(ROOT, ".venv-ext", "bin", "python")
    assert os.path.exists(python), "no .venv-ext: scripts/setup-python.sh makes it"
    script = os.path.join(ROOT, "tests", "python", "delta_read.py")
    out = subprocess.run([python, script, "duckdb", table_path, *map(str, versions)],
                         capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=os.path.dirname(script)))
    assert out.returncode == 0, out.stderr
    return {int(v): answer["rows"] for v, answer in json.loads(out.stdout).items()}


def test_duckdbs_delta_extension_reads_each_version_as_deltalake(history_server):
    base, token, folder = history_server
    counts = four_commits(base, token, DUCKDB_DATASET)
    path = version_dir(folder, DUCKDB_DATASET)
    versions = [commit - 1 for commit in counts]
    duck = duckdb_delta_rows(path, versions)
    for commit, rows in counts.items():
        delta = DeltaTable(path, version=commit - 1).to_pyarrow_table().to_pylist()
        assert len(delta) == rows, commit
        assert comparable(duck[commit - 1]) == comparable(delta), f"commit {commit}"


def delta_view(folder, commit):
    """DuckDB over the rows delta-rs reads at commit `commit`'s Delta version."""
    table = DeltaTable(version_dir(folder, DATASET), version=commit - 1)
    assert table.version() == commit - 1
    con = duckdb.connect()
    con.register("delta_rows", table.to_pyarrow_table())
    # Delta writes partition values as strings and its readers take an empty one for NULL
    # (docs/DESIGN.md, History): our partition columns are never NULL, so NULL is ''.
    columns = [f"coalesce({c}, '') AS {c}" if c == "region" else c for c in data.COLUMNS]
    con.execute(f"CREATE VIEW dataset AS SELECT {', '.join(columns)} FROM delta_rows")
    return con


def test_as_of_answers_equal_deltalakes_versions(history_server):
    base, token, folder = history_server
    counts = four_commits(base, token)
    gen = Gen(data.make_rng(int(os.environ.get("DIFF_SEED", "21")) * 104729 + 36))
    outcomes, failures = Counter(), []
    for commit, rows in counts.items():
        con = delta_view(folder, commit)
        assert con.execute("SELECT count(*) FROM dataset").fetchone()[0] == rows, commit
        svc = Service(base, token, PATH)
        svc.url += f"?as_of_commit={commit}"
        for n in range(tt_cases()):
            q = random_query(gen)
            outcome = run_case(svc, con, q)
            outcomes[outcome.kind] += 1
            if outcome.failed:
                failures.append((commit, n, q, outcome, svc, con))
    print(f"\ntime travel: {tt_cases()} cases at commits 4, 3 and 2: {dict(outcomes)}")
    details = []
    for commit, n, q, outcome, svc, con in failures[:MAX_REPORTED]:
        small, small_outcome = shrink(svc, con, q, outcome)
        details.append(f"commit {commit}, case {n}: " + report(q, outcome, small, small_outcome))
    assert not failures, f"{len(failures)} cases differ:\n\n" + "\n".join(details)
    assert outcomes["agree"] >= 0.8 * sum(outcomes.values()), dict(outcomes)
