"""One rule for paths and URIs (spark_fr.io.locations, spark_fr.io.filesystems): every option that takes a path
takes a URI, served by the file system that owns it; a scheme nobody serves is an error before any work, never a
local folder named after it.

The Hadoop route is tested for real with Hadoop's ``viewfs:`` file system, whose mount table points into this
test's temporary directory: a non-local scheme that neither Python nor pyarrow serves, served by the Spark
session's Hadoop configuration, as ``dbfs:`` or ``abfss:`` are on a cluster."""
import json
import os
import shutil

import numpy as np
import pandas as pd
import pytest

from tests.conftest import DATASETS, check_contract, run_job
from spark_fr.errors import InputError
from spark_fr.io.filesystems import ArrowFiles, HadoopFiles, LocalFiles, files_for
from spark_fr.io.locations import Location, locate

ENB = DATASETS / "mtr_enb" / "enb.arff"
ENB_FEATURES = ["Relative_compactness", "X1", "X3", "X4", "X5", "X6", "X7", "X8"]


# ----- parsing ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("spelling", ["file:{p}", "file://{p}", "file://localhost{p}"])
def test_the_three_spellings_of_a_file_uri_name_the_local_file(spelling, tmp_path):
    path = str(tmp_path / "a b" / "out")
    loc = locate(spelling.format(p=str(tmp_path) + "/a%20b/out"))
    assert loc.local and loc.scheme is None and loc.path == path


@pytest.mark.parametrize("text, scheme", [("dbfs:/ml/rankings", "dbfs"), ("s3a://bucket/k", "s3a"),
                                          ("abfss://c@acct.dfs.core.windows.net/x", "abfss"),
                                          ("gs://b/x", "gs"), ("hdfs://nn:8020/x", "hdfs"), ("S3A://b/k/", "s3a")])
def test_other_schemes_stay_uris(text, scheme):
    loc = locate(text)
    assert not loc.local and loc.scheme == scheme and loc.path == text.rstrip("/")


def test_local_paths_are_absolute_and_uri_parents_keep_their_authority(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert locate("out/x").path == str(tmp_path / "out" / "x")
    assert locate("a:b").local  # no slash after the colon: a file name
    assert locate("/Volumes/main/default/v/out").path == "/Volumes/main/default/v/out"
    assert locate("dbfs:/ml/rankings").parent().path == "dbfs:/ml"
    assert locate("s3a://bucket/k/x").parent().path == "s3a://bucket/k"
    assert locate("s3a://bucket/k").child("run.json").path == "s3a://bucket/k/run.json"


def test_a_file_uri_of_another_host_is_refused():
    with pytest.raises(InputError, match="--output file://nas/x: a file: URI must name a file of this machine"):
        locate("file://nas/x", "--output")


def test_a_scheme_nobody_serves_is_an_error_naming_it(spark):
    for text in ("dbfs:/ml/rankings", "s3a://bucket/x", "foo://x/y"):
        scheme = text.split(":")[0]
        with pytest.raises(InputError, match=f"--output {text}: no file system serves '{scheme}:' here"):
            files_for(locate(text), spark, "--output")


# ----- the backends, operation by operation ------------------------------------------------------------------
def _ops(files, root: Location, scratch) -> list:
    """The same sequence of operations; what each gives (compared across backends)."""
    seen = []
    (scratch / "f.txt").write_bytes(b"hello world")
    a, b, f = root.child("a"), root.child("b"), root.child("f.txt")
    files.mkdir(a)
    seen.append(("mkdir", files.listdir(root), files.isdir(a), files.exists(b)))
    with pytest.raises(FileExistsError):
        files.mkdir(a)
    files.put(str(scratch / "f.txt"), a.child("g.txt"))
    files.put(str(scratch / "f.txt"), f)
    seen.append(("put", files.read_head(a.child("g.txt"), 5), files.read_head(f), files.isfile(f), files.isdir(f)))
    files.mkdir(b)
    files.rename(a, b)  # onto an empty directory: replaces it, as os.rename does
    seen.append(("rename", files.listdir(root), files.listdir(b)))
    with pytest.raises(FileExistsError):
        files.rename(f, b)  # never moved into a directory, never over a file
    with pytest.raises(OSError):
        files.rmdir(b)  # not empty
    files.remove(b.child("g.txt"))
    files.rmdir(b)
    seen.append(("removed", files.listdir(root), files.exists(b)))
    files.mkdir(a)
    files.put(str(scratch / "f.txt"), a.child("x"))
    files.rmtree(a)
    seen.append(("rmtree", files.listdir(root)))
    files.put(str(scratch / "f.txt"), a)
    files.replace(a, f)  # a file over a file
    seen.append(("replace", files.listdir(root), files.read_head(f, 5)))
    return seen


def test_hadoop_and_pyarrow_backends_do_what_the_local_one_does(spark, tmp_path):
    results = {}
    for kind in ("local", "hadoop", "pyarrow"):
        root = tmp_path / kind
        root.mkdir()
        uri = Location(str(root), "file", f"file://{root}")
        backend = {"local": lambda: LocalFiles(), "hadoop": lambda: HadoopFiles(spark, uri),
                   "pyarrow": lambda: ArrowFiles(uri)}[kind]()
        loc = locate(str(root)) if kind == "local" else uri
        scratch = tmp_path / f"scratch-{kind}"
        scratch.mkdir()
        results[kind] = _ops(backend, loc, scratch)
    assert results["hadoop"] == results["local"]
    assert results["pyarrow"] == results["local"]


# ----- the job, end to end -------------------------------------------------------------------------------
@pytest.fixture
def lake(spark, tmp_path):
    """``viewfs://lake/data`` -> this test's folder, through the session's Hadoop configuration."""
    root = tmp_path / "lake"
    root.mkdir()
    conf = spark._jsc.hadoopConfiguration()
    mount = f"viewfs://lake{tmp_path.name.replace('_', '')}"
    conf.set(f"fs.viewfs.mounttable.{mount[len('viewfs://'):]}.link./data", f"file://{root}")
    yield f"{mount}/data", root


def test_file_uris_read_and_write_the_local_files_they_name(spark, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = run_job(["--input", f"file://{ENB}", "--targets", "Y1,Y2", "--trees", 4, "--seed", 1,
                            "--output", f"file://{tmp_path}/abs/out", "--plot", f"file://localhost{tmp_path}/p.png"])
    assert code == 0, err
    check_contract(tmp_path / "abs" / "out", ENB_FEATURES)
    assert (tmp_path / "p.png").read_bytes().startswith(b"\x89PNG")
    assert sorted(os.listdir(tmp_path)) == ["abs", "p.png"]  # no folder named 'file:' anywhere


@pytest.mark.parametrize("fmt", ["csv", "delta"])
def test_an_output_on_a_scheme_nobody_serves_fails_before_the_work_and_writes_nothing(spark, tmp_path, monkeypatch,
                                                                                     fmt):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_job(["--input", ENB, "--targets", "Y1,Y2", "--trees", 4, "--output", "dbfs:/ml/rankings",
                              "--output-format", fmt])
    assert code == 2
    lines = [ln for ln in err.splitlines() if "error" in ln]
    assert len(lines) == 1 and "--output dbfs:/ml/rankings" in lines[0] and "'dbfs:'" in lines[0], err
    assert "trees" not in err and out == ""  # refused before the work
    assert os.listdir(tmp_path) == []  # no local folder named 'dbfs:'


@pytest.mark.parametrize("option", ["--input", "--plot", "--labels-xml", "--config"])
def test_every_path_option_refuses_a_scheme_nobody_serves(spark, tmp_path, monkeypatch, option):
    monkeypatch.chdir(tmp_path)
    args = {"--input": ["--targets", "Y1,Y2"], "--plot": ["--input", ENB, "--targets", "Y1,Y2"],
            "--labels-xml": ["--input", ENB], "--config": ["--input", ENB]}[option]
    code, _, err = run_job(args + [option, "gopher://host/x.file", "--trees", 2, "--output", tmp_path / "o"])
    assert code == 2, err
    assert f"{option} gopher://host/x.file: no file system serves 'gopher:' here" in err, err
    assert os.listdir(tmp_path) == []


def test_inputs_outputs_plots_and_configs_on_a_hadoop_file_system(spark, lake, tmp_path):
    """A URI Python cannot open goes through the session's Hadoop file system: the ARFF input and the config are
    read through it, the ranking and the plot written through it (temporary names, then renames), a second run
    replaces what the first wrote, and a folder of the user's there is refused."""
    uri, root = lake
    shutil.copy(ENB, root / "enb.arff")
    (root / "conf.yaml").write_text("targets: [Y1, Y2]\ntrees: 4\nseed: 3\n")
    args = ["--input", f"{uri}/enb.arff", "--config", f"{uri}/conf.yaml", "--output", f"{uri}/out",
            "--plot", f"{uri}/out.png"]
    code, _, err = run_job(args)
    assert code == 0, err
    check_contract(root / "out", ENB_FEATURES)
    first = json.loads((root / "out" / "run.json").read_text())
    assert first["params"]["trees"] == 4 and (root / "out.png").read_bytes().startswith(b"\x89PNG")
    code, _, err = run_job(args)  # ours: replaced
    assert code == 0, err
    assert json.loads((root / "out" / "run.json").read_text())["run_id"] != first["run_id"]
    assert not [p for p in os.listdir(root) if ".tmp-" in p or ".old-" in p]  # no temporary left
    (root / "mine").mkdir()
    (root / "mine" / "notes.txt").write_text("keep")
    code, _, err = run_job(args[:4] + ["--output", f"{uri}/mine"])
    assert code == 2 and f"--output {uri}/mine holds files spark_fr did not write (notes.txt)" in err, err
    assert (root / "mine" / "notes.txt").read_text() == "keep"


def test_a_csv_input_and_a_relational_schema_on_a_hadoop_file_system(spark, lake, tmp_path):
    """Spark reads a CSV at the URI itself; a schema file there is read through the file system, and its relative
    table paths resolve against the schema's own directory URI."""
    uri, root = lake
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 3))
    pd.DataFrame({"a": x[:, 0], "b": x[:, 1], "c": x[:, 2], "y": x[:, 0] * 3 + 0.1 * x[:, 2]}).to_csv(
        root / "t.csv", index=False)
    code, _, err = run_job(["--input", f"{uri}/t.csv", "--targets", "y", "--trees", 5, "--seed", 1,
                            "--output", tmp_path / "o1"])
    assert code == 0, err
    table = pd.read_csv(tmp_path / "o1" / "ranking.csv")
    assert table[(table.score == "genie3")].sort_values("rank").feature.iloc[0] == "a"
    pd.DataFrame({"id": range(50), "y": rng.integers(0, 2, 50)}).to_csv(root / "target.csv", index=False)
    pd.DataFrame({"tid": rng.integers(0, 50, 300), "v": rng.normal(size=300)}).to_csv(root / "tx.csv", index=False)
    (root / "schema.yaml").write_text(
        "tables:\n  t: {source: target.csv, key: id}\n  tx: {source: tx.csv, foreign_keys: {tid: t}}\n"
        "target: {table: t, id: id, column: y}\nmax_depth: 1\n")
    code, _, err = run_job(["--schema", f"{uri}/schema.yaml", "--trees", 3, "--engine", "spark",
                            "--output", tmp_path / "o2"])
    assert code == 0, err
    assert json.loads((tmp_path / "o2" / "run.json").read_text())["input"] == f"{uri}/schema.yaml"


# ----- Delta outputs at a URI ---------------------------------------------------------------------------------
def _delta_on_hadoop(spark, root: str) -> dict:
    """In the Delta session: two runs append to a Delta table at a viewfs URI through Spark's Delta writer."""
    from tests.io.test_delta_lake import make_ranking

    from spark_fr.io.writers import Publication

    spark._jsc.hadoopConfiguration().set("fs.viewfs.mounttable.deltalake.link./data", f"file://{root}")
    uri = "viewfs://deltalake/data/rankings"
    first = Publication(uri, "delta", spark=spark).check()
    first.publish(make_ranking(1))
    Publication(uri, "delta", spark=spark).check().publish(make_ranking(2))
    props = {r[0]: r[1] for r in spark.sql(f"SHOW TBLPROPERTIES delta.`{uri}`").collect()}
    try:
        Publication("dbfs:/ml/rankings", "delta", spark=spark).check()
        refused = None
    except InputError as err:
        refused = str(err)
    return {"writer": first._writer, "rows": spark.read.format("delta").load(uri).count(),
            "runs": spark.read.format("delta").load(uri).select("run_id").distinct().count(),
            "mark": props.get("spark_fr.rankings"), "refused": refused}


def test_a_delta_output_at_a_hadoop_uri_is_written_by_sparks_delta_writer(delta, tmp_path):
    got = delta.run(_delta_on_hadoop, str(tmp_path))
    assert got["writer"] == "spark" and got["mark"] == "true"
    assert got["runs"] == 2 and got["rows"] == 2 * 5
    assert os.path.isdir(tmp_path / "rankings" / "_delta_log")  # the table is where the mount points
    assert got["refused"].startswith("--output dbfs:/ml/rankings: no Delta writer serves 'dbfs:' here"), got


def test_drift_reads_sources_and_writes_its_outputs_on_a_hadoop_file_system(spark, lake, tmp_path):
    """jobs/drift.py with its sources (two CSV ranking outputs) and its outputs at URIs; a user's folder there is
    refused, as locally."""
    from tests.conftest import ROOT

    uri, root = lake
    for seed in (1, 2):
        code, _, err = run_job(["--input", ENB, "--targets", "Y1,Y2", "--trees", 3, "--seed", seed,
                                "--run-id", f"r{seed}", "--output", f"{uri}/run{seed}"])
        assert code == 0, err
    args = ["--table", f"{uri}/run1/ranking.csv,{uri}/run2/ranking.csv", "--output", f"{uri}/drift",
            "--plot", f"{uri}/drift.png"]
    code, out, err = run_job(args, job=ROOT / "jobs" / "drift.py")
    assert code in (0, 3), err
    assert json.loads((root / "drift" / "drift.json").read_text())["kind"] == "drift"
    assert (root / "drift.png").read_bytes().startswith(b"\x89PNG")
    code, _, err = run_job(args, job=ROOT / "jobs" / "drift.py")  # ours: replaced
    assert code in (0, 3), err
    (root / "drift" / "summary.csv").write_text("mine\n")
    code, _, err = run_job(args, job=ROOT / "jobs" / "drift.py")
    assert code == 2 and "holds files spark_fr's drift did not write (summary.csv)" in err, err
    assert (root / "drift" / "summary.csv").read_text() == "mine\n"


def test_evaluation_outputs_refuse_a_scheme_nobody_serves_before_the_work(spark, tmp_path, monkeypatch):
    from tests.conftest import ROOT

    monkeypatch.chdir(tmp_path)
    code, _, err = run_job(["--input", ENB, "--targets", "Y1,Y2", "--output", "abfss://c@a.dfs.core.windows.net/e"],
                           job=ROOT / "jobs" / "evaluate.py")
    assert code == 2 and "--output abfss://c@a.dfs.core.windows.net/e: no file system serves 'abfss:' here" in err
    assert os.listdir(tmp_path) == []


def test_a_relative_input_is_python_s_working_directory_not_the_jvm_s(spark, tmp_path, monkeypatch):
    """A notebook's os.chdir moves Python's working directory, not the JVM's: a relative path is made absolute
    before Spark reads it (it read <the JVM's folder>/t.csv: PATH_NOT_FOUND)."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(120, 2))
    pd.DataFrame({"a": x[:, 0], "b": x[:, 1], "y": 2 * x[:, 0]}).to_csv(tmp_path / "t.csv", index=False)
    monkeypatch.chdir(tmp_path)
    code, _, err = run_job(["--input", "t.csv", "--targets", "y", "--trees", 3, "--output", "o"])
    assert code == 0, err
    assert (tmp_path / "o" / "ranking.csv").is_file()
