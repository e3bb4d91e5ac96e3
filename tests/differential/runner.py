"""One differential case: the body run by our service over HTTP and the same query run by DuckDB
over the Parquet files the service stored, compared; a failing case is shrunk to the smallest
variant that still fails."""
import json

import duckdb
import requests

from compare import compare, ours_rows, outside_i64, typed
from queries import shrink_candidates

ACCEPT = {"json": "application/json", "csv": "text/csv",
          "arrow": "application/vnd.apache.arrow.stream", "parquet": "application/vnd.apache.parquet"}
# Outcomes that are not failures: an int64 overflow refused (by us, by DuckDB, or both).
ACCEPTED = {"agree", "both-refused-overflow", "result-outside-int64", "we-refused-overflow",
            "duckdb-refused-overflow"}


class Service:
    def __init__(self, base, token, path):
        self.http = requests.Session()
        self.http.headers["Authorization"] = f"Bearer {token}"
        self.url = f"{base}{path}/query"

    def query(self, body, fmt="json"):
        res = self.http.post(self.url, json=body, headers={"Accept": ACCEPT[fmt]}, timeout=120)
        return res.status_code, res.content

    def answer(self, q):
        """(200, typed rows) or (status, the error's text)."""
        status, content = self.query(q.body(), q.fmt)
        if status != 200:
            return status, content.decode(errors="replace")
        return status, ours_rows(q.fmt, content)


class WireService:
    """The same cases as SQL over the PostgreSQL protocol (psycopg), signed in as the client."""

    def __init__(self, host, port, user, password, table):
        import psycopg
        self.psycopg = psycopg
        self.conn = psycopg.connect(host=host, port=port, user=user, password=password,
                                    dbname="default", sslmode="disable", autocommit=True)
        self.table = table

    def answer(self, q):
        try:
            with self.conn.cursor() as cur:
                cur.execute(q.ours_sql(self.table))
                return 200, [[typed(v) for v in row] for row in cur.fetchall()]
        except self.psycopg.Error as e:
            return 400, f"{e.sqlstate}: {e}"


def overflow_text(text):
    text = text.lower()
    return "overflow" in text or "out of range" in text


class Outcome:
    def __init__(self, kind, ours=None, theirs=None, why=""):
        self.kind, self.ours, self.theirs, self.why = kind, ours, theirs, why

    @property
    def failed(self):
        return self.kind not in ACCEPTED


def duck_answer(con, q):
    """DuckDB's answer to `q` without its limit: (rows, None) or (None, error)."""
    try:
        return [[typed(v) for v in row] for row in con.execute(q.duck_sql(with_limit=False)).fetchall()], None
    except duckdb.Error as e:
        return None, str(e)


def run_case(svc, con, q, reference=None):
    """`reference`: DuckDB's answer already computed (duck_answer) over files holding the same
    rows, e.g. the same rows stored another way (the compacted dataset)."""
    status, ours = svc.answer(q)
    full, duck_error = reference if reference is not None else duck_answer(con, q)
    if status != 200:
        text = ours
        if status == 400 and overflow_text(text):
            if duck_error is not None and overflow_text(duck_error):
                return Outcome("both-refused-overflow", text, duck_error)
            if full is not None and outside_i64(full):
                # DuckDB's exact (128-bit) answer does not fit in int64: our 400 is the contract.
                return Outcome("result-outside-int64", text, full)
            return Outcome("we-refused-overflow", text, full)
        return Outcome("our-error", f"{status} {text}", duck_error or full)
    if duck_error is not None:
        kind = "duckdb-refused-overflow" if overflow_text(duck_error) else "duckdb-error"
        return Outcome(kind, ours, duck_error)
    why = compare(q, ours, full)
    return Outcome("agree" if why is None else "differ", ours, full, why or "")


def shrink(svc, con, q, outcome, budget=150):
    """The smallest variant of `q` that still fails the same way (greedy)."""
    best, best_outcome = q, outcome
    progress = True
    while progress and budget > 0:
        progress = False
        for cand in shrink_candidates(best):
            budget -= 1
            try:
                o = run_case(svc, con, cand)
            except Exception:  # a variant the generator's rules do not cover: skip it
                continue
            if o.failed and o.kind == outcome.kind:
                best, best_outcome, progress = cand, o, True
                break
            if budget <= 0:
                break
    return best, best_outcome


def show(rows, limit=12):
    if not isinstance(rows, list):
        return str(rows)[:2000]
    lines = [json.dumps([v for _, v in r] if r and isinstance(r[0], tuple) else r, default=str,
                        ensure_ascii=False) for r in rows[:limit]]
    more = f"\n      ... {len(rows) - limit} more rows" if len(rows) > limit else ""
    return "\n      ".join(lines) + more


def report(q, outcome, small, small_outcome):
    return (f"[{outcome.kind}: {outcome.why}]\n"
            f"  body:   {q.describe()}  (format {q.fmt})\n"
            f"  DuckDB: {q.duck_sql()}\n"
            f"  shrunk body:   {small.describe()}  (format {small.fmt})\n"
            f"  shrunk DuckDB: {small.duck_sql()}\n"
            f"  ours ({small_outcome.kind}):\n      {show(small_outcome.ours)}\n"
            f"  DuckDB:\n      {show(small_outcome.theirs)}\n")
