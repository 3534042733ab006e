"""The catalogue of hostile inputs, run as real ``jobs/rank.py`` processes: every bad input or option gives
exit code 2 and exactly one line on standard error that names the problem (no traceback, no Spark or Java
log), and nothing changes at or beside the output (every file under the case's folder is hashed before and
after). The classes (issue "never lose a user's file, never rank silently wrong"):

1. data loss: an output that is not ours is refused, whatever the mode;
2. output after failure: impossible outputs and plots are found before the work starts;
3. silently wrong rankings: values and options the ranking cannot honour are refused;
4. tracebacks: failures inside Spark, bad options in YAML or on the command line: one line;
5. misleading messages: the message names what is wrong (file, line, column, option);
plus the bad inputs the earlier suite covered. Cases that are handled (not refused) are tested at the end.
"""
import hashlib
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.conftest import DATASETS, JOB, _subprocess_env
from tests.job_in_process import run_as_process
from tests.paths import ROOT

ENB = DATASETS / "mtr_enb/enb.arff"
ARFF_HEAD = "@relation t\n@attribute a numeric\n@attribute b {x,y}\n@attribute c numeric\n@data\n"


def write(path: Path, text) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def csv_rows(n=40, target=lambda i: f"{i % 3 * 1.5}", bad=None):
    rows = [f"{i},{(i * 7) % 11 * 0.5},{target(i)}" for i in range(n)]
    for i, text in (bad or {}).items():
        rows[i] = text
    return "a,b,y\n" + "\n".join(rows) + "\n"


@dataclass
class Case:
    """One hostile input: files to create (relative to the case folder), arguments, expected error."""

    cls: str
    files: dict
    args: list
    fragments: tuple
    code: int = 2
    setup: object = None          # a function of the case folder, for files that need code (Delta, Parquet)
    env: dict = field(default_factory=dict)


def _foreign_delta(root: Path):
    from deltalake import write_deltalake

    write_deltalake(str(root / "table"), pd.DataFrame({"user_id": [1, 2], "amount": [3.5, 4.0]}))


def _conflicting_parquet_parts(root: Path):
    (root / "pq").mkdir()
    pd.DataFrame({"a": [1.0, 2.0, 3.0], "y": [1.0, 2.0, 0.5]}).to_parquet(root / "pq/p0.parquet")
    pd.DataFrame({"a": ["x", "y", "z"], "y": [1.0, 2.0, 0.5]}).to_parquet(root / "pq/p1.parquet")


def _timestamp_target(root: Path):
    pdf = pd.DataFrame({"x": np.arange(30.0), "z": np.arange(30.0) % 4,
                        "when": pd.date_range("2026-01-01", periods=30, freq="D")})
    pdf.to_parquet(root / "t.parquet", coerce_timestamps="us")


LABELS_XML = '<?xml version="1.0"?>\n<labels xmlns="http://mulan.sourceforge.net/labels">\n' \
             '<label name="c"></label><label name="a"></label>\n</labels>\n'

CASES = {
    # 1. data loss
    "output_is_the_input_folder": Case("data loss", {"in/data.csv": csv_rows(), "in/notes.txt": "mine"},
                                       ["--input", "{d}/in/data.csv", "--targets", "y", "--output", "{d}/in"],
                                       ("--output", "holds files spark_fr did not write", "data.csv")),
    "output_is_a_file": Case("data loss", {"in/data.csv": csv_rows(), "notes.txt": "mine"},
                             ["--input", "{d}/in/data.csv", "--targets", "y", "--output", "{d}/notes.txt"],
                             ("--output", "notes.txt", "is not a directory")),
    "output_user_folder_mode_error": Case("data loss", {"in/data.csv": csv_rows(), "user/a.txt": "mine"},
                                          ["--input", "{d}/in/data.csv", "--targets", "y", "--output", "{d}/user",
                                           "--mode", "error"], ("holds files spark_fr did not write", "a.txt")),
    "output_user_folder_as_delta": Case("data loss", {"in/data.csv": csv_rows(), "user/a.txt": "mine"},
                                        ["--input", "{d}/in/data.csv", "--targets", "y", "--output", "{d}/user",
                                         "--output-format", "delta"], ("is a directory that is not a Delta table",)),
    "output_foreign_delta_table": Case("data loss", {"in/data.csv": csv_rows()},
                                       ["--input", "{d}/in/data.csv", "--targets", "y", "--output", "{d}/table",
                                        "--output-format", "delta", "--mode", "overwrite"],
                                       ("is a Delta table that does not hold rankings", "user_id"),
                                       setup=_foreign_delta),
    "plot_replaces_a_user_png": Case("data loss", {"in/data.csv": csv_rows(), "p.png": b"\x89PNG\r\n\x1a\nuser's"},
                                     ["--input", "{d}/in/data.csv", "--targets", "y", "--output", "{d}/o",
                                      "--plot", "{d}/p.png"], ("--plot", "p.png", "not written by spark_fr")),
    # 2. output after failure
    "plot_is_a_directory": Case("output after failure", {"in/data.csv": csv_rows(), "pics/keep.txt": "mine"},
                                ["--input", "{d}/in/data.csv", "--targets", "y", "--output", "{d}/o",
                                 "--plot", "{d}/pics"], ("--plot", "is a directory")),
    "output_under_dev_null": Case("output after failure", {"in/data.csv": csv_rows()},
                                  ["--input", "{d}/in/data.csv", "--targets", "y", "--output", "/dev/null/x"],
                                  ("--output /dev/null/x cannot be created", "/dev/null is not a directory")),
    "plot_under_dev_null": Case("output after failure", {"in/data.csv": csv_rows()},
                                ["--input", "{d}/in/data.csv", "--targets", "y", "--output", "{d}/o", "--plot",
                                 "/dev/null/p.png"], ("--plot /dev/null/p.png cannot be created",)),
    "output_not_writable": Case("output after failure", {"in/data.csv": csv_rows()},
                                ["--input", "{d}/in/data.csv", "--targets", "y", "--output", "/proc/spark_fr_out"],
                                ("--output /proc/spark_fr_out cannot be written",)),
    # 3. silently wrong rankings
    "infinite_feature_under_relief": Case("silently wrong", {"d.csv": csv_rows(bad={7: "7,inf,1.5"})},
                                          ["--input", "{d}/d.csv", "--targets", "y", "--method", "relief"],
                                          ("d.csv", "column 'b'", "infinite value")),
    "infinite_target": Case("silently wrong", {"d.csv": csv_rows(bad={3: "3,1.5,-inf"})},
                            ["--input", "{d}/d.csv", "--targets", "y"], ("column 'y'", "infinite value (-inf)")),
    "relief_sigma_inf": Case("silently wrong", {}, ["--input", str(ENB), "--method", "relief", "--relief-sigma",
                                                    "inf"], ("--relief-sigma", "not inf")),
    "min_samples_leaf_inf": Case("silently wrong", {}, ["--input", str(ENB), "--min-samples-leaf", "inf"],
                                 ("--min-samples-leaf", "not inf")),
    "mlc_forced_on_continuous_targets": Case("silently wrong", {}, ["--input", str(ENB), "--targets", "Y1,Y2",
                                                                    "--task", "mlc"],
                                             ("label column 'Y1'", "must be 0/1")),
    "labels_file_naming_continuous_columns": Case(
        "silently wrong", {"d.arff": ARFF_HEAD + "".join(f"{i * 0.3},{'xy'[i % 2]},{i * 1.7}\n" for i in range(30)),
                           "labels.xml": LABELS_XML},
        ["--input", "{d}/d.arff", "--labels-xml", "{d}/labels.xml"], ("label column 'c'", "must be 0/1")),
    "regression_on_a_string_target": Case("silently wrong", {"d.csv": csv_rows(target=lambda i: "ab"[i % 2])},
                                          ["--input", "{d}/d.csv", "--targets", "y", "--task", "regression"],
                                          ("target column 'y' is nominal", "--task regression")),
    "yaml_boolean_as_string": Case("silently wrong", {"c.yaml": f"input: {ENB}\nbootstrap: 'false'\n"},
                                   ["--config", "{d}/c.yaml"], ("c.yaml", "--bootstrap must be true or false",
                                                                "'false'")),
    "csv_duplicate_column_names": Case("silently wrong", {"d.csv": "x1,x1,y\n" + "".join(f"{i},{i * 2},{i % 3}\n"
                                                                                       for i in range(20))},
                                       ["--input", "{d}/d.csv", "--targets", "y"],
                                       ("d.csv line 1", "duplicate column name 'x1'")),
    "csv_parts_with_renamed_header": Case("silently wrong", {"parts/part-0.csv": csv_rows(20),
                                                             "parts/part-1.csv": csv_rows(20).replace("a,b,y", "a,c,y")},
                                          ["--input", "{d}/parts", "--targets", "y"],
                                          ("part-1.csv line 1", "the header differs")),
    "yaml_per_target_as_string": Case("silently wrong", {"c.yaml": f"input: {ENB}\nper_target: 'no'\n"},
                                      ["--config", "{d}/c.yaml"], ("--per-target must be true or false",)),
    # 4. tracebacks
    "seed_not_an_integer": Case("traceback", {}, ["--input", str(ENB), "--seed", "1.5"],
                                ("--seed must be an integer", "'1.5'")),
    "bad_master": Case("traceback", {}, ["--input", str(ENB), "--master", "lokal[2]"],
                       ("--master 'lokal[2]' is not a Spark master URL",)),
    "yaml_bad_log_level": Case("traceback", {"c.yaml": f"input: {ENB}\nlog_level: loud\n"},
                               ["--config", "{d}/c.yaml"], ("--log-level must be one of",)),
    "bad_choice_has_no_usage_text": Case("traceback", {}, ["--input", str(ENB), "--ensemble", "forest"],
                                         ("--ensemble must be one of rf, bagging, extra_trees", "'forest'")),
    "unknown_flag": Case("traceback", {}, ["--input", str(ENB), "--treez", "5"], ("unrecognized arguments",)),
    "yaml_number_as_string": Case("traceback", {"c.yaml": f"input: {ENB}\ntrees: '10'\n"},
                                  ["--config", "{d}/c.yaml"], ("--trees must be a positive integer", "'10'")),
    "yaml_not_a_mapping": Case("traceback", {"c.yaml": "- just\n- a list\n"}, ["--config", "{d}/c.yaml"],
                               ("c.yaml", "must be a mapping")),
    "empty_parquet_file": Case("traceback", {"e.parquet": b""}, ["--input", "{d}/e.parquet", "--targets", "y"],
                               ("e.parquet", "the file is empty (0 bytes)")),
    "parquet_parts_with_conflicting_types": Case("traceback", {}, ["--input", "{d}/pq", "--targets", "y"],
                                                 ("column 'a' is string here but double",),
                                                 setup=_conflicting_parquet_parts),
    # 5. misleading messages
    "timestamp_target": Case("misleading", {}, ["--input", "{d}/t.parquet", "--targets", "when"],
                             ("target column 'when' has the type timestamp",), setup=_timestamp_target),
    "csv_unterminated_quote": Case("misleading", {"d.csv": csv_rows(bad={9: '9,"2.5,1'})},
                                   ["--input", "{d}/d.csv", "--targets", "y"],
                                   ("d.csv line 11", "never closed")),
    "infinite_target_is_not_called_constant": Case("misleading", {"d.csv": csv_rows(target=lambda i: "inf")},
                                                   ["--input", "{d}/d.csv", "--targets", "y"],
                                                   ("column 'y'", "infinite value")),
    # the bad inputs the earlier suite covered
    "missing_input_file": Case("earlier", {}, ["--input", "{d}/nope.arff"], ("input not found", "nope.arff")),
    "unknown_target_column": Case("earlier", {}, ["--input", str(ENB), "--targets", "Y1,Y9"],
                                  ("target column 'Y9' not found", "Relative_compactness")),
    "csv_without_a_target": Case("earlier", {"d.csv": "a,b\n1,2\n3,4\n"}, ["--input", "{d}/d.csv"],
                                 ("no target given", "--targets")),
    "target_all_missing": Case("earlier", {"d.arff": ARFF_HEAD + "".join(f"{i},x,?\n" for i in range(20))},
                               ["--input", "{d}/d.arff", "--targets", "c"], ("target column 'c' has no known values",)),
    "single_class": Case("earlier", {"d.arff": ARFF_HEAD + "".join(f"{i},x,{i % 3}\n" for i in range(20))},
                         ["--input", "{d}/d.arff", "--targets", "b"], ("'b' has a single class 'x'",)),
    "constant_target": Case("earlier", {"d.arff": ARFF_HEAD + "".join(f"{i},x,5\n" for i in range(20))},
                            ["--input", "{d}/d.arff", "--targets", "c"], ("target column 'c' is constant",)),
    "text_in_a_numeric_csv_column": Case("earlier", {"d.csv": csv_rows(bad={17: "17,eight point five,1"})},
                                         ["--input", "{d}/d.csv", "--targets", "y"],
                                         ("d.csv line 19", "column 'b'", "'eight point five' is not a number")),
    "csv_row_with_missing_fields": Case("earlier", {"d.csv": csv_rows(bad={4: "4,2.0"})},
                                        ["--input", "{d}/d.csv", "--targets", "y"], ("d.csv line 6",
                                                                                     "expected 3 fields")),
    "csv_header_only": Case("earlier", {"d.csv": "a,b,y\n"}, ["--input", "{d}/d.csv", "--targets", "y"],
                            ("no rows",)),
    "arff_without_rows": Case("earlier", {"d.arff": ARFF_HEAD}, ["--input", "{d}/d.arff", "--targets", "c"],
                              ("no rows",)),
    "empty_csv_file": Case("earlier", {"d.csv": ""}, ["--input", "{d}/d.csv", "--targets", "y"], ("empty",)),
    "undeclared_arff_value": Case("earlier", {"d.arff": ARFF_HEAD + "".join(
        f"{i},{'z' if i == 30 else 'xy'[i % 2]},{i * 0.1}\n" for i in range(40))},
        ["--input", "{d}/d.arff", "--targets", "c"], ("d.arff line 36", "attribute 'b'", "'z'")),
    "arff_row_with_missing_values": Case("earlier", {"d.arff": ARFF_HEAD + "".join(
        (f"{i},x\n" if i == 30 else f"{i},{'xy'[i % 2]},{i * 0.1}\n") for i in range(40))},
        ["--input", "{d}/d.arff", "--targets", "c"], ("d.arff line 36", "expected 3 values")),
    "duplicate_arff_attribute": Case("earlier", {"d.arff": "@relation t\n@attribute a numeric\n@attribute a numeric\n"
                                                           "@data\n1,2\n"}, ["--input", "{d}/d.arff"],
                                     ("d.arff line 3", "duplicate")),
    "hierarchical_label_not_in_the_hierarchy": Case("earlier", {"h.arff": (
        "@relation t\n@attribute x numeric\n@attribute z numeric\n@attribute class hierarchical A,A/a1,B\n@data\n"
        + "".join(("2.1,0,B@A/a7\n" if i == 21 else f"{i * 0.1},{i % 3},{'A/a1' if i % 2 else 'B'}\n")
                  for i in range(30)))}, ["--input", "{d}/h.arff", "--method", "relief"],
        ("h.arff line 27", "column 'class'", "label 'A/a7' is not in the hierarchy")),
    "several_arff_inputs_differ": Case("earlier", {"a.arff": ARFF_HEAD + "1,x,0.5\n2,y,0.7\n",
                                                   "b.arff": ARFF_HEAD.replace("@attribute c numeric",
                                                                               "@attribute c2 numeric") + "3,x,0.1\n"},
                                       ["--input", "{d}/a.arff,{d}/b.arff", "--targets", "c"],
                                       ("b.arff", "attribute 'c2' differs", "a.arff")),
    "unknown_option_in_config": Case("earlier", {"c.yaml": "input: x.arff\ntreez: 5\n"}, ["--config", "{d}/c.yaml"],
                                     ("unknown option 'treez'",)),
    "zero_trees": Case("earlier", {}, ["--input", str(ENB), "--trees", "0"], ("--trees must be a positive integer",)),
    "rf_score_without_bootstrap": Case("earlier", {}, ["--input", str(ENB), "--ensemble", "extra_trees", "--scores",
                                                       "rf"], ("--scores rf needs out-of-bag rows",)),
    "ssl_weight_without_semi_supervised": Case("earlier", {}, ["--input", str(ENB), "--ssl-weight", "0.2"],
                                               ("--ssl-weight applies to semi-supervised ranking",)),
    "unsupervised_with_targets": Case("earlier", {}, ["--input", str(ENB), "--targets", "Y1", "--method", "relief",
                                                      "--task", "unsupervised"],
                                      ("--task unsupervised takes no --targets",)),
}


# issue 20, second round: relational sources (schemas and headerless TSV files, run with --schema)
REL_CUST = "".join(f"{i}\t{'ab'[i % 2]}\t{i * 0.5}\t2021-01-{i + 1:02d}\n" for i in range(1, 13))
REL_TX = "".join(f"{i}\t{i % 12 + 1}\t{i * 1.5}\n" for i in range(40))


def rel_schema(depth: int = 1, parquet: bool = False, tx_types: str = "", cycle: bool = False) -> str:
    """A customer <- transaction schema over cust.tsv and tx.tsv (or tx.parquet)."""
    source = "tx.parquet" if parquet else "tx.tsv, columns: [tid, cid, amount]"
    types = f", types: {{{tx_types}}}" if tx_types else ""
    cust = ("[cid, cls, v, when, ref], key: cid, foreign_keys: {ref: cust}" if cycle else "[cid, cls, v, when], key: cid")
    return (f"tables:\n  cust: {{source: cust.tsv, columns: {cust}}}\n"
            f"  tx: {{source: {source}, key: tid, foreign_keys: {{cid: cust}}{types}}}\n"
            f"target: {{table: cust, column: cls}}\nmax_depth: {depth}\n")


def _tx_parquet_declared_numeric(root: Path):
    pd.DataFrame({"tid": np.arange(40), "cid": np.arange(40) % 12 + 1,
                  "amount": ["1.5"] * 38 + ["x", "2"]}).to_parquet(root / "tx.parquet")


def _tx_parquet_infinite(root: Path):
    pd.DataFrame({"tid": np.arange(40), "cid": np.arange(40) % 12 + 1,
                  "amount": [1.0] * 39 + [np.inf]}).to_parquet(root / "tx.parquet")


CASES.update({
    "relational_decimal_comma": Case("silently wrong", {"s.yaml": rel_schema(), "cust.tsv": REL_CUST,
                                                        "tx.tsv": REL_TX.replace("\t4.5\n", "\t4,5\n")},
                                     ["--schema", "{d}/s.yaml"],
                                     ("tx.tsv line 4", "column 'amount'", "'4,5' is not a number")),
    "relational_impossible_date": Case("silently wrong", {"s.yaml": rel_schema(), "tx.tsv": REL_TX,
                                                          "cust.tsv": REL_CUST.replace("2021-01-03", "2021-02-30")},
                                       ["--schema", "{d}/s.yaml"],
                                       ("cust.tsv line 2", "column 'when'", "'2021-02-30' is not a date")),
    "relational_short_row": Case(
        "silently wrong", {"s.yaml": rel_schema(), "cust.tsv": REL_CUST, "tx.tsv": REL_TX.replace("5\t6\t7.5\n", "5\t6\n")},
        ["--schema", "{d}/s.yaml"], ("tx.tsv line 6", "expected 3 fields", "found 2")),
    "relational_depth_30": Case("unbounded work", {"s.yaml": rel_schema(30, cycle=True),
                                                   "cust.tsv": "".join(f"{i}\t{'ab'[i % 2]}\t{i}\t2021-01-01\t{i}\n"
                                                                       for i in range(1, 13)),
                                                   "tx.tsv": REL_TX},
                                ["--schema", "{d}/s.yaml"],
                                ("max_depth 30 would generate about", "features", "--max-features-generated")),
    "relational_declared_numeric_on_text": Case("traceback", {"s.yaml": rel_schema(parquet=True, tx_types="amount: numeric"),
                                                              "cust.tsv": REL_CUST},
                                                ["--schema", "{d}/s.yaml"],
                                                ("table 'tx'", "tx.parquet", "column 'amount' is declared numeric but "
                                                 "holds 'x'"), setup=_tx_parquet_declared_numeric),
    "relational_infinite_source_value": Case("misleading", {"s.yaml": rel_schema(parquet=True),
                                                            "cust.tsv": REL_CUST},
                                             ["--schema", "{d}/s.yaml"],
                                             ("table 'tx'", "tx.parquet", "column 'amount' holds an infinite value"),
                                             setup=_tx_parquet_infinite),
    "relational_empty_target_table": Case("misleading", {"s.yaml": rel_schema(), "cust.tsv": "", "tx.tsv": REL_TX},
                                          ["--schema", "{d}/s.yaml"],
                                          ("the target table 'cust' has no rows", "cust.tsv")),
    "relational_overflowing_sum": Case("misleading", {"s.yaml": rel_schema(), "cust.tsv": REL_CUST,
                                                      "tx.tsv": "".join(f"{i}\t{i % 12 + 1}\t1.7e308\n" for i in range(40))},
                                       ["--schema", "{d}/s.yaml"],
                                       ("generated feature 'tx__amount__sum'", "of table 'tx'", "tx.tsv",
                                        "scale them down")),
})


# issue 20, second round: outputs, methods and the API
def pa_int64():
    import pyarrow as pa

    return pa.int64()


def _arff_rows(n=300, seed=0) -> str:
    """A classification ARFF file (read on the driver: these cases never start Spark)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return ARFF_HEAD.replace("@attribute c numeric", "@attribute c numeric\n@attribute y {p,q}") + "".join(
        f"{a:.4f},{'xy'[i % 2]},{c:.4f},{'pq'[int(a > 0)]}\n" for i, (a, _, c) in enumerate(X))


def _ranking_like_delta(root: Path, *, rank_type=None, mark: bool = False):
    """A Delta table with the ranking's columns: the ranking's types (as spark_fr before the mark wrote it), or
    one column of another type (a user's table that merely has the names)."""
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake

    from spark_fr.io.writers import SCHEMA

    schema = SCHEMA if rank_type is None else SCHEMA.set(SCHEMA.get_field_index("rank"), pa.field("rank", rank_type))
    row = {"feature": "a", "score": "genie3", "target": "__all__", "importance": 1.0, "rank": 1,
           "importance_std": None, "run_id": "r", "created_at": pd.Timestamp("2026-01-01", tz="UTC"), "params": "{}"}
    write_deltalake(str(root / "table"), pa.Table.from_pylist([row], schema=schema))
    if mark:
        DeltaTable(str(root / "table")).alter.set_table_properties({"spark_fr.rankings": "true"},
                                                                   raise_if_not_exists=False)


CASES.update({
    # 1. data loss: a Delta table is ours only with the ranking's types and spark_fr's mark
    "delta_table_with_the_ranking_names_but_other_types": Case(
        "data loss", {"in/data.csv": csv_rows()},
        ["--input", "{d}/in/data.csv", "--targets", "y", "--output", "{d}/table", "--output-format", "delta",
         "--mode", "overwrite"], ("does not hold rankings", "column 'rank' is long, a ranking's is integer"),
        setup=lambda root: _ranking_like_delta(root, rank_type=pa_int64())),
    "delta_table_of_an_earlier_spark_fr_without_the_mark_overwrite": Case(
        "data loss", {"in/data.csv": csv_rows()},
        ["--input", "{d}/in/data.csv", "--targets", "y", "--output", "{d}/table", "--output-format", "delta",
         "--mode", "overwrite"], ("without spark_fr's mark", "SET TBLPROPERTIES ('spark_fr.rankings' = 'true')"),
        setup=_ranking_like_delta),
    "delta_table_of_an_earlier_spark_fr_without_the_mark_append": Case(
        "data loss", {"in/data.csv": csv_rows()},
        ["--input", "{d}/in/data.csv", "--targets", "y", "--output", "{d}/table", "--output-format", "delta"],
        ("without spark_fr's mark", "set_table_properties({'spark_fr.rankings': 'true'}"), setup=_ranking_like_delta),
    "marked_table_with_other_types_is_still_refused": Case(
        "data loss", {"in/data.csv": csv_rows()},
        ["--input", "{d}/in/data.csv", "--targets", "y", "--output", "{d}/table", "--output-format", "delta",
         "--mode", "overwrite"], ("does not hold rankings", "column 'rank' is long"),
        setup=lambda root: _ranking_like_delta(root, rank_type=pa_int64(), mark=True)),
    # 2. output after failure: a plot inside the output (any format) is found before the work
    **{f"plot_inside_a_{fmt}_output": Case(
        "output after failure", {"in/data.csv": csv_rows()},
        ["--input", "{d}/in/data.csv", "--targets", "y", "--output", "{d}/out/o", "--output-format", fmt,
         "--plot", "{d}/out/o/p.png"], ("--plot", "out/o/p.png is inside --output", "e.g. --plot")) for fmt in
       ("csv", "parquet", "delta")},
    "output_inside_the_plot": Case("output after failure", {"in/data.csv": csv_rows()},
                                   ["--input", "{d}/in/data.csv", "--targets", "y", "--output", "{d}/p.png/o",
                                    "--plot", "{d}/p.png"], ("--output", "is inside --plot")),
    # 3. silently wrong: boosting rounds whose sample cannot be split (every importance 0, file order)
    "boosting_example_fraction_too_small_to_split": Case(
        "silently wrong", {"d.arff": _arff_rows()},
        ["--input", "{d}/d.arff", "--targets", "y", "--method", "boosting", "--example-fraction", "0.01"],
        ("--example-fraction 0.01", "3 of the 300 training rows", "a split needs 4 (--min-samples-leaf 2 on each side)",
         "--example-fraction 0.014 or more")),
    "boosting_example_fraction_too_small_for_a_cv_fold": Case(
        "silently wrong", {"d.arff": _arff_rows()},
        ["--input", "{d}/d.arff", "--targets", "y", "--method", "boosting", "--example-fraction", "0.015",
         "--cv-folds", "3"], ("--example-fraction 0.015", "3 of the 200 training rows of a --cv-folds 3 fold")),
    "boosting_min_samples_leaf_above_half_the_rows": Case(
        "silently wrong", {"d.arff": _arff_rows()},
        ["--input", "{d}/d.arff", "--targets", "y", "--method", "boosting", "--min-samples-leaf", "150.5",
         "--example-fraction", "1"], ("300 training rows are fewer than a split needs 302", "--min-samples-leaf")),
})


def snapshot(root: Path) -> dict:
    """Every file and folder under ``root``: its content hash (folders: None)."""
    out = {}
    for p in sorted(root.rglob("*")):
        out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None
    return out


def prepare_case(name: str, root: Path) -> tuple:
    """The case's folder under ``root`` with its files: (folder, the job's arguments, its environment)."""
    case = CASES[name]
    d = root / name
    d.mkdir()
    for rel, text in case.files.items():
        write(d / rel, text)
    if case.setup:
        case.setup(d)
    args = [a.replace("{d}", str(d)) for a in case.args]
    if "--output" not in args and "--config" not in args:
        args += ["--output", str(d / "out")]
    return d, [*args, "--log-level", "error"], {**_subprocess_env(), **case.env}


def run_case(d: Path, args: list, env: dict) -> dict:
    """The case as a real ``python jobs/rank.py`` process."""
    before = snapshot(d)
    r = subprocess.run([sys.executable, str(JOB), *args], capture_output=True, text=True, env=env, timeout=600,
                       cwd=str(d))
    return {"code": r.returncode, "stderr": r.stderr, "stdout": r.stdout, "before": before, "after": snapshot(d),
            "folder": str(d)}


def run_case_in_process(d: Path, args: list, env: dict) -> dict:
    """The case run by ``jobs/rank.py`` in this process under the suite's session (tests/job_in_process.py)."""
    before = snapshot(d)
    return {**run_as_process(JOB, args, cwd=d, env=env), "before": before, "after": snapshot(d), "folder": str(d)}


#: the cases also run as real processes, one for each way out of jobs/rank.py, checked as the others and
#: compared with their in-process run; SPARK_FR_TEST_HOSTILE_PROCESSES=all (or NAME,NAME...) runs every case (or
#: those) both ways: the proof that the in-process run shows what a process shows
AS_PROCESSES = {
    "seed_not_an_integer": "refused with the options, before a session exists: sys.exit(2)",
    "output_is_a_file": "refused before Spark is needed: the lazy JVM start is abandoned, os._exit(2)",
    "text_in_a_numeric_csv_column": "refused by a Spark read: the JVM started, a Spark task failed, sys.exit(2)",
}
_CHOSEN = os.environ.get("SPARK_FR_TEST_HOSTILE_PROCESSES", "")
if _CHOSEN:
    AS_PROCESSES = {name: "chosen: SPARK_FR_TEST_HOSTILE_PROCESSES" for name in
                    (CASES if _CHOSEN == "all" else _CHOSEN.split(","))}


@pytest.fixture(scope="module")
def outcomes(spark, tmp_path_factory):
    """Every case run once by jobs/rank.py in this process under the suite's session (a real process starts a
    JVM for each case that reads with Spark: 40-90 s each under load), one after the other; meanwhile the cases of
    ``AS_PROCESSES`` run as real processes too (two threads): {'in process': ..., 'process': ...}."""
    here, apart = tmp_path_factory.mktemp("hostile"), tmp_path_factory.mktemp("hostile_processes")
    planned = {name: prepare_case(name, apart) for name in AS_PROCESSES}
    with ThreadPoolExecutor(2) as pool:
        futures = {name: pool.submit(run_case, *planned[name]) for name in AS_PROCESSES}
        in_process = {name: run_case_in_process(*prepare_case(name, here)) for name in CASES}
        return {"in process": in_process, "process": {name: f.result() for name, f in futures.items()}}


def check_outcome(case: Case, got: dict) -> None:
    lines = got["stderr"].strip().splitlines()
    assert got["code"] == case.code, got["stderr"][-3000:]
    assert len(lines) == 1 and lines[0].startswith("error: "), got["stderr"][-3000:]
    for fragment in case.fragments:
        assert fragment in lines[0], lines[0]
    assert "Traceback" not in got["stderr"] and got["stdout"] == ""
    assert got["after"] == got["before"], "files changed at or beside the output"


def test_every_class_of_the_issue_has_cases():
    classes = {c.cls for c in CASES.values()}
    assert classes == {"data loss", "output after failure", "silently wrong", "traceback", "misleading", "earlier",
                       "unbounded work"}


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_input_is_one_line_and_changes_nothing(outcomes, name):
    check_outcome(CASES[name], outcomes["in process"][name])


@pytest.mark.parametrize("name", list(AS_PROCESSES))
def test_hostile_input_as_a_real_process_is_the_same(outcomes, name):
    """The real process (its interpreter, imports, JVM start and exit) checked as the rest, and the run in this
    process gives the same exit code, output and files (paths shown relative to the case's folder)."""
    proc, here = outcomes["process"][name], outcomes["in process"][name]
    check_outcome(CASES[name], proc)

    def shown(got):  # the files themselves may differ (a Delta table's file names and times): whether they changed
        return {"code": got["code"], "stdout": got["stdout"], "stderr": got["stderr"].replace(got["folder"], "{d}"),
                "files changed": got["after"] != got["before"]}

    assert shown(here) == shown(proc), AS_PROCESSES[name]


# ----- cases that are handled, not refused --------------------------------------------------------------
def _rank(spark, pdf, **kw):
    import spark_fr

    return spark_fr.rank(spark.createDataFrame(pdf), spark=spark, trees=30, seed=4, **kw).to_pandas()


def _planted(n=300, seed=0):
    rng = np.random.default_rng(seed)
    pdf = pd.DataFrame(rng.normal(size=(n, 5)), columns=[f"x{i}" for i in range(5)])
    pdf["y"] = 3 * pdf.x0 + pdf.x1 + rng.normal(0, 0.1, n)
    pdf["z"] = pdf.x2 - 2 * pdf.x3 + rng.normal(0, 0.1, n)
    return pdf


def test_targets_near_the_largest_double_give_the_same_task_as_the_targets_scaled_down():
    """Squares of such values overflow (every importance became 0). A column is multiplied by a power of two
    first, which is exact: the clustering matrix, prototypes, errors and Relief's scaled targets are bit for bit
    those of the column divided by 2**1020."""
    from spark_fr import tasks
    from spark_fr.relief.params import ReliefParams

    pdf = _planted()
    Y = pdf[["y", "z"]].to_numpy()
    Y[5, 1] = np.nan
    big = Y * 2.0 ** 1020
    with np.errstate(all="ignore"):
        assert np.nanmax(np.abs(big)) > 1e307 and not np.isfinite(np.nanvar(big, axis=0)).any()  # naive: overflow
    small_fit, big_fit = tasks.get("mtr").fit(Y, ["y", "z"]), tasks.get("mtr").fit(big, ["y", "z"])
    np.testing.assert_array_equal(small_fit.clustering_matrix(small_fit.targets(Y)),
                                  big_fit.clustering_matrix(big_fit.targets(big)))
    pred = np.nanmean(Y, axis=0) * np.ones_like(Y)
    assert big_fit.error(big_fit.targets(big), big_fit.targets(pred * 2.0 ** 1020)) == small_fit.error(Y, pred)
    mtr = tasks.get("mtr")
    np.testing.assert_array_equal(mtr.relief_target(Y, ReliefParams()).values,
                                  mtr.relief_target(big, ReliefParams()).values)


@pytest.mark.parametrize("method", ["ensemble", "relief"])
def test_targets_near_the_largest_double_rank_the_planted_features_first(spark, method):
    pdf = _planted()
    big = pdf.copy()
    big["y"] = pdf.y * 2.0 ** 1020
    big["z"] = pdf.z * 2.0 ** 1015
    t = _rank(spark, big, targets="y,z", per_target=True, method=method)
    assert np.isfinite(t.importance).all() and (t.importance != 0).any()
    for score, g in t[t.target == "__all__"].groupby("score"):
        assert set(g.nsmallest(4, "rank").feature) == {"x0", "x1", "x2", "x3"}, score
    for target, relevant in (("y", {"x0", "x1"}), ("z", {"x2", "x3"})):
        g = t[(t.target == target) & (t.score == ("genie3" if method == "ensemble" else "relief"))]
        assert set(g.nsmallest(2, "rank").feature) == relevant, target


def test_features_near_the_largest_double_scale_without_overflow_under_relief(spark):
    pdf = _planted()
    big = pdf.copy()
    big["x0"] = np.sign(pdf.x0) * (np.abs(pdf.x0) / np.abs(pdf.x0).max()) * 1.7e308
    with np.errstate(over="ignore"):
        assert np.isfinite(big.x0).all() and np.isinf(big.x0.max() - big.x0.min())  # the range overflows
    t = _rank(spark, big, targets="y", method="relief")
    assert np.isfinite(t.importance).all()
    assert t.nsmallest(1, "rank").feature.iloc[0] == "x0"


def test_a_numeric_target_forced_to_classification_uses_its_values_as_classes(spark):
    pdf = _planted()
    pdf["label"] = (pdf.x0 > 0).astype(int) + 2 * (pdf.x4 > 1)
    t = _rank(spark, pdf.drop(columns=["y", "z"]), targets="label", task="classification")
    top = t[t.score == "genie3"].nsmallest(2, "rank")
    assert set(top.feature) == {"x0", "x4"}
    params = json.loads(t.params.iloc[0])
    assert params["task"] == "classification"


def test_no_nan_importance_reaches_the_output():
    from spark_fr.ranking import build_table
    from spark_fr.results import ScoreKey, ScoreResult

    bad = [ScoreResult(ScoreKey("relief"), np.array([0.2, np.nan, 0.1]), None)]
    with pytest.raises(ValueError, match="'relief'.*nan for feature 'b'"):
        build_table(["a", "b", "c"], np.ones(3, bool), bad, [], "r", pd.Timestamp.now(tz="UTC"), {})
    ok = build_table(["a", "b", "c"], np.array([True, False, True]), bad, [], "r", pd.Timestamp.now(tz="UTC"), {})
    assert ok.set_index("feature").loc["b", "importance"] == 0.0  # an unusable feature is 0, last


# issue 20, second round: a ranking without information is handled (not refused): one warning line, run.json
CONSTANT_ARFF = ARFF_HEAD + "".join(f"1,x,{i % 3}.5\n" for i in range(40))
FINANCIAL = ROOT / "conf/relational/financial.yaml"


@pytest.mark.parametrize("files,args,why", [
    ({"d.arff": CONSTANT_ARFF}, ["--targets", "c", "--trees", "5"],
     "every feature is constant or missing on the 40 rows used"),
    ({"d.arff": CONSTANT_ARFF}, ["--targets", "c", "--method", "relief"],
     "every feature is constant or missing on the 40 rows used"),
    ({"d.arff": _arff_rows()}, ["--targets", "y", "--method", "boosting", "--max-depth", "0", "--trees", "3"],
     "--max-depth 0 makes every tree a single leaf"),
    ({"d.arff": _arff_rows()}, ["--targets", "y", "--trees", "5", "--min-samples-leaf", "1000"],
     "the 300 rows used are fewer than a split needs, 2000 (--min-samples-leaf 1000 on each side)"),
    ({}, ["--config", str(FINANCIAL), "--trees", "5", "--cv-folds", "0", "--min-samples-leaf", "100000"],
     "the 682 rows used are fewer than a split needs"),
], ids=["ensemble_constant_features", "relief_constant_features", "boosting_max_depth_0",
        "ensemble_min_samples_leaf", "relational_min_samples_leaf"])
def test_a_ranking_without_information_says_so_in_one_warning_line_and_in_run_json(tmp_path, files, args, why):
    for rel, text in files.items():
        write(tmp_path / rel, text)
    if files:
        args = ["--input", str(tmp_path / "d.arff"), *args]
    env = {k: v for k, v in _subprocess_env().items() if k != "SPARK_FR_DRIVER_MAX_SECONDS"}  # as users run it:
    # small work on the driver, no JVM
    r = subprocess.run([sys.executable, str(JOB), *args, "--output", str(tmp_path / "out"), "--output-format", "csv",
                        "--log-level", "warning"], capture_output=True, text=True, env=env, timeout=600,
                       cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr[-3000:]
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and " WARNING " in lines[0], r.stderr[-3000:]
    assert "the ranking carries no information: every importance of every score is 0" in lines[0] and why in lines[0]
    run = json.loads((tmp_path / "out/run.json").read_text())
    assert len(run["warnings"]) == 1 and lines[0].endswith(run["warnings"][0])
    assert run["informative"] and not any(ok for by_target in run["informative"].values() for ok in by_target.values())


def test_the_warning_names_only_the_rankings_without_information():
    """Per score and target; the joint ranking carries information here, one per-target ranking does not."""
    from spark_fr.api import uninformative_warning
    from spark_fr.ensemble.params import EnsembleParams
    from spark_fr.results import MethodRun, ScoreKey, ScoreResult, informative

    results = [ScoreResult(ScoreKey("genie3"), np.array([0.0, 0.3, 0.1])),
               ScoreResult(ScoreKey("genie3", per_target=True), np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0]])),
               ScoreResult(ScoreKey("rf"), np.array([0.0, 0.0, -0.0]))]
    run = MethodRun(["a", "b", "c"], np.array([True, True, False]), results, ["y1", "y2"], "mtr", 300, 300)
    info = informative(run.results, run.usable, run.target_names)
    assert info == {"genie3": {"__all__": True, "y1": False, "y2": True}, "rf": {"__all__": False}}
    [line] = uninformative_warning(info, run, EnsembleParams())
    assert line.startswith("no information in the genie3 for target y1, rf rankings: every importance is 0")
    assert "genie3 for target y1: no tree's split reduced the impurity" in line
    assert "rf: permuting a feature never changed the trees' out-of-bag error" in line
    assert uninformative_warning(informative(results[:1], run.usable, []), run, EnsembleParams()) == []
    # an unusable feature's importance does not count: 'c' is 0.1 in the joint ranking but cannot be used
    only_c = [ScoreResult(ScoreKey("genie3"), np.array([0.0, 0.0, 0.1]))]
    assert informative(only_c, run.usable, []) == {"genie3": {"__all__": False}}
