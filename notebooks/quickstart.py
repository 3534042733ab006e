# Databricks notebook source
# MAGIC %md
# MAGIC # spark_fr quickstart
# MAGIC Rank the features of a multi-label data set (Mulan `emotions`: 72 audio features, 6 emotion labels)
# MAGIC with a random forest of predictive clustering trees, then look at the ranking as a table and a chart.
# MAGIC
# MAGIC On Databricks: `%pip install` the project first, and point `DATA` at a copy of the shared datasets
# MAGIC (for example under `/dbfs/...`). Locally this file runs as a plain Python script.

# COMMAND ----------

import os
import sys

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

import spark_fr
from spark_fr.runtime.session import get_spark

spark = get_spark()  # the notebook's session on Databricks; a local one elsewhere

HERE = os.path.dirname(os.path.abspath(__file__)) if "__file__" in globals() else os.getcwd()
DATA = os.environ.get("SPARK_FR_DATA", os.path.join(HERE, "..", "..", "shared", "datasets"))
OUT = os.environ.get("SPARK_FR_OUT", os.path.join(HERE, "..", "out", "quickstart"))

# COMMAND ----------

# MAGIC %md
# MAGIC ## Rank
# MAGIC `spark_fr.rank` takes a path (ARFF, CSV, Parquet, Delta) or a Spark DataFrame and the same options
# MAGIC as `jobs/rank.py`. Here: 100 trees, all three scores, one extra ranking per label.

# COMMAND ----------

ranking = spark_fr.rank(
    os.path.join(DATA, "mlc_emotions", "emotions.arff"),
    labels_xml=os.path.join(DATA, "mlc_emotions", "emotions.xml"),
    ensemble="rf", trees=100, scores="symbolic,genie3,rf", per_target=True, seed=1, spark=spark,
)
print(ranking)
print(ranking.summary(5))

# COMMAND ----------

# MAGIC %md
# MAGIC ## The ranking as a Spark DataFrame
# MAGIC One row per feature, score and target (`__all__` = all labels together).

# COMMAND ----------

table = ranking.to_spark(spark)
table.filter("score = 'genie3' AND target = '__all__'").orderBy("rank").show(10, truncate=False)
per_label_best = (table.filter("score = 'genie3' AND target != '__all__' AND rank = 1")
                  .select("target", "feature", "importance").orderBy("target"))
per_label_best.show(truncate=False)

# COMMAND ----------

# MAGIC %md
# MAGIC ## Plot and save
# MAGIC `plot` draws the top features per score; `write` stores the table (csv, parquet or a Delta table).

# COMMAND ----------

fig = ranking.plot(os.path.join(OUT, "emotions.png"), top=15)
path = ranking.write(os.path.join(OUT, "emotions"), format="csv")
print("wrote", path)
