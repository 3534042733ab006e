"""A table as the local relational engine holds it in the driver, and what it refuses.

A :class:`LocalTable` holds one numpy array per column and the Spark type each column would read as
(``'double'``, ``'long'``, ``'date'``, ``'string'``, ``'boolean'``): numbers as float64 with NaN for null
(integer columns without nulls stay int64), dates as ``datetime64[D]`` with NaT, strings and booleans
(``'true'`` / ``'false'``, Spark's cast) as object arrays with None. The readers
(:mod:`spark_fr.relational.local_csv`, :mod:`spark_fr.relational.local_arrow`) make them; an input whose Spark
result they cannot reproduce exactly raises :class:`Unsupported`, and the engine choice keeps Spark.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

#: integers up to this magnitude are exact as doubles (the engine's numeric values)
EXACT_INTEGER = 2 ** 53


class Unsupported(Exception):
    """The local engine cannot reproduce the Spark result exactly for this input."""


class LocalTable:
    """A table read in the driver: ``columns`` {name: numpy array} (see the module's notes), ``types``
    {name: Spark type}, ``rows``; ``dictionaries`` {string column: (indices, dictionary)}, the reader's
    dictionary of a string column when it has one (``dictionary[indices]`` is the column), so that the engine
    factorizes its few values rather than its rows."""

    def __init__(self, columns: dict, types: dict, rows: int, dictionaries: dict | None = None):
        self.columns = columns
        self.types = types
        self.rows = rows
        self.dictionaries = dictionaries or {}


def missing(a: np.ndarray) -> np.ndarray:
    """The null mask of a column of a :class:`LocalTable`."""
    if a.dtype.kind == "f":
        return np.isnan(a)
    if a.dtype.kind == "M":
        return np.isnat(a)
    if a.dtype == object:
        return pd.isna(a)
    return np.zeros(len(a), bool)
