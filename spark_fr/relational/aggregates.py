"""Aggregates as Spark column expressions, for one ``groupBy`` over a hop.

The Spark engine uses them when a value of the aggregated tables may be NaN (a number to Spark); otherwise a hop
runs the local engine's kernels per partition (:mod:`spark_fr.relational.partition_hop`), with the same
semantics and bits (``tests/relational/test_relational_executors.py``, ``tests/relational/test_relational_partition_hop.py``).

Semantics (thesis 7.1, with the decisions of spark_fr):

* ``count``: the number of related rows (the value is not read); ``count_distinct``: distinct non-missing
  values. Both are *count-like*: over an empty group they are 0.
* ``mean``, ``min``, ``max``, ``sum``, ``std`` (sample standard deviation, missing for one value): over the
  non-missing values; missing (null) over an empty group or when every value is missing.
* ``mode``: the most frequent non-missing value, the smallest one on ties (deterministic); nominal output.
* ``share`` of a value ``w``: the fraction of the non-missing values equal to ``w``; missing over an empty
  group.
* A condition ``(C, w)`` keeps the rows whose ``C`` equals ``w``: ``count`` counts them, the others
  aggregate the attribute over them (missing when there are none).

Determinism: Spark's ``sum``, ``avg`` and ``stddev`` add doubles in the order the rows arrive, which depends
on the partitioning, so their last bits (and then the row keys hashed from the values, the bins and every
tree) would change with it. ``sum``, ``mean`` and ``std`` are therefore computed in one of two ways, both
giving the same bits for any partitioning:

* **on a grid** (:mod:`spark_fr.relational.exact`), when the value has a finite bound: exact long sums of
  the values' fixed-point limbs, native aggregates only (fast);
* **from sorted values** otherwise (infinite or NaN values): ``array_sort(collect_list(x))`` folded with
  ``aggregate`` (``std`` in two passes over the sorted values, around the mean); Spark evaluates the one
  ``collect_list`` per value column once for all three.

``mode`` and ``count_distinct`` of a nominal value whose *domain* (its table's distinct values) is small are
computed from one native count per domain value; otherwise from ``mode`` / ``collect_set``. A numeric
``count_distinct`` uses the sorted values.
"""
from __future__ import annotations

from pyspark.sql import functions as F

from . import exact as X
from .sqltext import Sql, fn, when

COUNT_LIKE = ("count", "count_distinct")
#: aggregates of :func:`aggregate` that Spark computes as object aggregates (a nominal count_distinct is a set)
OBJECT_AGGREGATES = ("mode", "count_distinct")
NOMINAL_OUTPUT = ("mode",)


def output_kind(name: str) -> str:
    """'nominal' for a mode, else 'numeric' (what the next aggregate may take)."""
    return "nominal" if name in NOMINAL_OUTPUT else "numeric"


#: aggregates computed from a group's sorted values (see the module's notes on determinism)
FROM_SORTED = ("sum", "mean", "std")


def aggregate(name: str, value, condition=None, kind: str = "numeric"):
    """The Spark aggregate ``name`` of the column ``value``, over rows where ``condition`` holds (if given), for
    the aggregates that need no sorted values (count, min, max, mode, a nominal count_distinct).

    Parameters
    ----------
    name : str
        One of count, count_distinct (of a nominal value), min, max, mode.
    value : pyspark.sql.Column
    condition : pyspark.sql.Column, optional
        Boolean column; rows where it is not true are left out.
    kind : {'numeric', 'nominal'}
        The value's kind.
    """
    if name == "count":
        one = F.lit(1)
        return F.count(one if condition is None else F.when(condition, one))
    v = value if condition is None else F.when(condition, value)
    if name == "count_distinct" and kind == "nominal":  # no DISTINCT aggregate: Spark would expand every row
        return F.size(F.collect_set(v))
    if name == "min":
        return F.min(v)
    if name == "max":
        return F.max(v)
    if name == "mode":
        try:
            return F.mode(v, True)  # ties: the smallest value
        except TypeError:  # pyspark 3.5: mode(col) alone, which breaks ties arbitrarily
            from ..errors import InputError

            raise InputError("the relational aggregate 'mode' on the Spark engine needs pyspark >= 4.0 (ties "
                             "broken by the smallest value); leave 'mode' out of the schema's aggregates or use "
                             "engine='local'") from None
    raise ValueError(f"aggregate {name!r} of a {kind} value is computed from sorted values (GroupAggregates)")


class GroupAggregates:
    """The aggregates of one ``groupBy``: native aggregates first, then projection steps that finish them.

    1. ``agg``: the plain aggregates; the limb sums of every (value, condition) computed on a grid; one count
       per domain value of every (nominal value, condition) with a known domain; one
       ``array_sort(collect_list(x))`` per (value, condition) that needs sorted values;
    2. projection steps: sums, means, standard deviations from limbs, modes and counts of distinct values
       from domain counts, and the sorted-value statistics (a std around a hidden mean column: a column inside
       the fold's lambda, not an expression, which Spark would evaluate once per element).

    Use :meth:`add` for every output column, then :meth:`apply`.
    """

    def __init__(self):
        self._plain = []  # aliased aggregate columns
        self._objects = []  # aliased object aggregates (lists, sets, Spark's mode): a groupBy of their own
        self._pre = []  # (name, row expression) computed once per row before the groupBy
        self._hidden_aggs = []  # (name, aggregate expression)
        self._keys = {}  # (what, value, condition, extra) -> hidden column name(s)
        self._steps = [[], [], []]
        self._hidden = []
        self.names = []

    def _hide(self, expr, is_object: bool = False) -> str:
        name = f"__h{len(self._hidden_aggs)}"
        self._hidden_aggs.append((name, expr))
        if is_object:
            self._objects.append(expr.alias(name))
        else:
            self._plain.append(expr.alias(name))
        self._hidden.append(name)
        return name

    def _step(self, i: int, expr, name: str, hidden: bool = False) -> None:
        while len(self._steps) <= i:
            self._steps.append([])
        self._steps[i].append(expr.alias(name))
        if hidden:
            self._hidden.append(name)

    def _condition_name(self, condition) -> str | None:
        """The name of the boolean row column of a condition (computed once per row), or None."""
        if condition is None:
            return None
        return self._once(("condition", condition), lambda: self._precompute(
            F.col(condition[0]) == F.lit(condition[1])))

    def _condition(self, condition):
        """The boolean row column of a condition, or None."""
        name = self._condition_name(condition)
        return None if name is None else F.col(name)

    def _precompute(self, expr) -> str:
        name = f"__r{len(self._pre)}"
        self._pre.append((name, expr))
        return name

    def _value(self, value: str, condition):
        v = F.col(value)
        return v if condition is None else F.when(self._condition(condition), v)

    def _once(self, key, make):
        if key not in self._keys:
            self._keys[key] = make()
        return self._keys[key]

    def _sorted(self, value: str, condition) -> str:
        return self._once(("sorted", value, condition),
                          lambda: self._hide(F.array_sort(F.collect_list(self._value(value, condition))), True))

    def _count(self, value: str, condition) -> str:
        return self._once(("count", value, condition), lambda: self._hide(F.count(self._value(value, condition))))

    def _limb_sums(self, value: str, condition, grid: int, std: bool) -> list:
        def make():
            limbs = self._once(("limbs", value, grid, std), lambda: [
                self._precompute(limb.column()) for limb in (X.std_limbs if std else X.sum_limbs)(Sql.col(value), grid)])
            cond = self._condition_name(condition)
            return [self._hide(fn("sum", Sql.col(limb) if cond is None else when(Sql.col(cond), Sql.col(limb))).column())
                    for limb in limbs]

        return self._once(("std" if std else "sum", value, condition, grid), make)

    def _domain_counts(self, value: str, condition, domain: tuple) -> list:
        v = self._value(value, condition)
        return self._once(("domain", value, condition, domain),
                          lambda: [self._hide(F.count(F.when(v == F.lit(w), 1))) for w in domain])

    def add(self, name: str, value: str | None, alias: str, condition: tuple | None = None,
            kind: str = "numeric", grid: int | None = None, domain: tuple | None = None) -> None:
        """Add output column ``alias``: aggregate ``name`` of column ``value`` (None for a row count), over the
        rows whose column ``condition[0]`` equals ``condition[1]`` (if given).

        ``grid`` (a numeric value's grid exponent, :func:`spark_fr.relational.exact.grid_exponent` of a bound
        on its magnitude) computes sum, mean and std on that grid; None uses sorted values. ``domain`` (a
        nominal value's possible values, sorted) computes mode and count_distinct from one count per value.
        """
        self.names.append(alias)
        if name in FROM_SORTED and grid is not None:
            self._add_on_grid(name, value, alias, condition, grid)
        elif name in ("mode", "count_distinct") and kind == "nominal" and domain:  # not (): no value at all
            self._add_from_domain(name, value, alias, condition, tuple(domain))
        elif name in FROM_SORTED or (name == "count_distinct" and kind != "nominal"):
            self._add_from_sorted(name, value, alias, condition)
        else:
            expr = aggregate(name, None if value is None else F.col(value), self._condition(condition), kind)
            (self._objects if name in OBJECT_AGGREGATES else self._plain).append(expr.alias(alias))

    def _add_on_grid(self, name, value, alias, condition, grid):
        if name == "std":
            sums = self._limb_sums(value, condition, grid, std=True)
            steps = X.std_steps([Sql.col(c) for c in sums], Sql.col(self._count(value, condition)), grid, alias)
            for i, step in enumerate(steps):
                for col, expr in step:
                    self._step(i, expr.column(), col)
            self._hidden.extend(X.std_hidden(alias))
            return
        words = self._once(("words", value, condition, grid), lambda: self._hidden_step(
            0, [w.column() for w in X.sum_words([Sql.col(c) for c in self._limb_sums(value, condition, grid, std=False)])]))
        ws = [Sql.col(w) for w in words]
        if name == "mean":  # from the total before its scaling back, a hidden column (the mean may need it twice)
            high = self._once(("high", value, condition, grid),
                              lambda: self._hidden_step(1, [X.sum_high(ws).column()])[0])
            self._step(2, X.mean_from_high(Sql.col(high), Sql.col(self._count(value, condition)), grid).column(),
                       alias)
        else:
            self._step(1, X.sum_from_words(ws, grid).column(), alias)

    def _hidden_step(self, i: int, exprs) -> list:
        names = []
        for expr in exprs:
            names.append(f"__w{len(self._hidden)}")
            self._step(i, expr, names[-1], hidden=True)
        return names

    def _add_from_domain(self, name, value, alias, condition, domain):
        counts = [F.col(c) for c in self._domain_counts(value, condition, domain)]
        if name == "count_distinct":
            present = [F.when(c > 0, 1).otherwise(0) for c in counts]
            total = present[0]
            for p in present[1:]:
                total = total + p
            self._step(0, total.cast("long"), alias)
            return
        size = len(domain)  # packed: count * size + (size - 1 - index): the largest count, then the smallest value
        packed = F.greatest(*[c * F.lit(size) + F.lit(size - 1 - i) for i, c in enumerate(counts)]) \
            if size > 1 else counts[0] * F.lit(1)
        index = F.lit(size - 1) - packed % F.lit(size)
        self._step(0, F.when(packed >= size, F.element_at(F.array(*[F.lit(w) for w in domain]), (index + 1).cast("int"))),
                   alias)

    def _fold(self, key, i: int, expr, name: str) -> str:
        """A hidden column ``name`` computed at step ``i`` once per ``key``: a fold over a sorted array is a
        higher-order function, which Spark evaluates element by element (no generated code) and never shares
        between two places of an expression (each place gets its own lambda variables)."""
        if key not in self._keys:
            self._keys[key] = name
            self._step(i, expr, name, hidden=True)
        return self._keys[key]

    def _add_from_sorted(self, name, value, alias, condition):
        arr = self._sorted(value, condition)
        values = F.col(arr)
        if name == "count_distinct":
            self._step(0, F.size(F.array_distinct(values)), alias)
            return
        total = F.col(self._fold(("sorted_sum", arr), 0, _fold_sum(values), f"{arr}_s"))
        if name == "sum":
            self._step(1, F.when(F.size(values) > 0, total), alias)
            return
        mean = self._fold(("sorted_mean", arr), 1, _sorted_mean(values, total), f"{arr}_m")
        if name == "mean":
            self._step(2, F.col(mean), alias)
            return
        squares = F.col(self._fold(("sorted_squares", arr), 2, _fold_squares(values, F.col(mean)), f"{arr}_q"))
        self._step(3, _std_around(values, F.col(mean), squares), alias)

    def add_expression(self, expr, alias: str) -> None:
        """Add a ready aggregate expression (e.g. :func:`share`) as output column ``alias``."""
        self.names.append(alias)
        self._plain.append(expr.alias(alias))  # native (shares)

    def add_share(self, value: str, level: str, alias: str) -> None:
        """Add output column ``alias``: the :func:`share` of ``level`` among the values of column ``value``."""
        self.add_expression(share(F.col(value), level), alias)

    def apply(self, frame, key):
        """``frame`` grouped by the column ``key`` (a Column, aliased): the key and the added columns.

        Object aggregates (per-group lists and sets, Spark's ``mode``) turn a whole ``groupBy`` into a slow
        object aggregate: when there are native ones too, each kind gets its own ``groupBy`` and the two are
        joined on the key (every group has rows, so both have the same keys)."""
        if self._pre:
            frame = frame.select("*", *[e.alias(n) for n, e in self._pre])
        if self._plain and self._objects:
            native = frame.groupBy(key).agg(*self._plain)
            name = native.columns[0]
            out = native.join(frame.groupBy(key).agg(*self._objects), name)
        else:
            out = frame.groupBy(key).agg(*self._plain, *self._objects)
        for step in self._steps:
            if step:
                out = out.select("*", *step)
        return out.drop(*self._hidden)

    def __bool__(self) -> bool:
        return bool(self.names)


def _fold_sum(values):
    """The sum of an array of doubles, added in array order from 0.0 (0.0 for an empty array)."""
    return F.aggregate(values, F.lit(0.0).cast("double"), lambda acc, x: acc + x)


def _infinite(x):
    return F.abs(x) == F.lit(float("inf"))


def _sorted_mean(values, total):
    """The mean of an array of doubles from its sum in array order (``total``, a column of :func:`_fold_sum`); when
    that sum overflows, from the sum of the values times 2^-RESCUE_BITS (:data:`spark_fr.relational.exact.RESCUE_BITS`,
    folded only then); null for an empty array."""
    down = F.lit(2.0 ** -X.RESCUE_BITS)
    rescued = F.aggregate(values, F.lit(0.0).cast("double"), lambda acc, x: acc + x * down) / F.size(values) \
        * F.lit(2.0 ** X.RESCUE_BITS)
    return F.when(F.size(values) > 0, F.when(_infinite(total), rescued).otherwise(total / F.size(values)))


def _fold_squares(values, mean):
    """The sum of the squared deviations of an array's values from ``mean`` (a column), in array order."""
    return F.aggregate(values, F.lit(0.0).cast("double"), lambda acc, x: acc + (x - mean) * (x - mean))


def _std_around(values, mean, squares):
    """Sample standard deviation of a sorted array from its mean and its squared deviations (``squares``, a column
    of :func:`_fold_squares`): null below two values; when ``squares`` overflows, from the values and the mean
    times 2^-RESCUE_BITS (folded only then), scaled back."""
    down = F.lit(2.0 ** -X.RESCUE_BITS)
    scaled = F.aggregate(values, F.lit(0.0).cast("double"),
                         lambda acc, x: acc + (x * down - mean * down) * (x * down - mean * down))
    std = F.when(_infinite(squares), F.sqrt(scaled / (F.size(values) - 1)) * F.lit(2.0 ** X.RESCUE_BITS)) \
        .otherwise(F.sqrt(squares / (F.size(values) - 1)))
    return F.when(F.size(values) > 1, std)


def share(value, level: str):
    """Share of ``level`` among the non-missing values of ``value`` (null when there are none)."""
    return F.avg(F.when(value.isNotNull(), (value == F.lit(level)).cast("double")))
