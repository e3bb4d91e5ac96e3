"""Typed expression trees with two renderings: the text our service takes (rAPId's query body)
and the SQL DuckDB runs for the same meaning. Types: int, double, string, date, bool, ts."""
import random

from data import BIG, SPECIAL_DATES, STRINGS

NUMERIC = ("int", "double")
DATE_PARTS = ["year", "month", "day", "quarter", "dow", "doy", "week"]
TRUNC_PARTS = ["year", "quarter", "month", "week", "day"]
COLUMN_TYPES = {"region": "string", "yr": "int", "id": "int", "qty": "int", "big": "int",
                "price": "double", "cat": "string", "day": "date", "flag": "bool"}


class E:
    """A node: `kind` (its type), `ours`/`duck` renderings, `kids` (for shrinking), `agg`."""

    def __init__(self, kind, ours, duck, kids=(), agg=False, fixed=False):
        self.kind, self.ours, self.duck, self.kids = kind, ours, duck, list(kids)
        self.agg = agg or any(k.agg for k in kids)
        self.fixed = fixed  # a literal or a column: nothing to shrink

    def __repr__(self):
        return self.ours


def col(name):
    return E(COLUMN_TYPES[name], name, name, fixed=True)


def lit(kind, value):
    if kind == "int":
        return E(kind, str(value), str(value), fixed=True)
    if kind == "double":
        return E(kind, repr(float(value)), f"CAST({float(value)!r} AS DOUBLE)", fixed=True)
    if kind == "string":
        q = "'" + value.replace("'", "''") + "'"
        return E(kind, q, q, fixed=True)
    if kind == "date":
        return E(kind, f"DATE '{value}'", f"DATE '{value}'", fixed=True)
    if kind == "bool":
        return E(kind, "TRUE" if value else "FALSE", "TRUE" if value else "FALSE", fixed=True)
    raise ValueError(kind)


def call(kind, name, args, duck_name=None, agg=False, distinct=False):
    d = "DISTINCT " if distinct else ""
    ours = f"{name}({d}{', '.join(a.ours for a in args)})"
    duck = f"{duck_name or name}({d}{', '.join(a.duck for a in args)})"
    return E(kind, ours, duck, args, agg=agg)


def binary(kind, left, op, right, duck_op=None):
    return E(kind, f"({left.ours} {op} {right.ours})", f"({left.duck} {duck_op or op} {right.duck})",
             [left, right])


class Gen:
    def __init__(self, rng: random.Random):
        self.r = rng
        # Without int64 extremes: for float aggregates, whose last digits depend on the order of
        # addition (both engines are right to within rounding of the inputs' magnitude).
        self.moderate = False

    def chance(self, p):
        return self.r.random() < p

    def literal(self, kind):
        r = self.r
        if kind == "int":
            extreme = r.choice(BIG[:1] + BIG[2:]) if not self.moderate else 5
            return lit("int", r.choice([0, 1, -1, 2, 3, 7, 100, r.randrange(-1000, 1000), extreme]))
        if kind == "double":
            return lit("double", r.choice([0.0, 0.5, -1.25, 2.0, r.randrange(-8000, 8000) / 8]))
        if kind == "string":
            return lit("string", r.choice(STRINGS))
        if kind == "date":
            return lit("date", r.choice(SPECIAL_DATES))
        return lit("bool", self.chance(0.5))

    def column(self, kind):
        names = [n for n, k in COLUMN_TYPES.items() if k == kind and not (self.moderate and n == "big")]
        return col(self.r.choice(names)) if names else self.literal(kind)

    def leaf(self, kind):
        return self.column(kind) if self.chance(0.75) else self.literal(kind)

    def expr(self, kind, depth):
        """A scalar (row-level) expression of `kind`."""
        if depth <= 0 or self.chance(0.35):
            return self.leaf(kind)
        return getattr(self, "_" + kind)(depth - 1)

    def _int(self, d):
        r, e = self.r, self.expr
        choice = r.randrange(10)
        if choice == 0:
            return binary("int", e("int", d), r.choice(["+", "-", "*"]), self.small_int())
        if choice == 1:
            k = r.choice([2, 3, -3, 7])
            op = r.choice(["/", "%"])
            return binary("int", e("int", d), op, lit("int", k), duck_op="//" if op == "/" else "%")
        if choice == 2:
            return self.negate(e("int", d))
        if choice == 3:
            return call("int", "abs", [self.leaf("int")])
        if choice == 4:
            return call("int", r.choice(["length", "char_length"]), [e("string", d)])
        if choice == 5:
            return call("int", "date_part", [lit("string", r.choice(DATE_PARTS)), e("date", d)])
        if choice == 6:
            return call("int", "coalesce", [e("int", d), self.small_int()])
        return binary("int", e("int", d), r.choice(["+", "-"]), e("int", d))

    def small_int(self):
        return lit("int", self.r.choice([0, 1, 2, -1, 10, 1000]))

    def negate(self, x):
        return E(x.kind, f"-({x.ours})", f"-({x.duck})", [x])

    def _double(self, d):
        r, e = self.r, self.expr
        choice = r.randrange(8)
        if choice == 0:
            return binary("double", e("double", d), r.choice(["+", "-", "*"]), self.literal("double"))
        if choice == 1:
            return binary("double", e(r.choice(NUMERIC), d), "/", lit("double", r.choice([2.0, -4.0, 0.5, 3.0])))
        if choice == 2:
            return call("double", r.choice(["floor", "ceil", "abs"]), [e("double", d)])
        if choice == 3:
            return call("double", "round", [e("double", d)] + ([lit("int", r.choice([0, 1, 2]))] if self.chance(0.5) else []))
        if choice == 4:
            return call("double", "coalesce", [e("double", d), self.literal("double")])
        if choice == 5:
            return binary("double", e("int", d), "*", lit("double", 0.5))
        return binary("double", e("double", d), r.choice(["+", "-"]), e("double", d))

    def _string(self, d):
        r, e = self.r, self.expr
        choice = r.randrange(9)
        if choice == 0:
            return call("string", r.choice(["lower", "upper"]), [e("string", d)])
        if choice == 1:
            return call("string", r.choice(["trim", "ltrim", "rtrim"]), [e("string", d)])
        if choice == 2:
            return call("string", "substr", [e("string", d), lit("int", r.randrange(1, 4)), lit("int", r.randrange(0, 4))])
        if choice == 3:
            start = lit("int", r.randrange(1, 4))
            x = e("string", d)
            if self.chance(0.5):
                return call("string", "substring", [x, start])
            n = r.randrange(0, 4)
            return E("string", f"SUBSTRING({x.ours} FROM {start.ours} FOR {n})",
                     f"SUBSTRING({x.duck} FROM {start.duck} FOR {n})", [x])
        if choice == 4:
            other = e(r.choice(["string", "int", "date", "bool"]), d)
            return call("string", "concat", [e("string", d), other])
        if choice == 5:
            return binary("string", e("string", d), "||", e("string", d))
        if choice == 6:
            return call("string", "coalesce", [e("string", d), self.literal("string")])
        return self.leaf("string")

    def _date(self, d):
        return call("date", "coalesce", [self.expr("date", d), self.literal("date")])

    def _ts(self, d):
        return call("ts", "date_trunc", [lit("string", self.r.choice(TRUNC_PARTS)), self.expr("date", d)])

    def _bool(self, d):
        r, e = self.r, self.expr
        choice = r.randrange(12)
        kind = r.choice(["int", "int", "double", "string", "date", "bool"])
        if choice <= 2:
            op = r.choice(["=", "!=", "<", "<=", ">", ">="])
            return binary("bool", e(kind, d), op, e(kind, d))
        if choice == 3:
            items = [self.literal(kind) for _ in range(r.randrange(1, 4))]
            neg = " NOT" if self.chance(0.4) else ""
            x = e(kind, d)
            return E("bool", f"({x.ours}{neg} IN ({', '.join(i.ours for i in items)}))",
                     f"({x.duck}{neg} IN ({', '.join(i.duck for i in items)}))", [x])
        if choice == 4:
            x, lo, hi = e(kind, d), self.literal(kind), self.literal(kind)
            return E("bool", f"({x.ours} BETWEEN {lo.ours} AND {hi.ours})",
                     f"({x.duck} BETWEEN {lo.duck} AND {hi.duck})", [x])
        if choice == 5:
            x = e("string", d)
            pattern = self.like_pattern()
            op = r.choice(["LIKE", "NOT LIKE", "ILIKE"])
            return E("bool", f"({x.ours} {op} {pattern.ours})", f"({x.duck} {op} {pattern.duck})", [x])
        if choice == 6:
            x = e(kind, d)
            op = r.choice(["IS NULL", "IS NOT NULL"])
            return E("bool", f"({x.ours} {op})", f"({x.duck} {op})", [x])
        if choice == 7:
            return call("bool", r.choice(["starts_with", "ends_with"]), [e("string", d), self.literal("string")])
        if choice in (8, 9):
            return binary("bool", e("bool", d), r.choice(["AND", "OR"]), e("bool", d))
        if choice == 10:
            x = e("bool", d)
            return E("bool", f"(NOT {x.ours})", f"(NOT {x.duck})", [x])
        return self.leaf("bool")

    def like_pattern(self):
        base = self.r.choice([s for s in STRINGS if s]) or "a"
        i = self.r.randrange(len(base))
        piece = base[i:i + self.r.randrange(1, 3)]
        pattern = self.r.choice(["%{}%", "{}%", "%{}", "_{}%", "{}"]).format(piece)
        return lit("string", pattern)

    # Aggregates -------------------------------------------------------------------------
    def aggregate(self, depth):
        r = self.r
        choice = r.randrange(10)
        if choice == 0:
            return E("int", "count(*)", "count(*)", agg=True)
        if choice == 1:
            kind = r.choice(["int", "double", "string", "date", "bool"])
            return call("int", "count", [self.expr(kind, depth)], agg=True, distinct=self.chance(0.4))
        if choice in (2, 3):
            kind = r.choice(NUMERIC)
            name = r.choice(["sum", "avg"])
            # Integer sums and averages are exact in both engines: extremes welcome.
            arg = self.expr(kind, depth) if kind == "int" else self.moderate_expr(kind, depth)
            return call("double" if name == "avg" else kind, name, [arg], agg=True,
                        distinct=self.chance(0.15))
        if choice in (4, 5):
            kind = r.choice(["int", "double", "string", "date"])
            return call(kind, r.choice(["min", "max"]), [self.expr(kind, depth)], agg=True)
        kind = r.choice(NUMERIC)
        name = r.choice(["median", "stddev", "var"])
        duck = {"stddev": "stddev_samp", "var": "var_samp"}.get(name, name)
        return call("double", name, [self.moderate_expr(kind, depth)], duck_name=duck, agg=True)

    def moderate_expr(self, kind, depth):
        self.moderate = True
        try:
            return self.expr(kind, depth)
        finally:
            self.moderate = False

    def having(self, aggregates, group_cols, depth):
        """A boolean over aggregates (and group columns)."""
        r = self.r
        if depth <= 0 or self.chance(0.6):
            left = r.choice(aggregates + [self.aggregate(1)])
            kind = left.kind if left.kind != "ts" else "date"
            right = self.literal(kind if kind in ("int", "double", "string", "date") else "int")
            if kind == "double":
                # Computed doubles differ in their last bits between engines: compare them with
                # a literal they are unlikely to equal, not a round one they may land on.
                right = lit("double", round(r.uniform(-5, 5) * 10 ** r.randrange(0, 6), 3) + 0.000317)
            if left.kind == "int" and right.kind == "int" and self.chance(0.5):
                right = lit("int", r.choice([0, 1, 2, 5]))
            return binary("bool", left, r.choice(["=", "!=", "<", ">=", ">"]), right)
        a, b = self.having(aggregates, group_cols, depth - 1), self.having(aggregates, group_cols, depth - 1)
        if self.chance(0.3):
            return E("bool", f"(NOT {a.ours})", f"(NOT {a.duck})", [a])
        return binary("bool", a, r.choice(["AND", "OR"]), b)

