"""Checks of an input against its statistics, before any heavy work (one-line errors, exit code 2).

Every check runs on the driver on the merged statistics of the one statistics pass:

* parse errors carried by the reader (the earliest line is reported, by the reader's locator);
* an empty input;
* a target without any known value;
* an infinite value in a numeric column (scikit-learn refuses them too: a range, a variance or a distance
  with an infinity is meaningless); NaN is a missing value;
* a label of an HMLC column that is not in the hierarchy (with the line of an ARFF file where it occurs);
* the target type's own check of its columns (:meth:`spark_fr.tasks.TargetType.check`).
"""
from __future__ import annotations

import math
import os
import re

import numpy as np

from ..errors import InputError
from ..tasks import TaskError


def check_parse_errors(dataset, errors: list) -> None:
    """Raise the parse error found on the earliest line (the reader knows how to locate it)."""
    if not errors:
        return
    locate = dataset.extra.get("locate_error")
    if locate is not None:
        raise InputError(locate(errors))
    raise InputError(f"{dataset.source}: {errors[0]}")


def check_rows(dataset, n_rows: int) -> None:
    if n_rows == 0:
        origin = dataset.extra.get("origin")
        raise InputError(origin.no_rows() if origin else f"{dataset.source}: the input has no rows")


def check_finite(dataset, columns: list, stats: list) -> None:
    """No numeric column may hold an infinite value (a generated input says where the value comes from:
    ``dataset.extra['origin']``, see :class:`spark_fr.relational.rank.GeneratedOrigin`)."""
    origin = dataset.extra.get("origin")
    for c, s in zip(columns, stats):
        if c.kind == "numeric" and s.n_known and (math.isinf(s.vmin) or math.isinf(s.vmax)):  # scalars: no ufunc
            value = "-inf" if s.vmin == -np.inf else "inf"
            if origin is not None:
                raise InputError(origin.infinite(c.name, value))
            raise InputError(f"{dataset.source}: column '{c.name}' holds an infinite value ({value}); "
                             f"write it as a missing value or drop the row")


def check_targets_known(targets: list, tstats: list) -> None:
    for c, s in zip(targets, tstats):
        if s.n_known == 0:
            raise InputError(f"target column '{c.name}' has no known values")


def check_hierarchy_values(dataset, column: str, counts: dict) -> None:
    """Every label of an HMLC column's values must be in the hierarchy (checked on the distinct values).

    The error names the file, the line of an ARFF file where the value first occurs, the column and the label.
    """
    from ..hierarchy import HierarchyError

    try:
        dataset.hierarchy.label_matrix(sorted(counts))
    except HierarchyError as err:
        where = ""
        header = dataset.extra.get("arff_header")
        if err.label is not None and header is not None and os.path.isfile(header.path):
            label = re.compile(r"(^|[,@'\s])" + re.escape(err.label) + r"($|[,@'\s])")
            opener = dataset.extra.get("open_text") or (lambda p: open(p, encoding="utf-8", errors="replace"))
            with opener(header.path) as fh:
                for no, line in enumerate(fh, 1):
                    if no > header.data_line and label.search(line):
                        where = f" line {no}"
                        break
        raise InputError(f"{dataset.source}{where}: column '{column}': {err}") from None


def check_target_type(target_type, columns: list) -> None:
    """The target type's check of its columns, as a one-line input error."""
    try:
        target_type.check(columns)
    except TaskError as err:
        raise InputError(str(err)) from None
