"""Query bodies (select, filter as SQL text or a JSON group, group by, having, order by with ties,
limit) built from typed expressions, each with the equivalent DuckDB statement, and the smaller
variants of a query that shrinking tries."""
import copy
import json
from dataclasses import dataclass, field

import re

from exprs import COLUMN_TYPES, E, Gen, col, lit

JSON_OPS = ["=", "!=", ">", ">=", "<", "<=", "LIKE", "NOT LIKE", "IN", "NOT IN", "IS NULL", "IS NOT NULL"]
FORMATS = ["json"] * 7 + ["csv", "arrow", "parquet"]


@dataclass
class Item:
    expr: E
    alias: str = None


@dataclass
class Cond:
    """One condition of a JSON group: `column` is a column name or a call."""
    column: E
    op: str
    value: object = None  # a literal E, a list of them, or None

    def body(self):
        out = {"column": self.column.ours.strip("()") if self.column.fixed else self.column.ours,
               "operator": self.op}
        if isinstance(self.value, list):
            out["value"] = [v.json for v in self.value]
        elif self.value is not None:
            out["value"] = self.value.json
        return out

    def ours_sql(self):
        """The same condition as a filter string (for the metamorphic checks)."""
        c = self.column.ours
        if self.value is None:
            return f"({c} {self.op})"
        if isinstance(self.value, list):
            return f"({c} {self.op} ({', '.join(v.ours for v in self.value)}))"
        return f"({c} {self.op} {self.value.ours})"

    def duck(self):
        c = self.column.duck
        if self.value is None:
            return f"({c} {self.op})"
        if isinstance(self.value, list):
            return f"({c} {self.op} ({', '.join(v.duck for v in self.value)}))"
        return f"({c} {self.op} {self.value.duck})"


@dataclass
class Group:
    logic: str
    conds: list
    groups: list = field(default_factory=list)

    def body(self):
        out = {"conditions": [c.body() for c in self.conds]}
        if self.groups:
            out["groups"] = [g.body() for g in self.groups]
        if len(self.conds) + len(self.groups) > 1 or self.logic:
            out["logic_operator"] = self.logic or "AND"
        return out

    def duck(self):
        parts = [c.duck() for c in self.conds] + [g.duck() for g in self.groups]
        return "(" + f" {self.logic or 'AND'} ".join(parts) + ")"

    def ours_sql(self):
        parts = [c.ours_sql() for c in self.conds] + [g.ours_sql() for g in self.groups]
        return "(" + f" {self.logic or 'AND'} ".join(parts) + ")"


@dataclass
class Query:
    select: list
    filter: object = None   # E (bool) or Group
    group_by: list = field(default_factory=list)
    having: object = None   # E (bool) or Group
    order_by: list = field(default_factory=list)  # [(item index, "ASC"|"DESC")]
    limit: int = None
    fmt: str = "json"

    def body(self):
        b = {"select_columns": [it.expr.ours + (f" AS {it.alias}" if it.alias else "") for it in self.select]}
        if self.filter is not None:
            b["filter"] = self.filter.body() if isinstance(self.filter, Group) else self.filter.ours
        if self.group_by:
            b["group_by_columns"] = list(self.group_by)
        if self.having is not None:
            b["aggregation_conditions"] = self.having.body() if isinstance(self.having, Group) else self.having.ours
        if self.order_by:
            b["order_by_columns"] = [{"column": self.order_ref(i), "direction": d} for i, d in self.order_by]
        if self.limit is not None:
            b["limit"] = self.limit
        return b

    def order_ref(self, i):
        it = self.select[i]
        return it.alias or it.expr.ours

    def duck_sql(self, with_limit=True):
        items = [f'{it.expr.duck} AS "c{i}"' for i, it in enumerate(self.select)]
        sql = f"SELECT {', '.join(items)} FROM dataset"
        if self.filter is not None:
            sql += f" WHERE {self.filter.duck}" if isinstance(self.filter, E) else f" WHERE {self.filter.duck()}"
        if self.group_by:
            sql += " GROUP BY " + ", ".join(self.group_by)
        if self.having is not None:
            sql += f" HAVING {self.having.duck}" if isinstance(self.having, E) else f" HAVING {self.having.duck()}"
        if self.order_by:
            sql += " ORDER BY " + ", ".join(f'"c{i}" {d} NULLS LAST' for i, d in self.order_by)
        if with_limit and self.limit is not None:
            sql += f" LIMIT {self.limit}"
        return sql

    def ours_sql(self, table):
        """The case as one SQL statement in our expression language, over `table`."""
        items = [f'{it.expr.ours} AS "c{i}"' for i, it in enumerate(self.select)]
        sql = f"SELECT {', '.join(items)} FROM {table}"
        if self.filter is not None:
            sql += f" WHERE {self.filter.ours if isinstance(self.filter, E) else self.filter.ours_sql()}"
        if self.group_by:
            sql += " GROUP BY " + ", ".join(self.group_by)
        if self.having is not None:
            sql += f" HAVING {self.having.ours if isinstance(self.having, E) else self.having.ours_sql()}"
        if self.order_by:
            sql += " ORDER BY " + ", ".join(f'"c{i}" {d} NULLS LAST' for i, d in self.order_by)
        if self.limit is not None:
            sql += f" LIMIT {self.limit}"
        return sql

    def describe(self):
        return json.dumps(self.body(), ensure_ascii=False)


def _json_value(e):
    """The JSON form of a literal E (as rAPId's conditions take them)."""
    text = e.ours
    if e.kind == "string":
        return text[1:-1].replace("''", "'")
    if e.kind == "date":
        return text[len("DATE '"):-1]
    if e.kind == "bool":
        return text == "TRUE"
    return json.loads(text)


def literal_for_json(gen, kind):
    e = gen.literal(kind)
    if kind == "date":  # a date condition's value is the date as text
        e = lit("string", e.ours[len("DATE '"):-1])
        e.duck = f"DATE {e.duck}"
    e.json = _json_value(e)
    return e


def json_group(gen, depth, columns):
    """A JSON filter group over `columns` (names or calls, as E)."""
    r = gen.r
    conds = []
    for _ in range(r.randrange(1, 4)):
        column = r.choice(columns)
        kind = column.kind if column.kind in ("int", "double", "string", "date", "bool") else "int"
        ops = [o for o in JSON_OPS if kind == "string" or "LIKE" not in o]
        op = r.choice(ops)
        if op in ("IS NULL", "IS NOT NULL"):
            value = None
        elif op in ("IN", "NOT IN"):
            value = [literal_for_json(gen, kind) for _ in range(r.randrange(1, 4))]
        elif "LIKE" in op:
            value = gen.like_pattern()
            value.json = _json_value(value)
        else:
            value = literal_for_json(gen, kind)
        conds.append(Cond(column, op, value))
    groups = [json_group(gen, depth - 1, columns)] if depth > 0 and gen.chance(0.3) else []
    logic = r.choice(["AND", "OR"]) if len(conds) + len(groups) > 1 else (r.choice([None, "AND", "OR"]))
    return Group(logic, conds, groups)


def random_query(gen: Gen):
    r = gen.r
    aggregate = gen.chance(0.45)
    q = Query(select=[], fmt=r.choice(FORMATS))
    if aggregate:
        q.group_by = r.sample(["region", "yr", "cat", "day", "flag", "qty"], r.randrange(0, 3))
        q.select = [Item(col(c)) for c in q.group_by]
        for _ in range(r.randrange(1, 4)):
            q.select.append(Item(gen.aggregate(r.randrange(0, 3))))
    else:
        for _ in range(r.randrange(1, 5)):
            kind = r.choice(["int", "int", "double", "string", "string", "date", "bool", "ts"])
            q.select.append(Item(gen.expr(kind, r.randrange(0, 3))))
    for i, it in enumerate(q.select):
        if not it.expr.fixed and gen.chance(0.4):
            it.alias = f"c{i}"
    _dedupe_names(q)
    if gen.chance(0.7):
        if gen.chance(0.35):
            calls = [col(c) for c in COLUMN_TYPES] + [gen.expr(k, 1) for k in ("string", "int") if gen.chance(0.5)]
            calls = [c for c in calls if c.ours in COLUMN_TYPES or re.match(r"^[A-Za-z_]+\(", c.ours)]
            q.filter = json_group(gen, 1, calls)
        else:
            q.filter = gen.expr("bool", r.randrange(1, 4))
    if aggregate and gen.chance(0.4):
        aggs = [it.expr for it in q.select if it.expr.agg]
        if gen.chance(0.3):
            q.having = json_group(gen, 0, aggs or [gen.aggregate(0)])
        else:
            q.having = gen.having(aggs, q.group_by, r.randrange(0, 3))
    # A literal in ORDER BY would mean a column position in SQL: order by anything else.
    sortable = [i for i, it in enumerate(q.select) if not (it.expr.fixed and it.expr.ours not in COLUMN_TYPES)]
    if sortable and gen.chance(0.6):
        idx = r.sample(sortable, r.randrange(1, min(3, len(sortable)) + 1))
        q.order_by = [(i, r.choice(["ASC", "DESC"])) for i in idx]
    if gen.chance(0.4):
        q.limit = r.choice([0, 1, 3, 10, 50])
    return q


def _dedupe_names(q):
    """Result column names must be distinct: alias repeats."""
    seen = set()
    for i, it in enumerate(q.select):
        name = it.alias or it.expr.ours
        if name in seen:
            it.alias = f"c{i}"
        seen.add(it.alias or it.expr.ours)


def shrink_candidates(q: Query):
    """Smaller variants of `q`, most aggressive first."""
    out = []

    def variant(**changes):
        v = copy.deepcopy(q)
        for k, val in changes.items():
            setattr(v, k, val)
        out.append(v)

    if q.fmt != "json":
        variant(fmt="json")
    if q.limit is not None:
        variant(limit=None)
    if q.order_by:
        variant(order_by=[])
    if q.having is not None:
        variant(having=None)
    if q.filter is not None:
        variant(filter=None)
        if isinstance(q.filter, E):
            for k in q.filter.kids:
                if k.kind == "bool":
                    variant(filter=k)
        else:
            for c in q.filter.conds:
                variant(filter=type(q.filter)(None, [c]))
    if len(q.select) > 1:
        for i in range(len(q.select)):
            if q.select[i].expr.agg or not q.group_by or q.select[i].expr.ours not in q.group_by:
                v = copy.deepcopy(q)
                del v.select[i]
                v.order_by = [(j - (j > i), d) for j, d in v.order_by if j != i]
                out.append(v)
    for i, it in enumerate(q.select):
        for k in it.expr.kids:
            if k.kind == it.expr.kind and k.agg == it.expr.agg:
                v = copy.deepcopy(q)
                v.select[i] = Item(k, it.alias or f"c{i}")
                out.append(v)
    return out

