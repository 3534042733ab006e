"""The ranking in MLflow: what ``mlflow.pyspark.ml.autolog()`` cannot see by itself, and what it cannot do on Spark
Connect.

MLflow's pyspark.ml autologging patches ``Estimator.fit``: it logs the Params of every stage (ours included,
``numTrees``, ``numTopFeatures``, ...) and the training dataset, but the fitted model only when its class is in
its allowlist, and it knows nothing of a ranking. So a fit, when pyspark.ml autologging is on and an MLflow run
is active (autologging starts one around ``fit``), also logs, under ``spark_fr/<stage uid>/``:

* ``ranking.csv``: the ranking table (the output contract's columns);
* ``run.json``: the run metadata (parameters as resolved, timings, versions);
* ``selection.json``: the selection score, the rule that selected (``selectionMode``, ``selectionThreshold`` as
  applied), the number selected, the selected features (best first) and ``outputCol``'s order.

On Spark Connect pyspark.ml autologging does not work (``mlflow.pyspark.ml.autolog()`` reads the session's
``sparkContext``, which a Connect client has not). There a fit logs what it can to the run the caller has
active (``with mlflow.start_run():``): the stage's Params (``<uid>.<name>``), its metrics (``<uid>.n_rows``,
``<uid>.n_features``, ``<uid>.timings.<name>_s``) and the three artifacts above, and says once per process, in
one line (:data:`CONNECT_NOTE`), what it cannot log. Decisions: with no active run nothing is logged on Connect
(autologging would have started one; we do not start runs for the caller); a Param the run already holds with
another value (a second fit in the same run, as a CrossValidator's) is not logged again (MLflow refuses to
change a Param), its metrics are (MLflow keeps their history).

MLflow is never imported here: with no ``mlflow`` module loaded by the caller nothing happens. A failure to log
is a warning, never a failed fit (as MLflow's own autologging does).
"""
from __future__ import annotations

import json
import logging
import sys

from ..errors import one_line
from .selection import applied_rule

log = logging.getLogger(__name__)

#: MLflow's name of the pyspark.ml autologging integration
INTEGRATION = "pyspark.ml"
#: the one line said on Spark Connect (once per process), given the active run's id
CONNECT_NOTE = ("MLflow on Spark Connect: pyspark.ml autologging does not work there (it needs the JVM in this "
                "process), so the other stages' Params and the fitted models are not logged; spark_fr logs its own "
                "Params, metrics and ranking to the active run {run_id}")
_SAID: dict = {"connect": False}


def autologging() -> object | None:
    """The ``mlflow`` module when pyspark.ml autologging is on and a run is active, else None."""
    mlflow = sys.modules.get("mlflow")
    if mlflow is None:
        return None
    from mlflow.utils.autologging_utils import autologging_is_disabled

    if autologging_is_disabled(INTEGRATION) or mlflow.active_run() is None:
        return None
    return mlflow


def on_connect() -> bool:
    """Whether this process's pyspark runs on Spark Connect (pyspark's own switch, set by a Connect session)."""
    from pyspark.sql.utils import is_remote

    return is_remote()


def log_ranking(model) -> None:
    """Log ``model``'s ranking to the active MLflow run when pyspark.ml autologging is on; on Spark Connect, its
    Params, metrics and ranking to the active run (module docstring)."""
    try:
        if on_connect():
            mlflow = sys.modules.get("mlflow")
            if mlflow is None or mlflow.active_run() is None:
                return
            _log_params_and_metrics(mlflow, model)
            _say_once_on_connect(mlflow.active_run().info.run_id)
        else:
            mlflow = autologging()
            if mlflow is None:
                return
        _log_artifacts(mlflow, model)
    except Exception as err:  # noqa: BLE001 - tracking never fails a fit
        log.warning("MLflow: the ranking of %s was not logged (%s)", model.uid, one_line(err))


def _log_artifacts(mlflow, model) -> None:
    base = f"spark_fr/{model.uid}"
    mlflow.log_text(model.ranking.to_pandas().to_csv(index=False), f"{base}/ranking.csv")
    mlflow.log_dict(json.loads(json.dumps(model.metadata, default=str)), f"{base}/run.json")
    mlflow.log_dict(selection_record(model), f"{base}/selection.json")


def selection_record(model) -> dict:
    """``selection.json``: the selection score, the rule (``selectionMode``, ``selectionThreshold`` as applied,
    ``shadowImportance`` for a shadow; :func:`spark_fr.estimator.selection.applied_rule`), ``numTopFeatures``,
    the number of features selected, the selected features (best first) and ``outputCol``'s order."""
    score, selected = model.selection_score(), model.selectedFeatures
    rule = applied_rule(model.metadata, score, model.getSelectionMode(), model.getSelectionThreshold(),
                        model.getNumTopFeatures())
    return {"selectionScore": score, **rule, "numTopFeatures": model.getNumTopFeatures(),
            "numSelected": len(selected), "selectedFeatures": selected, "outputFeatures": model.outputFeatures}


def _log_params_and_metrics(mlflow, model) -> None:
    """The stage's set Params and its run's numbers, to the active run (Params it holds already are kept)."""
    run = mlflow.active_run()
    held = mlflow.MlflowClient().get_run(run.info.run_id).data.params
    params = {f"{model.uid}.{param.name}": _param_text(value) for param, value in model.extractParamMap().items()}
    mlflow.log_params({k: v for k, v in params.items() if k not in held})
    mlflow.log_metrics({f"{model.uid}.{name}": value for name, value in run_numbers(model.metadata).items()})


def _param_text(value) -> str:
    text = ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
    return text if len(text) <= 6000 else text[:5997] + "..."  # MLflow's limit of a Param's value


def run_numbers(metadata: dict) -> dict:
    """The metrics of a run's metadata: ``n_rows``, ``n_features`` and ``timings.<name>`` (seconds), when numbers."""
    numbers = {k: metadata.get(k) for k in ("n_rows", "n_features")}
    numbers.update({f"timings.{k}": v for k, v in (metadata.get("timings") or {}).items()})
    return {k: float(v) for k, v in numbers.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def _say_once_on_connect(run_id: str) -> None:
    if not _SAID["connect"]:
        _SAID["connect"] = True
        log.warning(CONNECT_NOTE.format(run_id=run_id))
