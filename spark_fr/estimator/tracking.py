"""The ranking in MLflow: what ``mlflow.pyspark.ml.autolog()`` cannot see by itself.

MLflow's pyspark.ml autologging patches ``Estimator.fit``: it logs the Params of every stage (ours included,
``numTrees``, ``numTopFeatures``, ...) and the training dataset, but the fitted model only when its class is in
its allowlist, and it knows nothing of a ranking. So a fit, when pyspark.ml autologging is on and an MLflow run
is active (autologging starts one around ``fit``), also logs, under ``spark_fr/<stage uid>/``:

* ``ranking.csv``: the ranking table (the output contract's columns);
* ``run.json``: the run metadata (parameters as resolved, timings, versions);
* ``selection.json``: the selection score, the selected features (best first) and ``outputCol``'s order.

MLflow is never imported here: with no ``mlflow`` module loaded by the caller nothing happens. A failure to log
is a warning, never a failed fit (as MLflow's own autologging does).
"""
from __future__ import annotations

import json
import logging
import sys

from ..errors import one_line

log = logging.getLogger(__name__)

#: MLflow's name of the pyspark.ml autologging integration
INTEGRATION = "pyspark.ml"


def autologging() -> object | None:
    """The ``mlflow`` module when pyspark.ml autologging is on and a run is active, else None."""
    mlflow = sys.modules.get("mlflow")
    if mlflow is None:
        return None
    from mlflow.utils.autologging_utils import autologging_is_disabled

    if autologging_is_disabled(INTEGRATION) or mlflow.active_run() is None:
        return None
    return mlflow


def log_ranking(model) -> None:
    """Log ``model``'s ranking to the active MLflow run when pyspark.ml autologging is on (module docstring)."""
    try:
        mlflow = autologging()
        if mlflow is None:
            return
        base = f"spark_fr/{model.uid}"
        mlflow.log_text(model.ranking.to_pandas().to_csv(index=False), f"{base}/ranking.csv")
        mlflow.log_dict(json.loads(json.dumps(model.metadata, default=str)), f"{base}/run.json")
        mlflow.log_dict({"selectionScore": model.selection_score(), "numTopFeatures": model.getNumTopFeatures(),
                         "selectedFeatures": model.selectedFeatures, "outputFeatures": model.outputFeatures},
                        f"{base}/selection.json")
    except Exception as err:  # noqa: BLE001 - tracking never fails a fit
        log.warning("MLflow: the ranking of %s was not logged (%s)", model.uid, one_line(err))
