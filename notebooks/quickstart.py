# Databricks notebook source
# MAGIC %md
# MAGIC # spark_fr quickstart
# MAGIC Rank the features of a table for its targets with a random forest of predictive clustering trees, then look
# MAGIC at the ranking as a table and a chart. By default: the multi-label data set Mulan `emotions` (72 audio
# MAGIC features, 6 emotion labels); set the widgets to rank your own table (`main.sales.features`, target `y`).
# MAGIC
# MAGIC * **Databricks**: run the `%pip` cell first (or install the wheel: `%pip install /Volumes/.../spark_fr-0.1.0-py3-none-any.whl`),
# MAGIC   then fill in the widgets above the notebook. `input` is a catalog table (`catalog.schema.table`) or a path
# MAGIC   (ARFF, CSV, Parquet, a Delta directory; `/Volumes/...` or `dbfs:/...`).
# MAGIC * **Jupyter**: `python -m spark_fr.notebook notebooks/quickstart.py quickstart.ipynb` writes a copy Jupyter
# MAGIC   opens; **plain Python**: `python notebooks/quickstart.py` (the widgets keep their defaults; set
# MAGIC   `SPARK_FR_WIDGET_TREES=20` and the like to change them).
# MAGIC
# MAGIC The run logs its progress (trees done, percent, time left) under the cell; `spark_fr.set_verbosity("warning")`
# MAGIC turns that off.

# COMMAND ----------

# MAGIC %pip install spark_fr

# COMMAND ----------

import os

import spark_fr
from spark_fr.notebook import find_path
from spark_fr.runtime.session import get_spark

try:
    dbutils, display  # Databricks: its widgets and its display
except NameError:  # plain Python (the tests) or Jupyter: widgets keep their defaults, display prints or is IPython's
    from spark_fr.notebook import dbutils, display

DATA = find_path("shared/datasets", env="SPARK_FR_DATA")  # found from the working directory upwards
dbutils.widgets.text("input", f"{DATA}/mlc_emotions/emotions.arff", "input: table name or path")
dbutils.widgets.text("labels_xml", f"{DATA}/mlc_emotions/emotions.xml", "labels_xml: Mulan label file (or empty)")
dbutils.widgets.text("targets", "", "targets: columns, comma-separated (empty: from the data)")
dbutils.widgets.text("trees", "100", "trees")
dbutils.widgets.text("output", os.environ.get("SPARK_FR_OUT", "out/quickstart"), "output: folder for the results")

try:
    spark  # Databricks (and pyspark's shell): the notebook's session
except NameError:
    spark = get_spark()  # the active session, or a local one

# COMMAND ----------

# MAGIC %md
# MAGIC ## Rank
# MAGIC `spark_fr.rank` takes a Spark DataFrame or a path, and the options of `jobs/rank.py` (underscores for dashes).
# MAGIC Here: all three scores (Symbolic, Genie3, RF permutation), and one extra ranking per target.

# COMMAND ----------

source = dbutils.widgets.get("input")
# a name without a slash that is not a file is a catalog table, as `main.sales.features`
data = spark.table(source) if "/" not in source and not os.path.exists(source) else source
ranking = spark_fr.rank(
    data,
    targets=dbutils.widgets.get("targets") or None,
    labels_xml=dbutils.widgets.get("labels_xml") or None,
    trees=int(dbutils.widgets.get("trees")),
    scores="symbolic,genie3,rf", per_target=True, seed=1, spark=spark,
)
display(ranking)  # the run's facts and the top 10 features per score

# COMMAND ----------

# MAGIC %md
# MAGIC ## The ranking as a Spark DataFrame
# MAGIC One row per feature, score and target (`__all__` = all targets together): filter, join, chart it with
# MAGIC `display`, or append it to a Delta table with `ranking.write(path, format="delta")`.

# COMMAND ----------

table = ranking.to_spark(spark)
display(table.filter("score = 'genie3' AND target = '__all__'").orderBy("rank")
        .select("rank", "feature", "importance", "importance_std").limit(10))

# COMMAND ----------

best_per_target = (table.filter("score = 'genie3' AND target != '__all__' AND rank = 1")
                   .select("target", "feature", "importance").orderBy("target"))
display(best_per_target)

# COMMAND ----------

# MAGIC %md
# MAGIC ## Plot
# MAGIC `ranking.plot()` returns a matplotlib figure of the top features per score (error bars: the spread over
# MAGIC the trees); it shows inline as the value of a cell, or with `display(fig)`.

# COMMAND ----------

fig = ranking.plot(top=15)
display(fig)

# COMMAND ----------

# MAGIC %md
# MAGIC ## Save
# MAGIC `write` stores the table (`csv`, `parquet`, or rows appended to a Delta table) with the run's metadata;
# MAGIC `plot(path)` saves the chart as PNG.

# COMMAND ----------

output = dbutils.widgets.get("output")
print("wrote", ranking.write(os.path.join(output, "ranking"), format="csv"))
ranking.plot(os.path.join(output, "ranking.png"), top=15)
print("wrote", os.path.join(output, "ranking.png"))
