"""Writing rankings atomically: CSV or Parquet directories, or a Delta table.

Sketch
------
* ``csv``: ``DIR/ranking.csv`` (one file with a header) and ``DIR/run.json`` (parameters, timings,
  versions). ``parquet``: ``DIR/ranking.parquet`` and ``DIR/run.json``. Both are written into a hidden
  sibling directory first and then renamed into place, so a reader (or a failed run) never sees half a
  result. ``mode``: 'overwrite' (default) replaces an existing directory, 'error' refuses to.
* ``delta``: one ``deltalake`` commit appends the rows to the table at ``DIR`` (created if missing; the
  default mode is 'append', as a data-lake job keeps the history of its runs; 'overwrite' replaces the
  contents, 'error' refuses an existing table). Run metadata lives in the ``params`` column.
"""
from __future__ import annotations

import json
import os
import shutil
import uuid

import pyarrow as pa

from ..errors import InputError, one_line

WRITE_FORMATS = ("csv", "parquet", "delta")


def _arrow_table(ranking) -> pa.Table:
    df = ranking.to_pandas()
    schema = pa.schema([
        ("feature", pa.string()), ("score", pa.string()), ("target", pa.string()), ("importance", pa.float64()),
        ("rank", pa.int32()), ("importance_std", pa.float64()), ("run_id", pa.string()),
        ("created_at", pa.timestamp("us", tz="UTC")), ("params", pa.string())])
    return pa.Table.from_pandas(df, schema=schema, preserve_index=False)


def _replace_dir(tmp: str, path: str, mode: str) -> None:
    if os.path.exists(path):
        if mode == "error":
            shutil.rmtree(tmp, ignore_errors=True)
            raise InputError(f"output exists: {path} (use --mode overwrite)")
        old = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.old-{uuid.uuid4().hex[:8]}")
        os.replace(path, old)
        os.replace(tmp, path)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, path)


def write_ranking(ranking, path: str, format: str = "csv", mode: str | None = None) -> str:
    """Write a :class:`spark_fr.ranking.Ranking`.

    Parameters
    ----------
    ranking : Ranking
    path : str
        Output directory (csv, parquet) or Delta table location.
    format : {'csv', 'parquet', 'delta'}
    mode : {'overwrite', 'error', 'append'}, optional
        Default: 'overwrite' for csv/parquet, 'append' for delta.

    Returns
    -------
    str
        The path written.
    """
    if format not in WRITE_FORMATS:
        raise InputError(f"--output-format must be one of {', '.join(WRITE_FORMATS)}, not '{format}'")
    mode = mode or ("append" if format == "delta" else "overwrite")
    if mode not in ("overwrite", "error", "append"):
        raise InputError(f"--mode must be overwrite, error or append, not '{mode}'")
    if format == "delta":
        return _write_delta(ranking, path, mode)
    if mode == "append":
        raise InputError("--mode append needs --output-format delta")
    path = os.path.abspath(path)
    parent = os.path.dirname(path)
    os.makedirs(parent, exist_ok=True)
    tmp = os.path.join(parent, f".{os.path.basename(path)}.tmp-{uuid.uuid4().hex[:8]}")
    os.makedirs(tmp)
    try:
        if format == "csv":
            df = ranking.to_pandas()
            df["created_at"] = df["created_at"].map(lambda t: t.isoformat())
            df.to_csv(os.path.join(tmp, "ranking.csv"), index=False)
        else:
            import pyarrow.parquet as pq

            pq.write_table(_arrow_table(ranking), os.path.join(tmp, "ranking.parquet"))
        with open(os.path.join(tmp, "run.json"), "w") as fh:
            json.dump(ranking.metadata, fh, indent=2, sort_keys=True, default=str)
        _replace_dir(tmp, path, mode)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return path


def _write_delta(ranking, path: str, mode: str) -> str:
    from deltalake import write_deltalake

    exists = os.path.isdir(os.path.join(path, "_delta_log")) if "://" not in path else _delta_exists(path)
    if exists and mode == "error":
        raise InputError(f"output exists: {path} (use --mode append or overwrite)")
    table = _arrow_table(ranking)
    try:
        write_deltalake(path, table, mode="append" if mode == "append" else "overwrite")
    except Exception as err:  # deltalake's schema errors name the mismatch
        if "schema" in str(err).lower():
            raise InputError(f"{path}: the Delta table does not hold rankings ({one_line(err)})") from None
        raise
    return path


def _delta_exists(path: str) -> bool:
    from deltalake import DeltaTable

    try:
        DeltaTable(path)
        return True
    except Exception:
        return False
