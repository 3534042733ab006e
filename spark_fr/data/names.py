"""Column names given twice in one input: refused, or the repeats renamed (``--duplicate-names``).

Sketch
------
Every reader hands the names its input declares, in order, to :func:`deduplicate` (ARFF attributes, a CSV
header, a Parquet file's columns, a DataFrame's columns, the names of a vector column's elements):

    for each name, in order:
        first occurrence                      -> kept as it is
        k-th occurrence (k >= 2), 'error'     -> InputError naming the input, the name and both positions
        k-th occurrence (k >= 2), 'rename'    -> NAME__k, or NAME__(k+1), ... : the first of these that is no
                                                 name of the input and was not given to an earlier repeat

Decisions
---------
* The numbering is pandas' (``x``, then ``x__2`` for the second occurrence, ``x__3`` for the third), with a
  double underscore, which the column names of benchmark files rarely hold; a name the input already has
  is never taken (the number goes up instead), so no column ends up under another column's name.
* The first occurrence keeps its name: ``--targets x`` and a Mulan label ``x`` name the first one.
* Names are compared as the reader's consumer compares them: without case for what Spark resolves by name
  (CSV headers, Parquet files, DataFrames, under ``spark.sql.caseSensitive=false``), exactly for ARFF
  attributes and vector elements (reached by position).
* The reader collects the renamings and says them in ONE warning line (:func:`renamed_warning`), which the
  run's record keeps too (``run.json``: ``renamed_columns``).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError

#: the values of ``--duplicate-names``
POLICIES = ("error", "rename")
#: an error that does not offer renaming, for callers that refer to columns by name (relational schemas)
REFUSE = "refuse"
#: between a repeated name and its occurrence number
SEPARATOR = "__"


@dataclass(frozen=True)
class Renamed:
    """One repeat of a name and the name it was given.

    Attributes
    ----------
    name : str
        The name as the input writes it at the repeat.
    new_name : str
    first, position : int
        0-based positions of the name's first occurrence and of this repeat.
    unit : str
        What a position counts ('column', 'attribute', 'element of the vector column v').
    """

    name: str
    new_name: str
    first: int
    position: int
    unit: str = "column"

    def shown(self) -> str:
        return f"'{self.name}' ({self.unit} {self.position + 1}) -> '{self.new_name}'"


def check_policy(policy: str) -> str:
    """``policy`` if it is one of :data:`POLICIES`, else a one-line error."""
    if policy not in POLICIES + (REFUSE,):
        raise InputError(f"--duplicate-names must be one of {', '.join(POLICIES)}, not {policy!r}")
    return policy


def deduplicate(names, policy: str = "error", *, source: str, unit: str = "column", case_sensitive: bool = True,
                detail=None) -> tuple:
    """The names of an input with every repeat renamed, or an error at the first repeat.

    Parameters
    ----------
    names : sequence of str
        The names in input order.
    policy : {'error', 'rename', 'refuse'}
        'refuse' is 'error' without the hint to rename (:data:`REFUSE`).
    source : str or callable
        How messages name the input (a file, ``FILE line N``, 'DataFrame'), or ``source(position)`` for the
        position of the repeat (e.g. the line an ARFF attribute is declared on).
    unit : str
        What a position counts, in messages ('column', 'attribute').
    case_sensitive : bool
        Compare names exactly (else without case, as Spark does by default).
    detail : callable, optional
        ``detail(first, position)`` -> extra text for the error (e.g. the lines of two ARFF attributes).

    Returns
    -------
    names : list of str
        Unique names (equal to ``names`` when nothing repeats).
    renamed : list of Renamed

    Raises
    ------
    InputError
        ``policy`` is 'error' and a name repeats (naming the input, the name, both positions and the
        ``--duplicate-names rename`` that reads it).
    """
    check_policy(policy)
    names = list(names)

    def key(name: str) -> str:
        return name if case_sensitive else name.lower()

    first: dict = {}
    for i, name in enumerate(names):
        first.setdefault(key(name), i)
    if len(first) == len(names):
        return names, []
    taken = set(first)
    count: dict = {}
    out, renamed = [], []
    for i, name in enumerate(names):
        k = key(name)
        count[k] = count.get(k, 0) + 1
        if count[k] == 1:
            out.append(name)
            continue
        number = count[k]
        while key(f"{name}{SEPARATOR}{number}") in taken:
            number += 1
        new = f"{name}{SEPARATOR}{number}"
        if policy != "rename":
            raise duplicate_error(source(i) if callable(source) else source, unit, names[first[k]], name, first[k], i,
                                  new if policy == "error" else None, detail(first[k], i) if detail else "")
        taken.add(key(new))
        out.append(new)
        renamed.append(Renamed(name, new, first[k], i, unit))
    return out, renamed


def duplicate_error(source: str, unit: str, first_name: str, name: str, first: int, position: int,
                    new_name: str | None, detail: str = "") -> InputError:
    """The one-line error for ``name`` at ``position`` repeating ``first_name`` at ``first`` (0-based); it offers
    ``--duplicate-names rename`` (the repeat's ``new_name``), or without ``new_name`` says to rename the source."""
    also = "" if first_name == name else f" (as '{first_name}': Spark compares column names without case)"
    remedy = (f"pass --duplicate-names rename to read the repeat as '{new_name}'" if new_name else
              "the schema refers to columns by name: rename one of them in the source")
    return InputError(f"{source}: duplicate {unit} name '{name}' ({unit}s {first + 1} and {position + 1}"
                      f"{detail}){also}; {remedy}")


def renamed_warning(source: str, renamed) -> str | None:
    """The one warning line of an input's renamings (each distinct renaming once, in order), or None."""
    seen, shown = set(), []
    for r in renamed:
        if (r.name, r.new_name) not in seen:
            seen.add((r.name, r.new_name))
            shown.append(r.shown())
    if not shown:
        return None
    more = f", ... ({len(shown)} in all)" if len(shown) > 20 else ""
    return (f"{source}: names given twice, renamed (--duplicate-names rename): " + ", ".join(shown[:20]) + more)


def rename_frame(df, policy: str, source: str, case_sensitive: bool = False) -> tuple:
    """A DataFrame whose columns repeat a name, with the repeats renamed by position (``toDF``), or an error.

    Returns
    -------
    df : DataFrame
        ``df`` itself when its names are unique.
    renamed : list of Renamed
    """
    names, renamed = deduplicate(df.columns, policy, source=source, case_sensitive=case_sensitive)
    return (df.toDF(*names) if renamed else df), renamed
