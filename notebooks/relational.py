# Databricks notebook source
# MAGIC %md
# MAGIC # spark_fr: ranking relational data
# MAGIC Which tables, links and columns of a bank's database predict whether a loan goes bad? The PKDD'99
# MAGIC financial data: loans, their accounts, the accounts' orders, dispositions, clients, cards and districts.
# MAGIC `spark_fr.rank_relational` generates aggregate features along the foreign keys (the mean amount of an
# MAGIC account's orders, per order category, ...), ranks them, and rolls the importances up to attributes
# MAGIC (`table.column`) and relations (links and attributes).
# MAGIC
# MAGIC * **Databricks**: run the `%pip` cell, then set the `schema` widget to your schema file. Your tables can be
# MAGIC   catalog tables (`source: {catalog: main.bank.loan}` in the schema) or DataFrames passed to
# MAGIC   `rank_relational` as below.
# MAGIC * **Jupyter**: `python -m spark_fr.notebook notebooks/relational.py relational.ipynb`; **plain Python**:
# MAGIC   `python notebooks/relational.py` from the project (the widgets keep their defaults).

# COMMAND ----------

# MAGIC %pip install spark_fr

# COMMAND ----------

import os

import spark_fr
from spark_fr.notebook import find_path
from spark_fr.relational import load_schema
from spark_fr.runtime.session import get_spark

try:
    dbutils, display  # Databricks: its widgets and its display
except NameError:  # plain Python (the tests) or Jupyter: widgets keep their defaults, display prints or is IPython's
    from spark_fr.notebook import dbutils, display

dbutils.widgets.text("schema", find_path("conf/relational/financial.yaml"), "schema: YAML file")
dbutils.widgets.text("trees", "50", "trees (bagging)")
dbutils.widgets.text("cv_folds", "10", "cv_folds: cross-validation folds (0: none)")
dbutils.widgets.text("output", os.environ.get("SPARK_FR_OUT", "out/relational"), "output: folder for the results")

try:
    spark  # Databricks (and pyspark's shell): the notebook's session
except NameError:
    spark = get_spark()  # the active session, or a local one

# COMMAND ----------

# MAGIC %md
# MAGIC ## The tables, as DataFrames
# MAGIC The schema names the tables, their keys and foreign keys and the target (`loan.status`). Here the tables
# MAGIC are read with Spark first, as they would be from a lake; the DataFrames replace the schema's file sources.

# COMMAND ----------

schema = load_schema(dbutils.widgets.get("schema"))
tables = {}
for name, table in schema.tables.items():
    source = table.source
    if getattr(source, "path", None) and getattr(source, "columns", None):  # the financial TSV files
        df = spark.read.csv(source.path, sep="\t", inferSchema=True).toDF(*source.columns)
        tables[name] = df
        print(f"{name:>9}: {df.count():>7,} rows, columns {', '.join(df.columns)}")

# COMMAND ----------

# MAGIC %md
# MAGIC ## Rank
# MAGIC Bagging of PCTs (the thesis's relational setting); `cv_folds` (10 by default) gives the model's
# MAGIC cross-validated accuracy, which says whether the ranking is worth reading.

# COMMAND ----------

ranking = spark_fr.rank_relational(tables, schema=schema, trees=int(dbutils.widgets.get("trees")),
                                   cv_folds=int(dbutils.widgets.get("cv_folds")), seed=1, spark=spark)
display(ranking)  # relations, attributes and features: the top 10 per score

# COMMAND ----------

# MAGIC %md
# MAGIC ## Relations, attributes and features as a Spark DataFrame
# MAGIC The table has the usual ranking columns plus `level` and `lineage` (JSON: the path, attribute and
# MAGIC aggregates of a feature).

# COMMAND ----------

table = ranking.to_spark(spark)
display(table.filter("score = 'genie3' AND level = 'relation'").orderBy("rank")
        .select("rank", "feature", "importance").limit(10))
display(table.filter("score = 'genie3' AND level = 'feature'").orderBy("rank")
        .select("rank", "feature", "lineage").limit(5))

# COMMAND ----------

fig = ranking.plot(top=12)
display(fig)

# COMMAND ----------

output = dbutils.widgets.get("output")
ranking.plot(os.path.join(output, "financial.png"), top=12)
print("wrote", ranking.write(os.path.join(output, "financial"), format="csv"))
