"""A reader during each round: queries over `/query` and `/api/sql` while uploads commit. Reads
answer once their audit row is opened (durable while the query runs), not once the full row is
written: a cut between the two must still leave each answered read its row (verify.py checks
every answered request id; a read cut that way has status 0).
"""

import time

import requests

from workload import APPEND, DOMAIN


def reader(api, ledger, rng, stop):
    """Alternates a `/query` and an `/api/sql` read of the APPEND datasets until stopped."""
    while not stop.is_set():
        time.sleep(rng.uniform(0.0, 0.05))
        name = rng.choice(sorted(APPEND))
        ledger.add(None, "read")
        try:
            if rng.random() < 0.5:
                body = {"select_columns": ["batch", "count(*) AS c"], "group_by_columns": ["batch"]}
                r = api.call("POST", f"/datasets/default/{DOMAIN}/{name}/query?version=1", json=body)
            else:
                sql = f'SELECT count(*) AS c FROM "default"."{DOMAIN}"."{name}" WHERE n >= 0'
                r = api.call("POST", "/sql", json={"sql": sql})
        except requests.RequestException:
            return  # the cut
        # Before the first upload's commit the dataset has no rows yet; both answer 200 then.
        if r.status_code != 200:
            ledger.problem(f"a read of {name} answered {r.status_code}: {r.text[:200]}")
