"""The differential test's time-travel mode (issue 36): a dataset of four commits (three appends
and the deletion of the second's raw file) is read by delta-rs (the `deltalake` package) from its
Delta Lake log at the current version and two earlier ones; the same random query bodies must
answer the same from DuckDB over those rows and from our service as of the same commits
(`as_of_commit`). Commit N is Delta version N - 1. DIFF_TT_CASES cases per commit (default 60)."""
import os
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
PATH = f"/api/datasets/default/{DOMAIN}/{DATASET}"
MAX_REPORTED = 5


def tt_cases():
    return int(os.environ.get("DIFF_TT_CASES", "60"))


def four_commits(base, token):
    """Three appends of the seeded rows, then the second upload's raw file deleted."""
    create(base, token, DATASET)
    rng = data.make_rng(int(os.environ.get("DIFF_SEED", "21")) + 36)
    parts = [data.rows(rng, 150, 0), data.rows(rng, 120, 1000), data.rows(rng, 90, 2000)]
    for i, rows in enumerate(parts):
        upload(base, token, f"part{i}.parquet", data.parquet_bytes(rows), PATH)
    auth = {"Authorization": f"Bearer {token}"}
    raws = requests.get(f"{base}{PATH}/1/files", headers=auth, timeout=30).json()
    second = next(raw for raw in raws if raw.endswith("-part1.parquet"))
    res = requests.delete(f"{base}{PATH}/1/{second}", headers=auth, timeout=60)
    assert res.status_code == 200, res.text
    history = requests.get(f"{base}{PATH}/history", headers=auth, timeout=30).json()
    assert [c["operation"] for c in history] == ["DELETE", "APPEND", "APPEND", "APPEND"], history
    # Rows at commits 4 (the deletion), 3 and 2.
    return {4: 150 + 90, 3: 150 + 120 + 90, 2: 150 + 120}


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
