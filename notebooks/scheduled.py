# Databricks notebook source
# MAGIC %md
# MAGIC # spark_fr: scheduled rankings and their drift
# MAGIC A table of the lake is ranked on a schedule; every run appends its ranking, with its run id and time, to
# MAGIC one rankings table; a second step compares the newest runs and fails when the ranking moved too much.
# MAGIC Here both runs happen in this notebook: "day 1" ranks a customer table, "day 2" ranks the next snapshot, in
# MAGIC which an upstream change took the effect of `support_calls` away and gave one to `web_visits`. The drift
# MAGIC report shows what moved, the Fuzzy Jaccard Index (FJI) of the top-k sets, and whether an alert would fire.
# MAGIC
# MAGIC * **As a Databricks Job**: task 1 runs `spark-fr-rank --config scheduled` (your table, the
# MAGIC   rankings table, `--mlflow-experiment`), task 2 runs
# MAGIC   `jobs/drift.py --table <rankings> --last 2 --top 10 --scores genie3 --fail-above 0.1 --plot <folder>/drift.png`:
# MAGIC   it exits with code 3 when the drift (1 - the area under the FJI curve) is above 0.1, the task fails, and the
# MAGIC   job's failure notification is the alert. Set the threshold above what reruns of unchanged data give.
# MAGIC * **Your own table**: set the widget `input` to a catalog table (`main.sales.features`) and `targets`; both
# MAGIC   runs then rank it. The seed stays the same from run to run (as in `--config scheduled`), so unchanged
# MAGIC   data gives the same ranking (drift 0) and any drift comes from the data.
# MAGIC * **Jupyter**: `python -m spark_fr.notebook notebooks/scheduled.py scheduled.ipynb`; **plain Python**:
# MAGIC   `python notebooks/scheduled.py` (the widgets keep their defaults; `SPARK_FR_WIDGET_TREES=20` and the like).

# COMMAND ----------

# MAGIC %pip install spark_fr

# COMMAND ----------

import os

import numpy as np
import pandas as pd

import spark_fr
from spark_fr.runtime.session import get_spark

try:
    dbutils, display  # Databricks: its widgets and its display
except NameError:  # plain Python (the tests) or Jupyter: widgets keep their defaults, display prints or is IPython's
    from spark_fr.notebook import dbutils, display

dbutils.widgets.text("output", os.environ.get("SPARK_FR_OUT", "out/scheduled"), "output: folder for the results")
OUT = dbutils.widgets.get("output")
dbutils.widgets.text("input", "", "input: catalog table to rank (empty: the demo's customer snapshots)")
dbutils.widgets.text("targets", "", "targets: columns, comma-separated (with input)")
dbutils.widgets.text("rankings", os.path.join(OUT, "rankings"), "rankings: Delta table the runs append to")
dbutils.widgets.text("trees", "100", "trees")
dbutils.widgets.text("top", "10", "top: K of the top-K comparison")
dbutils.widgets.text("fail_above", "0.1", "fail_above: drift that raises the alert")

try:
    spark  # Databricks (and pyspark's shell): the notebook's session
except NameError:
    spark = get_spark()  # the active session, or a local one

# COMMAND ----------

# MAGIC %md
# MAGIC ## The table, day by day
# MAGIC The demo's snapshots: 2,000 customers, 30 features, and a churn score that depends on `tenure`,
# MAGIC `monthly_spend`, `support_calls` and `discount` on day 1. On day 2 `support_calls` no longer matters and
# MAGIC `web_visits` does (say the support system changed); the other effects are the same.

# COMMAND ----------

FEATURES = ["tenure", "monthly_spend", "support_calls", "discount", "web_visits", "age", "region_index",
            "contract_months", "payment_delay", "devices"] + [f"attr_{i:02d}" for i in range(1, 21)]


def snapshot(day: int, rows: int = 2000):
    """A day's snapshot of the demo's customer table, as a Spark DataFrame."""
    rng = np.random.default_rng(100 + day)
    x = pd.DataFrame(rng.normal(size=(rows, len(FEATURES))), columns=FEATURES)
    effects = {"tenure": -3.0, "monthly_spend": 2.0, "discount": -1.0}
    effects.update({"support_calls": 2.5} if day == 1 else {"web_visits": 2.5})
    churn = sum(w * x[f] for f, w in effects.items()) + rng.normal(scale=0.5, size=rows)
    return spark.createDataFrame(x.assign(churn_score=churn))


source = dbutils.widgets.get("input")
targets = dbutils.widgets.get("targets") or None if source else "churn_score"
rankings = dbutils.widgets.get("rankings")
trees = int(dbutils.widgets.get("trees"))


def day(n: int):
    """The data of run ``n``: the demo's snapshot of that day, or your table."""
    return spark.table(source) if source else snapshot(n)

# COMMAND ----------

# MAGIC %md
# MAGIC ## Day 1: rank and append
# MAGIC `ranking.write(path, format="delta")` appends the run's rows (one commit; the table is made on the first
# MAGIC run) with its `run_id` and `created_at`: the table keeps the history. (`jobs/rank.py --output PATH
# MAGIC --output-format delta` does the same in a job.) The score is Genie3: every feature's importance is positive
# MAGIC and an irrelevant feature's is small, so the top-K sets compare well even where K reaches past the features
# MAGIC that matter. The RF score of an irrelevant feature hovers around 0 with either sign, and its order among
# MAGIC them is noise: on this demo, two runs of the same day with different seeds drift by 0.2-0.3 with the RF
# MAGIC score at K = 10, by 0.01-0.02 with Genie3. The seed is the same in every run: unchanged data, same ranking.

# COMMAND ----------

ranking = spark_fr.rank(day(1), targets=targets, trees=trees, scores="genie3", seed=1, spark=spark)
display(ranking)
ranking.write(rankings, format="delta")
print("day 1: run", ranking.run_id, "appended to", rankings)

# COMMAND ----------

# MAGIC %md
# MAGIC ## Day 2: the next scheduled run

# COMMAND ----------

ranking = spark_fr.rank(day(2), targets=targets, trees=trees, scores="genie3", seed=1, spark=spark)
display(ranking)
ranking.write(rankings, format="delta")
print("day 2: run", ranking.run_id, "appended to", rankings)

# COMMAND ----------

# MAGIC %md
# MAGIC ## Drift
# MAGIC `spark_fr.compare_runs` reads only the compared runs of the table (here the last 2) and, per score and
# MAGIC target (here Genie3's joint ranking), computes the FJI of the two top-k sets for k = 1..K, its area, the features entering and leaving
# MAGIC the top K and their rank changes. **drift = 1 - FJI area**: 0 for the same top K with proportional
# MAGIC importances, 1 for nothing in common; `jobs/drift.py --fail-above` compares the largest drift with its
# MAGIC threshold.

# COMMAND ----------

report = spark_fr.compare_runs(rankings, last=2, top=int(dbutils.widgets.get("top")), spark=spark)
display(report)

# COMMAND ----------

# MAGIC %md
# MAGIC The features that moved in the top K (`change` = rank before - rank after: positive moved up), and the FJI
# MAGIC curve: low values at small k mean the very top changed.

# COMMAND ----------

display(report.changes[report.changes["score"] == "genie3"]
        .drop(columns=["run_before", "run_after"]).sort_values("rank_after"))
display(report.curves[["k", "fji"]])

# COMMAND ----------

# MAGIC %md
# MAGIC ## The heat map and the alert
# MAGIC Ranks of the top features over the runs (the newest run's top K above the dashed line). In a job, an alert
# MAGIC is a failed task: `jobs/drift.py` exits with code 3, or a notebook task raises.

# COMMAND ----------

fig = report.plot(os.path.join(OUT, "drift.png"))
display(fig)
threshold = float(dbutils.widgets.get("fail_above"))
if report.exceeds(threshold):
    worst = report.worst()
    print(f"ALERT: drift {report.max_drift:.3f} > {threshold} ({worst['score']}, runs {worst['run_before']} -> "
          f"{worst['run_after']})")  # a notebook task would raise here: raise RuntimeError(...)
else:
    print(f"drift {report.max_drift:.3f} <= {threshold}: no alert")
