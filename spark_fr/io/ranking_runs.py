"""Reading the runs of a rankings table: a Delta table, a catalog table, folders of CSV/Parquet outputs.

Sketch
------
:func:`open_runs` turns a source into a :class:`RankingRuns`, which lists the runs (``run_id`` and when it was
made) and then reads the rows of the runs asked for, and only those:

* a **Delta table** path (a ``_delta_log``, or a remote URI): read by whom every Delta read of spark_fr is
  (:func:`spark_fr.io.delta_reader.delta_reader`): Spark's Delta reader when the session at hand has Delta Lake;
  else ``deltalake`` on the driver, two columns for the run list, a ``run_id`` filter for the rows, column
  mapping and deletion vectors through its query engine, a table with reader features it does not read refused
  in one line (never misread);
* a **catalog table** (``db.table``, ``catalog.db.table``; a name with no slash that is not a file): Spark;
* a **Spark DataFrame**, a **pandas DataFrame**, a :class:`spark_fr.ranking.Ranking`;
* **files**: a run folder (``ranking.csv`` or ``ranking.parquet``, as ``jobs/rank.py --output DIR`` writes), a
  folder of run folders, a folder of ``.csv``/``.parquet`` files, or one such file;
* several of these, in a list or comma-separated: their rows together; a run found in two sources must have
  the same rows in both (then it counts once), else it is an error naming the run and both sources
  (:class:`UnionRuns`).

Rows need the output contract's ``feature``, ``score``, ``target``, ``importance``, ``rank``, ``run_id`` and
``created_at``; a relational ranking's ``level`` is kept when present. Runs are ordered by ``created_at`` (the
earliest row of the run), then ``run_id``.
"""
from __future__ import annotations

import abc
import glob
import logging
import os
import re

import pandas as pd

from ..errors import InputError, one_line
from ..runtime.engine import is_connect
from .locations import is_local, local_path, locate

log = logging.getLogger(__name__)

#: the columns drift needs (the output contract's, without ``importance_std`` and ``params``)
NEEDED = ["feature", "score", "target", "importance", "rank", "run_id", "created_at"]
#: kept when the table has them (a relational ranking's level: feature, attribute, relation)
OPTIONAL = ["level"]
#: Delta reader features that ``deltalake`` is not trusted to read here (spark_fr.io.readers refuses them too)
_CATALOG_NAME = re.compile(r"^(`[^`]+`|[A-Za-z_][\w-]*)(\.(`[^`]+`|[A-Za-z_][\w-]*)){1,2}$")


class RankingRuns(abc.ABC):
    """The runs of a rankings table (subclasses per kind of source).

    Attributes
    ----------
    where : str
        The source, for messages.
    """

    where = "rankings"

    @abc.abstractmethod
    def runs(self) -> pd.DataFrame:
        """The runs, oldest first: columns ``run_id`` (str) and ``created_at`` (UTC timestamp)."""

    @abc.abstractmethod
    def rows(self, run_ids) -> pd.DataFrame:
        """The rows of the runs ``run_ids`` (the :data:`NEEDED` columns, and ``level`` when present)."""


def _order_runs(frame: pd.DataFrame) -> pd.DataFrame:
    """``run_id``, ``created_at`` per run (the earliest row), oldest first, then by id."""
    if frame.empty:
        return pd.DataFrame({"run_id": pd.Series([], dtype=str),
                             "created_at": pd.Series([], dtype="datetime64[us, UTC]")})
    runs = frame.assign(created_at=_utc(frame["created_at"])).groupby("run_id", as_index=False)["created_at"].min()
    runs["run_id"] = runs["run_id"].astype(str)
    return runs.sort_values(["created_at", "run_id"], kind="stable").reset_index(drop=True)


def _utc(values: pd.Series) -> pd.Series:
    """Timestamps in UTC (naive ones are taken as UTC, text as ISO 8601)."""
    if pd.api.types.is_datetime64_any_dtype(values):
        return values.dt.tz_localize("UTC") if values.dt.tz is None else values.dt.tz_convert("UTC")
    return pd.to_datetime(values, utc=True, format="ISO8601")


def _check_columns(columns, where: str) -> list:
    missing = [c for c in NEEDED if c not in columns]
    if missing:
        raise InputError(f"{where} does not hold rankings: column(s) {', '.join(missing)} missing (a rankings table "
                         f"has {', '.join(NEEDED)})")
    return NEEDED + [c for c in OPTIONAL if c in columns]


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    for c in ("feature", "score", "target", "run_id"):
        out[c] = out[c].astype(str)
    out["importance"] = pd.to_numeric(out["importance"], errors="coerce").astype(float)
    out["rank"] = pd.to_numeric(out["rank"], errors="coerce")
    out["created_at"] = _utc(out["created_at"])
    return out.reset_index(drop=True)


class FrameRuns(RankingRuns):
    """Runs held in memory (a pandas DataFrame)."""

    def __init__(self, frame: pd.DataFrame, where: str = "the rankings"):
        self.where = where
        self.frame = _typed(frame[_check_columns(frame.columns, where)])

    def runs(self) -> pd.DataFrame:
        return _order_runs(self.frame[["run_id", "created_at"]])

    def rows(self, run_ids) -> pd.DataFrame:
        return self.frame[self.frame["run_id"].isin(set(run_ids))].reset_index(drop=True)


class SparkRuns(RankingRuns):
    """Runs of a Spark DataFrame (a catalog table, a Delta table read by Spark): the run list by an aggregation,
    then only the rows of the chosen runs are collected. A TIMESTAMP ``created_at`` is collected as microseconds
    since the epoch: ``toPandas`` gives the wall time of the session's zone, which read as UTC would be hours off
    (and would order runs wrongly against other sources) when that zone is not UTC."""

    def __init__(self, df, where: str):
        from pyspark.sql import functions as F
        from pyspark.sql.types import TimestampType

        self.where = where
        self.columns = _check_columns(df.columns, where)
        df = df.select(*self.columns)
        self.micros = isinstance(df.schema["created_at"].dataType, TimestampType)
        self.df = df.withColumn("created_at", F.unix_micros("created_at")) if self.micros else df

    def _collected(self, df) -> pd.DataFrame:
        got = df.toPandas()
        if self.micros:
            got["created_at"] = pd.to_datetime(got["created_at"], unit="us", utc=True)
        return got

    def runs(self) -> pd.DataFrame:
        from pyspark.sql import functions as F

        return _order_runs(self._collected(self.df.groupBy("run_id").agg(F.min("created_at").alias("created_at"))))

    def rows(self, run_ids) -> pd.DataFrame:
        from pyspark.sql import functions as F

        return _typed(self._collected(self.df.filter(F.col("run_id").isin(list(run_ids)))))


class DeltaRuns(RankingRuns):
    """Runs of a Delta table read with ``deltalake`` on the driver (no Spark); tables with column mapping or
    deletion vectors through its query engine (:func:`spark_fr.io.delta_read.reader_features`)."""

    def __init__(self, table, where: str, engine: bool = False):
        self.table, self.where, self.engine = table, where, engine
        self.columns = _check_columns([f.name for f in table.schema().fields], where)

    def _read(self, columns, run_ids=None):
        if self.engine:  # the run ids are compared here, never written into the SQL text
            from .delta_read import query_on_driver

            names = ", ".join('"' + c.replace('"', '""') + '"' for c in columns)
            frame = query_on_driver(self.table, self.where, f"SELECT {names} FROM t").to_pandas()
            return frame if run_ids is None else frame[frame["run_id"].isin(list(run_ids))].reset_index(drop=True)
        import pyarrow.compute as pc

        filters = None if run_ids is None else pc.field("run_id").isin(list(run_ids))
        try:
            return self.table.to_pyarrow_table(columns=columns, filters=filters).to_pandas()
        except Exception as err:  # deltalake's own error types
            raise InputError(f"{self.where}: the Delta table could not be read ({one_line(err)})") from None

    def runs(self) -> pd.DataFrame:
        return _order_runs(self._read(["run_id", "created_at"]))

    def rows(self, run_ids) -> pd.DataFrame:
        return _typed(self._read(self.columns, run_ids))


class UnionRuns(RankingRuns):
    """Several sources read as one (nested unions flattened, so that messages name the files).

    Decision: a run id found in more than one source must have the same rows in each: the same run read twice
    (a CSV output and a Delta table of that run, a folder listed twice) is read once, with a log line; different
    rows are an error naming the run and two of its sources, raised when the runs are listed (before any
    comparison), in whatever order the sources are given. Rows are compared on the columns drift reads
    (:data:`NEEDED` and ``level``), as a set, after typing (a run's CSV and Delta rows are equal).
    """

    def __init__(self, parts: list):
        self.parts = [q for p in parts for q in (p.parts if isinstance(p, UnionRuns) else [p])]
        self.where = ", ".join(p.where for p in self.parts)
        self._runs: list | None = None
        self._shared: dict = {}  # run id -> its rows, found equal in every source that holds it

    def _part_runs(self) -> list:
        if self._runs is None:
            listed = [p.runs() for p in self.parts]
            self._shared = self._check_shared(listed)  # raises for clashing runs, every time it is asked
            self._runs = listed
        return self._runs

    def _check_shared(self, listed: list) -> dict:
        """The rows of each run found in several sources (the same in each, else an :class:`InputError`)."""
        holders: dict = {}
        for i, runs in enumerate(listed):
            for run_id in runs["run_id"]:
                holders.setdefault(run_id, []).append(i)
        shared = {r: idx for r, idx in holders.items() if len(idx) > 1}
        if not shared:
            return {}
        read = {}  # source index -> the rows of its shared runs, read in one go
        for i in sorted({i for idx in shared.values() for i in idx}):
            read[i] = self.parts[i].rows(sorted(r for r, idx in shared.items() if i in idx))
        out = {}
        for run_id, idx in shared.items():
            frames = [read[i][read[i]["run_id"] == run_id] for i in idx]
            for i, frame in zip(idx[1:], frames[1:]):
                why = _difference(frames[0], frame)
                if why:
                    raise InputError(f"run {run_id!r} is in {self.parts[idx[0]].where} and in {self.parts[i].where} "
                                     f"with different rows ({why}); drift cannot tell which is the run: give one of "
                                     f"the sources, or give the runs distinct ids")
            log.info("run %r is in %s with the same rows: read once", run_id,
                     " and ".join(self.parts[i].where for i in idx))
            out[run_id] = frames[0]
        return out

    def runs(self) -> pd.DataFrame:
        return _order_runs(pd.concat(self._part_runs(), ignore_index=True))

    def rows(self, run_ids) -> pd.DataFrame:
        listed = self._part_runs()  # lists the runs, and checks those in several sources, if not done yet
        wanted = set(run_ids)
        frames = [self._shared[r] for r in sorted(wanted & set(self._shared))]
        wanted -= set(self._shared)
        for part, runs in zip(self.parts, listed):
            here = set(runs["run_id"]) & wanted
            if here:
                frames.append(part.rows(sorted(here)))
                wanted -= here
        if not frames:
            return FrameRuns(pd.DataFrame(columns=NEEDED)).frame
        return pd.concat(frames, ignore_index=True)


#: the columns that name a row of a run (sorted on before rows are compared)
_ROW_KEY = ["score", "target", "level", "feature"]


def _canonical(frame: pd.DataFrame) -> pd.DataFrame:
    """A run's rows in one form whatever the source: text columns as text (no level: ''), numbers as floats,
    times in UTC microseconds; sorted."""
    out = pd.DataFrame(index=frame.index)
    for c in ("score", "target", "level", "feature", "run_id"):
        values = frame[c] if c in frame.columns else pd.Series("", index=frame.index)
        out[c] = values.where(values.notna(), "").astype(str)
    out["importance"] = pd.to_numeric(frame["importance"], errors="coerce").astype(float)
    out["rank"] = pd.to_numeric(frame["rank"], errors="coerce").astype(float)
    out["created_at"] = _utc(frame["created_at"]).astype("datetime64[us, UTC]")
    return out.sort_values(_ROW_KEY + ["rank", "importance", "created_at"], kind="stable").reset_index(drop=True)


def _difference(a: pd.DataFrame, b: pd.DataFrame) -> str:
    """How two sources' rows of one run differ ('' when they are the same rows)."""
    a, b = _canonical(a), _canonical(b)
    if len(a) != len(b):
        return f"{len(a)} rows against {len(b)}"
    differ = [c for c in a.columns if not a[c].equals(b[c])]
    return f"{', '.join(differ)} differ" if differ else ""


# ----- opening a source ---------------------------------------------------------------------------------------
def open_runs(source, spark=None) -> RankingRuns:
    """The runs of a rankings source (module sketch).

    Parameters
    ----------
    source : str, list, pandas.DataFrame, pyspark.sql.DataFrame or spark_fr.ranking.Ranking
        A path (Delta table, run folder, folder of outputs, CSV or Parquet file), a catalog table name, a
        comma-separated string or a list of any of these.
    spark : pyspark.sql.SparkSession, optional
        For catalog tables and Delta tables ``deltalake`` cannot read (default: the active session, or a new
        one for a catalog table).

    Returns
    -------
    RankingRuns

    Raises
    ------
    spark_fr.errors.InputError
        A path that does not exist or holds no rankings, a table without the ranking's columns.
    """
    if isinstance(source, (list, tuple)):
        if not source:
            raise InputError("no rankings given")
        parts = [open_runs(s, spark) for s in source]
        return parts[0] if len(parts) == 1 else UnionRuns(parts)
    if isinstance(source, pd.DataFrame):
        return FrameRuns(source)
    if hasattr(source, "sparkSession") and hasattr(source, "columns"):  # a Spark DataFrame (classic or Connect)
        return SparkRuns(source, "the DataFrame")
    if hasattr(source, "to_pandas") and hasattr(source, "metadata"):  # a Ranking (spark_fr.ranking, a floor above)
        return FrameRuns(source.to_pandas(), where=f"ranking {source.run_id}")
    if not isinstance(source, str) or not source.strip():
        raise InputError(f"not a rankings table: {source!r}")
    text = source.strip()
    parts = [p.strip() for p in text.split(",")]
    if len(parts) > 1 and not os.path.exists(text):
        if not all(parts):
            raise InputError(f"an empty name in the list of rankings: {text!r}")
        return UnionRuns([open_runs(p, spark) for p in parts])
    return _open_one(text, spark)


def _open_one(path: str, spark) -> RankingRuns:
    if not is_local(path):
        return _open_remote(path, spark)
    local = local_path(path)
    if os.path.isdir(local):
        if os.path.isdir(os.path.join(local, "_delta_log")):
            return _open_delta(local, spark)
        return _open_folder(local)
    if os.path.isfile(local):
        return FrameRuns(_read_file(local), where=path)
    if "/" not in path and os.sep not in path and _CATALOG_NAME.match(path):
        return _open_catalog(path, spark)
    raise InputError(f"rankings not found: {path} (a Delta table, a folder of outputs, a CSV or Parquet file, or a "
                     f"catalog table such as main.ml.feature_rankings)")


def _open_remote(path: str, spark) -> RankingRuns:
    """A source at a URI (:mod:`spark_fr.io.locations`): a ``.csv`` / ``.parquet`` output file is copied to the
    driver through its file system; anything else is a Delta table, read by Spark (or ``deltalake``)."""
    if path.lower().endswith((".csv", ".csv.gz", ".parquet")):
        from .files import local_copy

        return FrameRuns(_read_file(local_copy(spark, path, "rankings")), where=path)
    if spark is not None and not is_connect(spark):
        from .filesystems import files_for

        files_for(locate(path, "rankings"), spark, "rankings")  # a scheme nobody serves: one line
    return _open_delta(path, spark)


def _read_file(path: str) -> pd.DataFrame:
    low = path.lower()
    try:
        if low.endswith((".csv", ".csv.gz")):  # names as written ('01' stays '01', as in Parquet and Delta)
            return pd.read_csv(path, dtype={c: str for c in ("feature", "score", "target", "run_id")})
        if low.endswith(".parquet"):
            return pd.read_parquet(path)
    except Exception as err:  # pandas' and pyarrow's parse errors
        raise InputError(f"{path}: not readable ({one_line(err)})") from None
    raise InputError(f"{path}: not a rankings file (.csv or .parquet)")


def _outputs_in(folder: str) -> list:
    """The ranking files of a folder: its own ``ranking.*`` (a run folder), else its ``.csv``/``.parquet`` files and
    the ``ranking.*`` of its sub-folders (run folders)."""
    own = [os.path.join(folder, n) for n in ("ranking.parquet", "ranking.csv") if os.path.isfile(os.path.join(folder, n))]
    if own:
        return own[:1]
    files = sorted(f for ext in ("*.csv", "*.csv.gz", "*.parquet") for f in glob.glob(os.path.join(folder, ext)))
    for sub in sorted(d for d in glob.glob(os.path.join(folder, "*")) if os.path.isdir(d)):
        if os.path.isdir(os.path.join(sub, "_delta_log")):
            continue
        mine = [os.path.join(sub, n) for n in ("ranking.parquet", "ranking.csv") if os.path.isfile(os.path.join(sub, n))]
        files.extend(mine[:1])
    return files


def _open_folder(folder: str) -> RankingRuns:
    files = _outputs_in(folder)
    deltas = sorted(d for d in glob.glob(os.path.join(folder, "*")) if os.path.isdir(os.path.join(d, "_delta_log")))
    if not files and not deltas:
        raise InputError(f"{folder} holds no rankings (no ranking.csv or ranking.parquet, no .csv or .parquet files, "
                         f"no run folders, no Delta table)")
    parts = [FrameRuns(_read_file(f), where=f) for f in files] + [_open_delta(d, None) for d in deltas]
    return parts[0] if len(parts) == 1 else UnionRuns(parts)


def _open_delta(path: str, spark) -> RankingRuns:
    """A Delta table's runs, read by whom :func:`spark_fr.io.delta_reader.delta_reader` says: Spark's Delta reader
    when the session at hand (``spark``, else the active one) has Delta Lake, else ``deltalake`` on the driver
    (refusing in one line what it does not read correctly)."""
    from .delta_read import open_deltalake
    from .delta_reader import ENGINE_FEATURES, active_session, delta_reader, reader_features, session_of

    if delta_reader(spark) == "spark":
        session = session_of(spark if spark is not None else active_session())
        try:
            df = session.read.format("delta").load(path)
            df.schema  # analysis happens here: no table there
        except Exception as err:  # AnalysisException and Delta's own errors
            raise InputError(f"{path}: Spark's Delta reader cannot read it ({one_line(err)})") from None
        return SparkRuns(df, path)
    table = open_deltalake(path)
    return DeltaRuns(table, path, engine=bool(reader_features(table, path) & ENGINE_FEATURES))


def _open_catalog(name: str, spark) -> RankingRuns:
    if spark is None:
        from ..runtime.session import get_spark

        spark = get_spark(app_name="spark_fr drift", quiet=True)
    try:
        df = spark.table(name)
    except Exception as err:  # AnalysisException: no such table
        raise InputError(f"rankings table not found: {name} ({one_line(err)})") from None
    return SparkRuns(df, name)
