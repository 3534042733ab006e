"""A ranking run in MLflow: ``jobs/rank.py --mlflow-experiment NAME`` (MLflow is an optional extra).

Sketch
------
    check    (before any work)   mlflow importable, the tracking server reachable, the experiment found or made
    start    (ranking computed)  an MLflow run named after the ranking's run id; its ids go into run.json
    publish                      the outputs as without MLflow (spark_fr.io.writers.Publication)
    log                          parameters, metrics, tags and artifacts in a few batched calls
    end                          FINISHED; FAILED (or KILLED when interrupted) if anything above failed

What a run holds
----------------
* **parameters**: the run's ``params`` as resolved (the options and what they resolved to: ``trees``,
  ``max_features``, ``targets``, ...), flattened (lists comma-joined; nested keys joined by ``.``; values longer
  than MLflow's limit cut with ``...``);
* **metrics**: ``n_rows``, ``n_features``, ``spark_jobs``, the timings (``timings.<name>_s``), and with
  ``--cv-folds`` the cross-validated performance: ``cv_<metric>`` (mean over the folds), ``cv_<metric>_std``,
  ``cv_<metric>_baseline``, and ``cv_<metric>_fold`` once per fold (step = fold number);
* **tags**: ``spark_fr.run_id``, ``spark_fr.version``, ``spark_fr.input``, ``spark_fr.task``, ``spark_fr.method``,
  ``spark_fr.output`` when written;
* **artifacts**: ``ranking.csv`` (the ranking table, as ``--output-format csv`` writes it), ``run.json`` (the
  run's metadata) and ``ranking.png`` (the ``--plot`` chart; drawn for MLflow when ``--plot`` is not given).

Decisions
---------
* The tracking server is the one MLflow is configured with (``MLFLOW_TRACKING_URI``; on Databricks, the
  workspace's). It is reached before any work, so a wrong URI or a missing ``mlflow`` is a one-line error
  (exit code 2) and not a lost ranking after hours of work.
* That check does not wait for MLflow's retries (7 retries with exponential back-off: 256 s for a server that
  refuses connections): its requests run with :data:`CHECK_HTTP` (one retry, a 10 s timeout; about 2 s for a
  refused connection, at most about 22 s for a server that does not answer), set in the environment for those
  calls only (MLflow reads its ``MLFLOW_HTTP_REQUEST_*`` variables at each request) and put back after; an
  unreachable server is one line naming its URI and the reason (``Connection refused``, an unknown host, no
  answer). The logging after the work keeps MLflow's own retries (or the user's settings): the server
  answered before the work, and a short outage then should not lose the record of hours of work.
* MLflow 3 refuses a file store (``file:...`` or a plain path) unless ``MLFLOW_ALLOW_FILE_STORE=true``. We do
  not set it: MLflow has put the file store in maintenance mode on purpose, and opting in is the user's choice.
  Its refusal is one line of ours saying what to do (set the variable, or use a database such as
  ``sqlite:///mlflow.db`` or a tracking server), not MLflow's paragraph. A database store needs the full
  ``mlflow`` package (SQLAlchemy); ``mlflow-skinny``, which the ``mlflow`` extra installs, has none, and the line
  says so rather than suggest what then fails.
* The MLflow client API is used with explicit run ids: a run of ours never nests under, ends or changes a run
  the caller has active (a notebook's).
* The ranking is published first, then logged: the table in the lake is the record of the run, MLflow its
  index. The run's ``run.json`` names the MLflow run (``mlflow``: tracking URI, experiment, run id). A failure
  to log after the outputs are written is a one-line error (exit code 1) that says the outputs were written,
  and the MLflow run is marked FAILED.
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import tempfile
import time

from ..errors import InputError, one_line
from ..version import __version__

#: MLflow's limits (mlflow.utils.validation): a parameter's value, and the items of one batch call
MAX_PARAM_LENGTH = 6000
MAX_PARAMS_PER_BATCH = 100
MAX_METRICS_PER_BATCH = 1000

#: MLflow's HTTP settings for the check before the work (module docstring): one retry, 1 s back-off, 10 s timeout
CHECK_HTTP = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "1", "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
              "MLFLOW_HTTP_REQUEST_BACKOFF_JITTER": "0", "MLFLOW_HTTP_REQUEST_TIMEOUT": "10"}


@contextlib.contextmanager
def quick_requests():
    """MLflow's HTTP requests made in the block use :data:`CHECK_HTTP` (the environment is put back after), and
    urllib3's 'Retrying ...' warnings are not shown (the failure is said in one line)."""
    saved = {k: os.environ.get(k) for k in CHECK_HTTP}
    pool = logging.getLogger("urllib3.connectionpool")
    level = pool.level
    os.environ.update(CHECK_HTTP)
    pool.setLevel(logging.ERROR)
    try:
        yield
    finally:
        pool.setLevel(level)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def shown_uri(uri: str) -> str:
    """A tracking URI as it may be printed: a password in it (``https://user:secret@host``) hidden."""
    return re.sub(r"(//[^/@:]*:)[^/@]*@", r"\1***@", uri)


def check_failure(experiment: str, uri: str, err: BaseException) -> str:
    """The one line for an error of MLflow or of its server met by :meth:`MlflowRun.check`."""
    text = f"{type(err).__name__}: {err}"
    where = f"--mlflow-experiment {experiment}"
    if "MLFLOW_ALLOW_FILE_STORE" in text:
        return (f"{where}: MLflow 3 uses a file store ({uri}) only when asked: set MLFLOW_ALLOW_FILE_STORE=true to "
                f"use it, or set MLFLOW_TRACKING_URI to a tracking server (or to a database such as "
                f"sqlite:///mlflow.db with the full mlflow package: mlflow-skinny has no database stores)")
    network = ("Max retries exceeded", "NewConnectionError", "ConnectionError", "ConnectTimeout", "ReadTimeout",
               "timed out", "Failed to resolve", "Connection refused")
    if any(s in text for s in network):
        errno = re.search(r"\[Errno -?\d+\] ([^'\")\]]+)", text)
        timeout = CHECK_HTTP["MLFLOW_HTTP_REQUEST_TIMEOUT"]
        reason = (errno.group(1).strip() if errno else
                  f"no answer within {timeout} s" if "timed out" in text or "Timeout" in text else one_line(err))
        return (f"{where}: the MLflow tracking server at {uri} cannot be reached ({reason}); check the tracking "
                f"URI (MLFLOW_TRACKING_URI) and that the server is running")
    return f"{where}: MLflow at {uri} cannot be used ({one_line(err)})"


def _mlflow():
    try:
        import mlflow
    except ImportError:
        raise InputError("--mlflow-experiment needs MLflow: pip install 'spark_fr[mlflow]' (mlflow-skinny, or "
                         "mlflow)") from None
    return mlflow


def flatten_params(params: dict, prefix: str = "") -> dict:
    """``{key: text}`` of a run's parameters for MLflow: nested keys joined by ``.``, lists comma-joined, text cut
    at MLflow's limit.

    Parameters
    ----------
    params : dict
    prefix : str

    Returns
    -------
    dict of str to str
    """
    out = {}
    for key, value in params.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten_params(value, name + "."))
            continue
        if isinstance(value, (list, tuple)):
            text = ",".join(str(v) for v in value)
        else:
            text = str(value)
        if len(text) > MAX_PARAM_LENGTH:
            text = text[:MAX_PARAM_LENGTH - 3] + "..."
        out[name] = text
    return out


def run_metrics(metadata: dict) -> list:
    """``[(key, value, step)]`` of a run's metadata: sizes, timings and the cross-validated performance."""
    out = []

    def number(v):
        return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v

    for key in ("n_rows", "n_rows_read", "n_features", "spark_jobs"):
        if number(metadata.get(key)):
            out.append((key, float(metadata[key]), 0))
    for key, value in sorted((metadata.get("timings") or {}).items()):
        if number(value):
            out.append((f"timings.{key}", float(value), 0))
    cv = metadata.get("cross_validation") or {}
    if number(cv.get("mean")):
        metric = f"cv_{cv.get('metric', 'score')}"
        out.append((metric, float(cv["mean"]), 0))
        for suffix, key in (("_std", "std"), ("_baseline", "baseline")):
            if number(cv.get(key)):
                out.append((metric + suffix, float(cv[key]), 0))
        for fold, value in enumerate(cv.get("per_fold") or [], start=1):
            if number(value):
                out.append((metric + "_fold", float(value), fold))
    return out


class MlflowRun:
    """One ranking run logged to MLflow (see the module sketch).

    Parameters
    ----------
    experiment : str
        The experiment's name (``/Shared/rankings`` on Databricks); made when missing.
    """

    def __init__(self, experiment: str):
        self.experiment = experiment
        self.experiment_id = None
        self.run_id = None
        self.client = None

    @classmethod
    def for_options(cls, opts: dict) -> "MlflowRun | None":
        """The checked tracker of a job's options, or None without ``mlflow_experiment``."""
        name = opts.get("mlflow_experiment")
        return cls(name).check() if name else None

    def check(self) -> "MlflowRun":
        """Reach the tracking server and find or make the experiment (before any work; one-line errors, within
        seconds for a server that cannot be reached: see the module docstring)."""
        mlflow = _mlflow()
        try:
            with quick_requests():
                self.client = mlflow.MlflowClient()
                self.experiment_id = self._find_or_make()
        except InputError:
            raise
        except Exception as err:  # MLflow's and the server's errors
            raise InputError(check_failure(self.experiment, shown_uri(self.tracking_uri()), err)) from None
        return self

    def _find_or_make(self) -> str:
        """The experiment's id: found by name, or made (and found, when another run made it meanwhile)."""
        found = self.client.get_experiment_by_name(self.experiment)
        if found is None:
            try:
                return self.client.create_experiment(self.experiment)
            except Exception:  # another run made it meanwhile
                found = self.client.get_experiment_by_name(self.experiment)
                if found is None:
                    raise
        if found.lifecycle_stage == "deleted":
            raise InputError(f"--mlflow-experiment {self.experiment}: the experiment is deleted; restore it or "
                             f"choose another name")
        return found.experiment_id

    @staticmethod
    def tracking_uri() -> str:
        import mlflow

        return str(mlflow.get_tracking_uri())

    def start(self, ranking) -> str:
        """Create the MLflow run of ``ranking`` and record its ids in the ranking's metadata; returns the run id."""
        p = ranking.params or {}
        tags = {"spark_fr.run_id": str(ranking.run_id), "spark_fr.version": __version__,
                "spark_fr.input": str(ranking.metadata.get("input", "")), "spark_fr.task": str(p.get("task", "")),
                "spark_fr.method": str(p.get("method", ""))}
        run = self.client.create_run(self.experiment_id, run_name=str(ranking.run_id), tags=tags)
        self.run_id = run.info.run_id
        ranking.metadata["mlflow"] = {"tracking_uri": self.tracking_uri(), "experiment": self.experiment,
                                      "experiment_id": self.experiment_id, "run_id": self.run_id}
        return self.run_id

    def log(self, ranking, plot: str | None = None, output: str | None = None) -> None:
        """Log the parameters, metrics, tags and artifacts of ``ranking`` to the started run."""
        from mlflow.entities import Metric, Param, RunTag

        params = [Param(k, v) for k, v in flatten_params(ranking.params or {}).items()]
        for i in range(0, len(params), MAX_PARAMS_PER_BATCH):
            self.client.log_batch(self.run_id, params=params[i:i + MAX_PARAMS_PER_BATCH])
        stamp = int(time.time() * 1000)
        metrics = [Metric(k, v, stamp, step) for k, v, step in run_metrics(ranking.metadata)]
        for i in range(0, len(metrics), MAX_METRICS_PER_BATCH):
            self.client.log_batch(self.run_id, metrics=metrics[i:i + MAX_METRICS_PER_BATCH])
        if output:
            self.client.log_batch(self.run_id, tags=[RunTag("spark_fr.output", str(output))])
        folder = tempfile.mkdtemp(prefix="spark_fr-mlflow-")
        try:
            table = ranking.to_pandas()
            table["created_at"] = table["created_at"].map(lambda t: t.isoformat())
            table.to_csv(os.path.join(folder, "ranking.csv"), index=False)
            with open(os.path.join(folder, "run.json"), "w", encoding="utf-8") as fh:
                json.dump(ranking.metadata, fh, indent=2, sort_keys=True, default=str)
            png = os.path.join(folder, "ranking.png")
            if plot and os.path.isfile(plot):
                shutil.copyfile(plot, png)
            else:
                ranking.plot(png)
            self.client.log_artifacts(self.run_id, folder)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def end(self, status: str = "FINISHED") -> None:
        """Mark the run ended (FINISHED, FAILED or KILLED)."""
        if self.run_id is not None:
            self.client.set_terminated(self.run_id, status)

    def publishing(self, publication) -> "TrackedPublication":
        """``publication`` whose ``publish`` also logs the run to MLflow (as the module sketch orders it)."""
        return TrackedPublication(self, publication)


class TrackedPublication:
    """A :class:`spark_fr.io.writers.Publication` whose ``publish`` starts the MLflow run, publishes, logs the run
    and ends it (FAILED, or KILLED when interrupted, if anything fails); its other attributes are the
    publication's."""

    def __init__(self, tracker: MlflowRun, publication):
        self.tracker, self.publication = tracker, publication

    def __getattr__(self, name):
        return getattr(self.publication, name)

    def publish(self, ranking) -> None:
        tracker, publication = self.tracker, self.publication
        tracker.start(ranking)
        status = "FAILED"
        try:
            publication.publish(ranking)
            written = ", ".join(p for p in (publication.output, publication.plot) if p)
            try:
                tracker.log(ranking, plot=publication.plot, output=publication.output)
            except Exception as err:  # MLflow's and the server's errors: the outputs are in place
                where = f"the outputs were written ({written}) but " if written else ""
                raise RuntimeError(f"{where}logging to MLflow run {tracker.run_id} failed: {one_line(err)}") from None
            status = "FINISHED"
        except KeyboardInterrupt:
            status = "KILLED"
            raise
        except BaseException as err:
            if type(err).__name__ == "Terminated":  # SIGTERM (spark_fr.runtime.signals)
                status = "KILLED"
            raise
        finally:
            try:
                tracker.end(status)
            except Exception:  # noqa: BLE001 - the run's own error, if any, is the one to report
                pass
