"""Grouping data lines into runs of one kind, so that each run can take its fastest path.

Sketch
------
* Blank lines and lines whose first non-blank character is ``%`` are dropped (a ``%`` elsewhere is
  an ordinary character).
* Every other line is stripped and classified: ``QUOTED`` (it has a quote character: the quoting
  tokenizer), else ``SPARSE`` (it opens with ``{``) or ``CSV`` (dense).
* Consecutive lines of one kind form a run; a run is cut after ``SEGMENT_ROWS`` lines or
  ``SEGMENT_CHARS`` characters, which bounds the temporary memory of converting it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

CSV, SPARSE, QUOTED = "csv", "sparse", "quoted"  # kinds of runs of data lines
SEGMENT_ROWS = 65536  # lines per parsing segment (bounds temporary memory)
SEGMENT_CHARS = 1 << 26  # characters per dense segment handed to pyarrow


def line_runs(lines: Iterable[str]) -> Iterator[tuple[str, list[str], list[str]]]:
    """Group data lines into runs of one kind.

    Parameters
    ----------
    lines : iterable of str
        Data lines, with or without line terminators.

    Yields
    ------
    kind : str
        ``CSV``, ``SPARSE`` or ``QUOTED``.
    stripped : list of str
        The run's lines, stripped.
    raw : list of str
        The same lines as given (for error messages).
    """
    kind = None
    stripped: list[str] = []
    raw: list[str] = []
    chars = 0
    for line in lines:
        s = line.strip()
        if not s or s[0] == "%":
            continue
        if "'" in s or '"' in s:
            this = QUOTED
        elif s[0] == "{":
            this = SPARSE
        else:
            this = CSV
        if this != kind or len(stripped) >= SEGMENT_ROWS or chars >= SEGMENT_CHARS:
            if stripped:
                yield kind, stripped, raw
            kind, stripped, raw, chars = this, [], [], 0
        stripped.append(s)
        raw.append(line)
        chars += len(s)
    if stripped:
        yield kind, stripped, raw
