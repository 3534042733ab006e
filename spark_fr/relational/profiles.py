"""The Spark engine's profiles of the tables whose attributes are aggregated: what planning must know first.

Sketch
------
A table's :class:`~spark_fr.relational.plan.Profile` is its rows and the largest ``|x|`` of its numeric and date
attributes (its pass, :func:`spark_fr.relational.checks.table_pass`) and, per nominal attribute, its ``k``
most frequent non-missing values (ties broken by the smaller value) and its sorted domain when it has at most
``DOMAIN_LIMIT`` values.

* :func:`nominal_values`: the nominal part in one small Spark job: each row's (attribute, value) pairs are
  exploded and counted per pair (partial counts before the shuffle: the shuffle carries pairs, not rows),
  a window ranks the values of each attribute (count descending, then value ascending) and counts them, and
  the first ``max(k, DOMAIN_LIMIT)`` of each attribute are collected.
* :func:`fused_pass`: a table with nominal attributes whose keys no join reads (nothing points at it and it is
  not the target: typically the fact table, the largest) gets its pass and its nominal values from **one**
  scan instead of two. Every row has exactly one pair of the first nominal attribute (``a = 0``, its value
  possibly missing), so the pair counts of ``a = 0`` also carry the pass's measures: per pair, the rows, the
  foreign keys with and without a parent row, the largest ``|x|`` of each value; a window sums them (largest:
  takes the maximum) over the attribute's pairs, and every collected row holds the table's totals. Missing
  values form a pair of their own here (they count as rows) and are ranked last, never as a frequent value.

Both give the same results as the separate jobs (checked in ``tests/test_relational_profiles.py``).
"""
from __future__ import annotations

from pyspark.sql import functions as F
from pyspark.sql.window import Window

from .checks import TablePass, key_value, with_parents
from .plan import DOMAIN_LIMIT


def nominal_values(frame, nominal: list, k: int) -> tuple:
    """The frequent values and domains of the nominal attributes of a table, in one small Spark job.

    Parameters
    ----------
    frame : pyspark.sql.DataFrame
        The table (its prepared frame: nominal values as strings).
    nominal : list of (str, str)
        (attribute, its column of ``frame``) per nominal attribute.
    k : int
        Frequent values per attribute (``frequent_values`` of the schema).

    Returns
    -------
    tuple
        ({attribute: its k most frequent non-missing values}, {attribute: its sorted distinct non-missing values,
        or None when there are more than DOMAIN_LIMIT}); two empty dicts without nominal attributes (no job).
    """
    if not nominal:
        return {}, {}
    counts = (frame.select(_pairs([F.col(c) for _, c in nominal])).select("s.a", "s.v")
              .where(F.col("v").isNotNull()).groupBy("a", "v").count())
    return _read([a for a, _ in nominal], _ranked(counts, k).collect(), k)


def fused_pass(schema, name: str, frames: dict, plan: dict, links=(), values=(), nominal=(),
               k: int = 0) -> tuple:
    """:func:`spark_fr.relational.checks.table_pass` (without key checks) and :func:`nominal_values` of table
    ``name`` from one scan (see the module sketch).

    Parameters
    ----------
    schema : RelationalSchema
    name : str
    frames : dict
        {table: DataFrame} as loaded.
    plan : dict
        :func:`spark_fr.relational.keys.key_plan`.
    links : sequence of ForeignKey
        The foreign keys whose dangling values are counted.
    values : sequence of (str, Column)
        The values whose largest ``|x|`` is measured (columns of the table's frame).
    nominal : sequence of (str, Column)
        At least one (attribute, its values as strings) (columns of the table's frame).
    k : int
        Frequent values per attribute.

    Returns
    -------
    tuple
        (:class:`~spark_fr.relational.checks.TablePass` with no keys, (frequent, domains) as
        :func:`nominal_values`).
    """
    if not nominal:
        raise ValueError("fused_pass needs a nominal attribute")
    df = frames[name]
    cols = [key_value(df, fk.column, plan.get((name, fk.column))).alias(f"__f{i}") for i, fk in enumerate(links)]
    cols += [v.alias(f"__a{j}") for j, (_, v) in enumerate(values)]
    cols += [c.alias(f"__n{i}") for i, (_, c) in enumerate(nominal)]
    rows = with_parents(df.select(*cols), schema, frames, plan, links)
    pairs = rows.select(_pairs([F.col(f"__n{i}") for i in range(len(nominal))]), *[
        c for c in rows.columns if not c.startswith("__n")]).select("s.a", "s.v", *[
            c for c in rows.columns if not c.startswith("__n")])
    first = F.col("a") == 0  # each row's one pair of the first attribute carries its measures
    aggs = [F.count(F.lit(1)).alias("count")]
    for i in range(len(links)):
        fk = F.col(f"__f{i}")
        aggs += [F.count(F.when(first & fk.isNotNull(), 1)).alias(f"l{i}"),
                 F.count(F.when(first & fk.isNotNull() & F.col(f"__p{i}").isNull(), 1)).alias(f"m{i}")]
    aggs += [F.max(F.when(first, F.abs(F.col(f"__a{j}")))).alias(f"x{j}") for j in range(len(values))]
    counts = pairs.groupBy("a", "v").agg(*aggs)
    whole = Window.partitionBy("a")
    totals = [F.sum("count").over(whole).alias("t_rows")]
    totals += [F.sum(f"{m}{i}").over(whole).alias(f"t_{m}{i}") for i in range(len(links)) for m in ("l", "m")]
    totals += [F.max(f"x{j}").over(whole).alias(f"t_x{j}") for j in range(len(values))]
    got = _ranked(counts.select("a", "v", "count", *totals), k).collect()
    head = next((r for r in got if r["a"] == 0), None)  # None: the table has no rows
    passed = TablePass(
        int(head["t_rows"]) if head else 0, {},
        {fk.column: (int(head[f"t_l{i}"]), int(head[f"t_m{i}"])) if head else (0, 0) for i, fk in enumerate(links)},
        {v: None if head is None or head[f"t_x{j}"] is None else float(head[f"t_x{j}"])
         for j, (v, _) in enumerate(values)})
    return passed, _read([a for a, _ in nominal], got, k)


def _pairs(columns: list):
    """Each row's (attribute index ``a``, value ``v``) pairs, one per column, as the struct column ``s``."""
    return F.explode(F.array(*[F.struct(F.lit(i).alias("a"), c.alias("v")) for i, c in enumerate(columns)])).alias("s")


def _ranked(counts, k: int):
    """The pair counts ``(a, v, count, ...)`` ranked per attribute (``r``: count descending, then value
    ascending, a missing value last) with the attribute's distinct non-missing values (``d``), the first
    ``max(k, DOMAIN_LIMIT)`` of each attribute kept."""
    whole = Window.partitionBy("a")
    rank = F.row_number().over(whole.orderBy(F.col("v").isNull(), F.col("count").desc(), F.col("v").asc()))
    return (counts.withColumn("r", rank).withColumn("d", F.count(F.col("v")).over(whole))
            .where(F.col("r") <= max(k, DOMAIN_LIMIT)))


def _read(names: list, rows: list, k: int) -> tuple:
    """(frequent, domains) of the attributes ``names`` (by index ``a``) from the collected :func:`_ranked` rows."""
    frequent = {a: [] for a in names}
    seen = {a: [] for a in names}
    many = set()
    for row in sorted(rows, key=lambda r: (r["a"], r["r"])):
        attr = names[row["a"]]
        if row["d"] > DOMAIN_LIMIT:
            many.add(attr)
        if row["v"] is None:
            continue
        if row["r"] <= k:
            frequent[attr].append(row["v"])
        seen[attr].append(row["v"])
    domains = {a: None if a in many else tuple(sorted(seen[a])) for a in names}
    return (frequent if k > 0 else {a: [] for a in names}), domains
