"""Publishing a run's outputs: checked before the work starts, written together at the end, never a user's file.

Sketch
------
A :class:`Publication` is planned from the output options before any data is read (:meth:`check`), and
written after the ranking exists (:meth:`publish`):

* **check** (before the work): the output location must be creatable (the nearest existing ancestor is
  a writable directory: ``/dev/null/x`` or a read-only folder fail here), and what already exists there
  must be something a run of ours wrote, or nothing:

  - ``csv`` / ``parquet``: ``DIR`` is absent, an empty directory, or a directory holding only our files
    (``run.json`` written by spark_fr, ``ranking.csv``, ``ranking.parquet``). Anything else (a file, a
    folder with the user's data) is refused with a one-line error, whatever the mode; ``--mode error``
    refuses any earlier ranking too.
  - ``delta``: ``DIR`` is absent, an empty directory, or a Delta table proven to be ours: the ranking
    table's columns by name and type, and spark_fr's mark, the table property ``spark_fr.rankings`` (set when
    spark_fr creates a table; tables of earlier versions lack it and are refused with a line that says how
    to adopt them; :mod:`spark_fr.io.delta_table`). ``append`` (the default) adds a commit; ``overwrite``
    replaces the table's contents in a new commit (the history keeps the old ones); ``error`` refuses an
    existing table.
  - ``--plot FILE``: absent, or a PNG written by spark_fr (it carries a ``spark_fr`` text chunk); never
    inside the output (a table directory or Delta table is written and replaced as a whole, so it holds
    only the ranking's files: refused with a line that suggests ``--plot DIR.png``).

* **publish** (after every check has passed and the ranking is computed): everything is written to
  temporary names beside its destination first (the table directory, the plot), then moved into place by
  renames: a reader never sees half a result, and a failure leaves nothing behind (nor the folders made for
  the outputs, when they are still empty). An earlier ranking
  directory is swapped out and deleted only after the new one is in place; only our own files are ever
  deleted. A SIGTERM that arrives while results are moved into place takes effect when they are all in place
  (:func:`spark_fr.runtime.signals.deferred`); before, the temporary names are removed as the run unwinds.
  Concurrent writers: the directory swap retries when another run swapped at the same moment (the
  last one wins, no temporary directory is left), and a Delta commit that conflicts with another run's
  commit is retried, so no run's result is lost.
"""
from __future__ import annotations

import json
import os
import tempfile
import time

import pyarrow as pa

from ..errors import InputError, one_line
from ..runtime.signals import deferred
from . import delta_table
from .csv_text import write_frame_csv
from .filesystems import files_for
from .locations import locate
from .ownership import (OUR_FILES, PNG_MARK, check_creatable, commit_directory,  # noqa: F401 (re-exported)
                        foreign_entries, is_our_png, is_our_run_json, make_parents, remove_created, shown, sibling,
                        stage_directory)

WRITE_FORMATS = ("csv", "parquet", "delta")
MODES = ("overwrite", "error", "append")
RETRIES = 12

SCHEMA = pa.schema([
    ("feature", pa.string()), ("score", pa.string()), ("target", pa.string()), ("importance", pa.float64()),
    ("rank", pa.int32()), ("importance_std", pa.float64()), ("run_id", pa.string()),
    ("created_at", pa.timestamp("us", tz="UTC")), ("params", pa.string())])


#: the columns a relational ranking adds after the contract's (``spark_fr.relational.rollup``)
RELATIONAL_FIELDS = [("level", pa.string()), ("lineage", pa.string())]
#: the one schema of a Delta table of rankings, for every kind of run: the contract's columns, then ``level`` and
#: ``lineage`` (null for a plain run; :mod:`spark_fr.io.delta_table`)
TABLE_SCHEMA = pa.schema(list(SCHEMA) + RELATIONAL_FIELDS)
#: the schemas a Delta table of ours may have (by name and type): the table's, or the contract's alone (tables
#: written before, which gain the two columns at their next commit)
RANKING_SCHEMAS = [SCHEMA, TABLE_SCHEMA]


def arrow_table(ranking, schema: pa.Schema | None = None) -> pa.Table:
    """The ranking table as Arrow, with the output contract's types (and a relational ranking's two columns);
    with ``schema`` (:data:`TABLE_SCHEMA`), columns the ranking lacks are null."""
    df = ranking.to_pandas()
    if schema is None:
        schema = TABLE_SCHEMA if "level" in df.columns else SCHEMA
    for name in schema.names:
        if name not in df.columns:
            df[name] = None
    return pa.Table.from_pandas(df[schema.names], schema=schema, preserve_index=False)


# ----- the publication ------------------------------------------------------------------------------------
class Publication:
    """The outputs of one run (a ranking table, and optionally a plot), checked early and written together.

    Parameters
    ----------
    output : str or None
        Output directory (csv, parquet) or Delta table location.
    format : {'csv', 'parquet', 'delta'}
    mode : {'overwrite', 'error', 'append'}, optional
        Default: 'overwrite' for csv/parquet, 'append' for delta.
    plot : str, optional
        PNG file for the plot.
    """

    def __init__(self, output: str | None, format: str = "csv", mode: str | None = None, plot: str | None = None,
                 *, table: str | None = None, spark=None):
        if format not in WRITE_FORMATS:
            raise InputError(f"--output-format must be one of {', '.join(WRITE_FORMATS)}, not '{format}'")
        if table is not None:
            from .tables import display_name, parse_table_name

            if output is not None:
                raise InputError("give --output (a path) or --output-table (a catalog table), not both")
            self.table_parts = parse_table_name(table, "--output-table")
            self.table_name = display_name(self.table_parts)
            format = "delta"
        else:
            self.table_parts = self.table_name = None
        self.spark = spark
        self._writer = None
        mode = mode or ("append" if format == "delta" else "overwrite")
        if mode not in MODES:
            raise InputError(f"--mode must be one of {', '.join(MODES)}, not '{mode}'")
        if mode == "append" and format != "delta":
            raise InputError("--mode append needs --output-format delta")
        self._out = locate(output, "--output") if output is not None else None
        self._plot = locate(plot, "--plot") if plot else None
        self.output = self._out.path if self._out is not None else None
        self.format, self.mode = format, mode
        self.plot = self._plot.path if self._plot is not None else None
        self._backends = {}

    def _files(self, loc, option: str):
        """The backend of an output location (:func:`spark_fr.io.filesystems.files_for`), chosen once."""
        if loc.path not in self._backends:
            self._backends[loc.path] = files_for(loc, self.spark, option)
        return self._backends[loc.path]

    # ----- before the work ---------------------------------------------------------------------------
    def check(self) -> "Publication":
        """Refuse, before any work, an output that cannot be written or would replace what is not ours."""
        if self.table_parts is not None:
            self._check_table()
        if self.output is not None and self.plot is not None and self.plot == self.output:
            raise InputError(f"--plot and --output are the same path: {self.output}")
        if self.output is not None and self.plot is not None:
            self._check_apart()
        if self.output is not None:
            if self.format == "delta":
                self._check_delta()
            else:
                files = self._files(self._out, "--output")
                check_creatable(self._out, "--output", files)
                if files.exists(self._out):
                    self._check_directory(files)
        if self.plot is not None:
            self._check_plot()
        return self

    def _check_plot(self) -> None:
        files = self._files(self._plot, "--plot")
        check_creatable(self._plot, "--plot", files)
        if files.isdir(self._plot):
            raise InputError(f"--plot {self.plot} is a directory; give a .png file name")
        if files.exists(self._plot) and (self.mode == "error" or not is_our_png(self._plot, files)):
            why = "exists" if self.mode == "error" else "exists and was not written by spark_fr"
            raise InputError(f"--plot {self.plot} {why}; choose another file name")

    def _check_apart(self) -> None:
        """The plot may not be inside the output (nor the output inside the plot's path): the output is written
        and replaced as a whole, by one rename or one Delta commit, and a file of another kind in it would make
        it a folder spark_fr refuses to replace next time. Decision: refuse, and say where to put the plot."""
        if self._plot.local != self._out.local:
            return
        if self._plot.local:
            plot, output, sep = os.path.realpath(self.plot), os.path.realpath(self.output), os.sep
        else:
            plot, output, sep = self.plot, self.output, "/"
        if plot.startswith(output + sep):
            raise InputError(f"--plot {self.plot} is inside --output {self.output}, which spark_fr writes and "
                             f"replaces as a whole; put the plot beside it, e.g. --plot {self.output}.png")
        if output.startswith(plot + sep):
            raise InputError(f"--output {self.output} is inside --plot {self.plot}; give the plot a file name of its own")

    def _check_directory(self, files) -> None:
        path = self.output
        if not files.isdir(self._out):
            raise InputError(f"--output {path} exists and is not a directory; choose a new path")
        foreign = foreign_entries(self._out, files)
        if foreign:
            raise InputError(f"--output {path} holds files spark_fr did not write ({shown(foreign)}); spark_fr only "
                             f"replaces a ranking it wrote: choose a new or empty directory")
        if self.mode == "error" and files.listdir(self._out):
            raise InputError(f"output exists: {path} (use --mode overwrite)")

    def _check_delta(self) -> None:
        if not self._out.local:
            return self._check_remote_delta()
        path, files = self.output, self._files(self._out, "--output")
        check_creatable(self._out, "--output", files)
        self._check_percent_escape(path)
        if not files.exists(self._out):
            return
        if not files.isdir(self._out):
            raise InputError(f"--output {path} exists and is not a directory; choose a new path")
        exists = delta_table.exists(path)
        if not exists and files.listdir(self._out):
            raise InputError(f"--output {path} is a directory that is not a Delta table "
                             f"({shown(files.listdir(self._out))}); choose a new path")
        if not exists:
            return
        if self.mode == "error":
            raise InputError(f"output exists: {path} (use --mode append or overwrite)")
        writer = self._path_writer()
        why = delta_table.problem(path, RANKING_SCHEMAS, writer, self._session() if writer == "spark" else None)
        if why and "writer feature" in why and self.spark is not None and self._session_has_delta(start=True):
            self._writer = "spark"  # a table only Spark's writer writes, and the session has it
            why = delta_table.problem(path, RANKING_SCHEMAS, "spark", self._session())
        if why:
            raise InputError(f"--output {path} {why}")

    def _check_percent_escape(self, path: str) -> None:
        """A local path holding a percent-escape (``%41``) is one ``deltalake`` would write elsewhere
        (:func:`spark_fr.io.delta_reader.deltalake_refuses`): Spark's Delta writer writes it, or the run stops here."""
        from .delta_reader import deltalake_refuses

        why = deltalake_refuses(path)
        if why is None:
            return
        if self.spark is None or not self._session_has_delta(start=True):
            raise InputError(f"--output {path} {why}")
        self._writer = "spark"

    def _check_remote_delta(self) -> None:
        """A Delta table at a URI: Spark's Delta writer when the session has Delta Lake and a file system for the
        scheme (its checks asked of Spark: ``delta.`URI```), else ``deltalake`` for the schemes it serves, else
        one line (:func:`remote_delta_writer`)."""
        path = self.output
        self._writer = remote_delta_writer(self._out, self.spark)
        if self._writer == "spark":
            session = self._session()
            ident = delta_table.spark_identifier(path=path)
            exists = delta_table.spark_exists(session, ident)
            why = delta_table.spark_table_problem(session, ident, RANKING_SCHEMAS) if exists else None
        else:
            exists = delta_table.exists(path)
            why = delta_table.problem(path, RANKING_SCHEMAS, "deltalake") if exists else None
        if exists and self.mode == "error":
            raise InputError(f"output exists: {path} (use --mode append or overwrite)")
        if why:
            raise InputError(f"--output {path} {why}")

    def _check_table(self) -> None:
        """A catalog output: the session must have Delta Lake, and an existing table must be a table of ours."""
        from .delta_reader import INSTALL_DELTA

        if self.spark is None or not self._session_has_delta(start=True):
            raise InputError(f"--output-table {self.table_name} needs a Spark session with Delta Lake; {INSTALL_DELTA}")
        session = self._session()
        ident = delta_table.spark_identifier(table_parts=self.table_parts)
        if not delta_table.spark_exists(session, ident):
            return
        if self.mode == "error":
            raise InputError(f"--output-table {self.table_name} exists (use --mode append or overwrite)")
        why = delta_table.spark_table_problem(session, ident, RANKING_SCHEMAS)
        if why:
            raise InputError(f"--output-table {self.table_name} {why}")

    # ----- which writer --------------------------------------------------------------------------------------
    def _session(self):
        spark = self.spark
        return spark.result() if hasattr(type(spark), "when_ready") else spark

    def _session_has_delta(self, start: bool = False) -> bool:
        """Whether the run's session has Delta Lake (a session not started yet is started only when ``start``)."""
        from .delta_reader import spark_has_delta

        if self.spark is None:
            return False
        if not start and not getattr(self.spark, "ready", True):
            return False
        return spark_has_delta(self.spark)

    def _path_writer(self) -> str:
        """Who writes a Delta output path: Spark's Delta writer when the session has started and has Delta
        Lake, else ``deltalake`` (a run that never needed Spark does not start it to write)."""
        if self._writer is None:
            return "spark" if self._session_has_delta() else "deltalake"
        return self._writer

    # ----- after the work ----------------------------------------------------------------------------
    def publish(self, ranking) -> None:
        """Write everything to temporary names, then move it into place (see the module sketch)."""
        plot_tmp = table_tmp = None
        made_plot, made_out = [], []  # folders this call made (removed again, when still empty, if it fails)
        done = False
        out_files = (self._files(self._out, "--output")
                     if self._out is not None and (self._out.local or self.format != "delta") else None)
        plot_files = self._files(self._plot, "--plot") if self._plot is not None else None
        try:
            if self._plot is not None:
                make_parents(self._plot, plot_files, made_plot)
                plot_tmp = sibling(self._plot, "tmp")
                plot_tmp = plot_tmp.sibling(plot_tmp.name + ".png")
                self._stage_plot(ranking, plot_tmp, plot_files)
            if out_files is not None:
                make_parents(self._out, out_files, made_out)
            if self._out is not None and self.format != "delta":
                table_tmp = sibling(self._out, "tmp")  # named first: the clean-up knows it from the start
                self._stage_directory(ranking, table_tmp, out_files)
            with deferred():  # a SIGTERM waits until everything is in place (spark_fr.runtime.signals)
                self._commit(ranking, table_tmp, out_files)
                table_tmp = None
                if plot_tmp is not None:
                    plot_files.replace(plot_tmp, self._plot)
                    plot_tmp = None
                done = True
        finally:
            if plot_tmp is not None and plot_files.exists(plot_tmp):
                plot_files.remove(plot_tmp)
            if table_tmp is not None:
                out_files.rmtree(table_tmp)
            if not done:
                remove_created(made_out, out_files)
                remove_created(made_plot, plot_files)

    def _commit(self, ranking, table_tmp, out_files) -> None:
        """Move the staged outputs into place (or commit them, for Delta)."""
        if self.table_parts is not None:
            self._commit_spark(ranking, delta_table.spark_identifier(table_parts=self.table_parts),
                               f"--output-table {self.table_name}")
        if self._out is None:
            return
        if self.format == "delta" and self._path_writer() == "spark":
            local = self._out.local
            self._commit_spark(ranking, delta_table.spark_identifier(path=self.output), f"--output {self.output}",
                               path=self.output if local else None)
        elif self.format == "delta":
            self._commit_delta(ranking)
        else:
            self._commit_directory(table_tmp, out_files)

    def _stage_plot(self, ranking, tmp, files) -> None:
        """Draw the plot at the temporary location (on the driver's disk first for a remote file system)."""
        if tmp.local:
            ranking.plot(tmp.path)
            return
        with tempfile.TemporaryDirectory(prefix="spark_fr-plot-") as local:
            ranking.plot(os.path.join(local, "plot.png"))
            files.put(os.path.join(local, "plot.png"), tmp)

    def _stage_directory(self, ranking, tmp, files) -> None:
        """Write the ranking's files into the new directory ``tmp``."""
        stage_directory(tmp, files, lambda local: _write_ranking_files(ranking, self.format, local))

    def _commit_directory(self, tmp, files) -> None:
        commit_directory(tmp, self._out, files, foreign=foreign_entries, retries=RETRIES,
                         refuse_existing=f"output exists: {self.output} (use --mode overwrite)"
                         if self.mode == "error" else None)

    def _commit_delta(self, ranking) -> None:
        """Create a marked table, or append to (overwrite) a table proven ours, checked again just before the
        commit (:mod:`spark_fr.io.delta_table`); conflicting commits of concurrent runs are retried. A run with
        its own ``--run-id`` replaces the rows of an earlier run of that id in the same commit."""
        table = arrow_table(ranking, TABLE_SCHEMA)
        mode = "overwrite" if self.mode == "overwrite" else "append"
        record, replace = _record(ranking), _given_run_id(ranking)
        if not delta_table.exists(self.output) and delta_table.create(self.output, table, ranking.run_id, record):
            return
        for attempt in range(RETRIES):
            why = delta_table.problem(self.output, RANKING_SCHEMAS)
            if why:
                raise InputError(f"--output {self.output} {why}; nothing was written")
            try:
                delta_table.write(self.output, table, mode, ranking.run_id, record, replace)
                return
            except Exception as err:  # deltalake's commit conflicts and schema errors
                text = one_line(err)
                if "schema" in text.lower():
                    raise InputError(f"{self.output}: the Delta table does not hold rankings ({text})") from None
                if not _is_conflict(err) or attempt == RETRIES - 1:
                    raise
                time.sleep(0.05 * (attempt + 1))


    def _commit_spark(self, ranking, ident: str, what: str, path: str | None = None) -> None:
        """Spark's Delta writer: create the table (one ``CREATE TABLE AS SELECT`` commit; a local path is
        created in a hidden sibling and renamed into place, as :func:`delta_table.create` does), or append to
        (overwrite; replace a run's rows) a table proven ours, checked again just before the commit;
        conflicting commits of concurrent runs are retried."""
        session = self._session()
        df = _spark_frame(session, arrow_table(ranking, TABLE_SCHEMA))
        mode = "overwrite" if self.mode == "overwrite" else "append"
        record, replace = _record(ranking), _given_run_id(ranking)

        def make(where: str) -> bool:
            return delta_table.spark_create(session, delta_table.spark_identifier(path=where), df, ranking.run_id,
                                            record)

        for attempt in range(RETRIES):
            if path is not None and not delta_table.exists(path):
                if delta_table.create(path, None, ranking.run_id, record, maker=make):
                    return
            elif path is None and not delta_table.spark_exists(session, ident):
                if delta_table.spark_create(session, ident, df, ranking.run_id, record):
                    return
            why = (delta_table.problem(path, RANKING_SCHEMAS, "spark", session) if path is not None
                   else delta_table.spark_table_problem(session, ident, RANKING_SCHEMAS))
            if why:
                raise InputError(f"{what} {why}; nothing was written")
            try:
                delta_table.spark_write(session, ident, df, mode, ranking.run_id, record, replace)
                return
            except Exception as err:  # Delta's concurrent-modification exceptions
                if not _is_conflict(err) or attempt == RETRIES - 1:
                    raise
                time.sleep(0.05 * (attempt + 1))


def _write_ranking_files(ranking, format: str, directory: str) -> None:
    """``ranking.csv`` (or ``ranking.parquet``) and ``run.json`` in a local directory."""
    if format == "csv":
        df = ranking.to_pandas()
        iso = {t: t.isoformat() for t in df["created_at"].unique()}  # one time a run: 40,000 rows, one call
        df["created_at"] = df["created_at"].map(iso)
        write_frame_csv(df, os.path.join(directory, "ranking.csv"))  # to_csv's bytes (csv_text)
    else:
        import pyarrow.parquet as pq

        pq.write_table(arrow_table(ranking), os.path.join(directory, "ranking.parquet"))
    with open(os.path.join(directory, "run.json"), "w", encoding="utf-8") as fh:
        json.dump(ranking.metadata, fh, indent=2, sort_keys=True, default=str)


#: the URI schemes the ``deltalake`` package reads and writes on the driver (object stores)
DELTALAKE_SCHEMES = frozenset({"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl", "azure", "wasb", "wasbs"})


def remote_delta_writer(loc, spark) -> str:
    """Who writes a Delta table at a URI: ``'spark'`` when the session has Delta Lake and a file system for the
    scheme (a Spark Connect session: its server's), ``'deltalake'`` for the object stores it serves; otherwise
    a one-line error before any work.

    Decision: Spark's writer first, as for the data Spark reads: it has the cluster's file systems and credentials
    (``dbfs:`` exists only there); ``deltalake`` is the driver's way when the session has no Delta Lake.
    """
    from ..runtime.engine import is_connect
    from .delta_reader import INSTALL_DELTA, spark_has_delta
    from .filesystems import _jvm_session, hadoop_serves

    if spark is not None and is_connect(spark):
        if spark_has_delta(spark):
            return "spark"
    else:
        session = _jvm_session(spark)
        if session is not None and hadoop_serves(session, loc.scheme) and spark_has_delta(session):
            return "spark"
    if loc.scheme in DELTALAKE_SCHEMES:
        return "deltalake"
    raise InputError(f"--output {loc.given}: no Delta writer serves '{loc.scheme}:' here (Spark's needs a session "
                     f"with Delta Lake and a file system for the scheme; deltalake's serves "
                     f"{', '.join(sorted(DELTALAKE_SCHEMES))}); {INSTALL_DELTA}")


def _record(ranking) -> dict:
    """The run record kept with a Delta table (what ``run.json`` holds)."""
    return dict(ranking.metadata)


def _given_run_id(ranking) -> bool:
    """Whether the run's id was given (``--run-id``, in its params): its rows then replace an earlier run's."""
    return (ranking.metadata.get("params") or {}).get("run_id") == ranking.run_id


def _spark_frame(spark, table: pa.Table):
    """A Spark DataFrame of an Arrow table (pyspark 3.5 takes pandas, with the Spark schema)."""
    import pyspark

    if int(pyspark.__version__.split(".")[0]) >= 4:
        return spark.createDataFrame(table)
    from pyspark.sql.pandas.types import from_arrow_schema

    return spark.createDataFrame(table.to_pandas(), from_arrow_schema(table.schema))


def _is_conflict(err: Exception) -> bool:
    name = type(err).__name__
    text = str(err).lower()
    return "CommitFailed" in name or "conflict" in text or "already exists" in text or (
        "version" in text and "exist" in text) or "concurrent" in text


def write_ranking(ranking, path: str | None, format: str = "csv", mode: str | None = None,
                  table: str | None = None) -> str:
    """Write a :class:`spark_fr.ranking.Ranking` (checked and published as in the module sketch). A Delta output
    is written by the active Spark session's Delta writer when it has one (else by ``deltalake``); a catalog
    ``table`` needs such a session.

    Returns
    -------
    str
        The path (or the table) written.
    """
    spark = None
    if table is not None or format == "delta":
        from pyspark.sql import SparkSession

        spark = SparkSession.getActiveSession()
    pub = Publication(path, format, mode, table=table, spark=spark).check()
    pub.publish(ranking)
    return pub.output if table is None else pub.table_name
