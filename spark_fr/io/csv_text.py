"""A pandas frame's CSV text, exactly as ``DataFrame.to_csv(index=False)`` writes it, without pandas' row loop.

Sketch
------
``to_csv`` converts every column to strings (numbers with NumPy's ``astype(str)``, missing values as the empty
string, other objects with ``str``) and hands the rows to Python's :mod:`csv` writer (minimal quoting, quotes
doubled, ``os.linesep`` between rows). A ranking of a wide table has 40,000 rows that repeat an 800-character
``params`` field: the writer scans and quotes it 40,000 times, and pandas' chunked row loop around it costs as
much again (0.7-0.9 s). Here each column is converted the same way, a column with a character that needs quoting
(``,``, ``"``, CR, LF) is quoted by the :mod:`csv` module itself once per distinct value, and the rows are joined as
strings. Frames this does not cover exactly (a single column, non-string column names, dates, categories and
other extension types) are written by pandas.
"""
from __future__ import annotations

import csv
import io
import os
import re
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # the annotations' pandas (imported where used: 0.3-0.4 s)
    import pandas as pd

_NEEDS_QUOTES = re.compile(r'[,"\r\n]')


def _strings(column: pd.Series) -> list | None:
    """The strings ``to_csv`` writes for a column (missing: ''), or None for a dtype it formats otherwise."""
    if not isinstance(column.dtype, np.dtype):  # categories, nullable integers, ...: pandas' own formatting
        return None
    v = column.to_numpy()
    if v.dtype.kind == "f":
        out = v.astype(str).astype(object)
        out[np.isnan(v)] = ""
        return out.tolist()
    if v.dtype.kind in "iub":
        return v.astype(str).tolist()
    if v.dtype != object:
        return None
    import pandas as pd

    missing = pd.isna(v)
    return ["" if m else x if isinstance(x, str) else str(x) for x, m in zip(v.tolist(), missing.tolist())]


def _quoted(values: list, linesep: str) -> list:
    """The values as the :mod:`csv` writer writes them among other fields of a row, once per distinct value."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator=linesep)
    cache = {}
    out = []
    for v in values:
        q = cache.get(v)
        if q is None:
            buffer.seek(0)
            buffer.truncate()
            writer.writerow([v, ""])  # v, then an empty last field: ',' and the line separator after it
            q = cache[v] = buffer.getvalue()[:-(len(linesep) + 1)]
        out.append(q)
    return out


def frame_csv(df: pd.DataFrame) -> str:
    """``df.to_csv(index=False)``: the same text (module sketch).

    Parameters
    ----------
    df : pandas.DataFrame

    Returns
    -------
    str
    """
    names = list(df.columns)
    columns = [_strings(df.iloc[:, j]) for j in range(len(names))] if len(names) > 1 else [None]
    if any(c is None for c in columns) or not all(isinstance(n, str) for n in names) or df.columns.has_duplicates:
        return df.to_csv(index=False)
    linesep = os.linesep
    header = io.StringIO()
    csv.writer(header, lineterminator=linesep).writerow(names)
    columns = [_quoted(c, linesep) if _NEEDS_QUOTES.search("\x00".join(c)) else c for c in columns]
    body = linesep.join(map(",".join, zip(*columns)))
    return header.getvalue() + body + (linesep if body or len(df) else "")


def write_frame_csv(df: pd.DataFrame, path: str) -> None:
    """Write ``df.to_csv(path, index=False)``'s bytes (UTF-8) through :func:`frame_csv`."""
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(frame_csv(df))
