"""Drift between runs of a rankings table: the Fuzzy Jaccard Index against hand computations and a slow, obvious
reference; compare_runs on hand-made tables; jobs/drift.py on a Delta table spark_fr wrote, on folders of outputs
and on a catalog table; bad input is one line and exit code 2; drift above --fail-above is exit code 3; outputs
replace only what spark_fr's drift wrote (proven by content) and are written all or nothing; a run id in two
sources with different rows is an error, with the same rows it is read once."""
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.conftest import check_png, run_job
from spark_fr.errors import InputError
from spark_fr.evaluation.drift import compare_runs
from spark_fr.evaluation.similarity import fji_area, fuzzy_jaccard_curve
from tests.paths import ROOT

DRIFT_JOB = ROOT / "jobs" / "drift.py"


# ----- the slow, obvious reference: the definition of thesis section 8, feature by feature ----------------------
def fji_reference(r1: list, r2: list, k: int) -> list:
    """r1, r2: [(feature, importance)] best first. Memberships and sums exactly as written in the thesis, with the
    decisions of spark_fr.evaluation.similarity (negative -> 0, x / 0 -> 1, a feature a ranking lacks -> 0)."""
    def f(r):
        return {name: max(0.0, float(v)) for name, v in r}

    f1, f2 = f(r1), f(r2)
    out = []
    for j in range(1, k + 1):
        sets = [{name for name, _ in r[:j]} for r in (r1, r2)]
        thresholds = [max(0.0, float(r[min(j, len(r)) - 1][1])) for r in (r1, r2)]

        def mu(i, x):
            fi = (f1, f2)[i]
            if x in sets[i]:
                return 1.0
            if x not in fi:
                return 0.0
            if thresholds[i] == 0:
                return 1.0
            return min(1.0, fi[x] / thresholds[i])

        union = sets[0] | sets[1]
        out.append(sum(min(mu(0, x), mu(1, x)) for x in union) / sum(max(mu(0, x), mu(1, x)) for x in union))
    return out


def curve(r1, r2, k=None):
    return fuzzy_jaccard_curve([n for n, _ in r1], [v for _, v in r1], [n for n, _ in r2], [v for _, v in r2], k)


# ----- hand-computed cases -------------------------------------------------------------------------------------
def test_fji_small_cases_computed_by_hand():
    # j=1: F1={a}, F2={b}; mu1(b) = 2/4, mu2(a) = 1.5/3: (0.5 + 0.5) / 2; then the same sets
    c = curve([("a", 4), ("b", 2), ("c", 1)], [("b", 3), ("a", 1.5), ("c", 0.75)])
    np.testing.assert_allclose(c, [0.5, 1.0, 1.0])
    assert fji_area(c) == pytest.approx((0.75 + 1.0) / 2)
    # j=2: F1={a,b}, F2={a,c}; mu1(c) = 1/2, mu2(b) = 1/2: (1 + 1/2 + 1/2) / 3
    c = curve([("a", 4), ("b", 2), ("c", 1), ("d", 0.5)], [("a", 4), ("c", 2), ("b", 1), ("d", 0.5)])
    np.testing.assert_allclose(c, [1.0, 2 / 3, 1.0, 1.0])
    assert fji_area(c) == pytest.approx(8 / 9)
    # different features: a ranking lacks the other's second feature (membership 0): 1 / 3
    np.testing.assert_allclose(curve([("a", 1), ("b", 0.5)], [("a", 1), ("c", 0.5)]), [1.0, 1 / 3])
    # ties at zero are interchangeable (x / 0 -> 1); negative importances count as 0
    np.testing.assert_allclose(curve([("a", 1), ("b", 0), ("c", 0)], [("a", 1), ("c", 0), ("b", 0)]), [1, 1, 1])
    np.testing.assert_allclose(curve([("a", 1), ("b", -1), ("c", -2)], [("a", 1), ("c", -0.5), ("b", -3)]), [1, 1, 1])
    # the docstring's swap; scale-free; k shorter and longer than the rankings
    np.testing.assert_allclose(curve([("a", 2), ("b", 1)], [("b", 2), ("a", 1)]), [0.5, 1.0])
    np.testing.assert_allclose(curve([("a", 2), ("b", 1)], [("b", 200), ("a", 100)], k=1), [0.5])
    np.testing.assert_allclose(curve([("a", 2), ("b", 1)], [("b", 2), ("a", 1)], k=4), [0.5, 1, 1, 1])
    assert fji_area([0.25]) == 0.25


def test_fji_bad_input_is_one_line():
    with pytest.raises(InputError, match="feature 'a' appears twice"):
        curve([("a", 1), ("a", 2)], [("a", 1)])
    with pytest.raises(InputError, match="2 features but 1 importances"):
        fuzzy_jaccard_curve(["a", "b"], [1.0], ["a"], [1.0])
    with pytest.raises(InputError, match="both rankings are empty"):
        fuzzy_jaccard_curve([], [], [], [])
    with pytest.raises(InputError, match="k >= 1"):
        curve([("a", 1)], [("a", 1)], k=0)


@pytest.mark.parametrize("seed", range(6))
def test_fji_equals_the_slow_reference_on_random_rankings(seed):
    """Random rankings: shared and own features, negative and zero importances, ties, ranks that follow the
    importances (the running-sum walk) and ranks that do not (the general walk), k up to beyond both lengths."""
    rng = np.random.default_rng(seed)
    for case in range(40):
        pool = [f"x{i}" for i in range(int(rng.integers(2, 25)))]
        rankings = []
        for _ in range(2):
            names = list(rng.choice(pool, size=int(rng.integers(1, len(pool) + 1)), replace=False))
            values = np.round(rng.normal(0.5, 0.6, len(names)), 1 if case % 3 == 0 else 6)  # ties when rounded
            if case % 4 != 3:
                values = np.sort(values)[::-1]  # a ranking's order follows its importances
            rankings.append(list(zip(names, values)))
        k = int(rng.integers(1, len(pool) + 3))
        got = curve(*rankings, k=k)
        np.testing.assert_allclose(got, fji_reference(*rankings, k), atol=1e-12, err_msg=str(rankings))
        np.testing.assert_allclose(got, curve(*rankings[::-1], k=k), atol=1e-12)  # symmetric
        assert np.all((got >= 0) & (got <= 1))


# ----- compare_runs ---------------------------------------------------------------------------------------------
def table(runs: dict, scores=("genie3",), targets=("__all__",), start="2026-11-26") -> pd.DataFrame:
    """A rankings table (the output contract's columns): {run_id: [(feature, importance)] best first}."""
    rows = []
    for i, (run_id, ranking) in enumerate(runs.items()):
        for score in scores:
            for target in targets:
                for rank, (feature, importance) in enumerate(ranking, start=1):
                    rows.append({"feature": feature, "score": score, "target": target, "importance": importance,
                                 "rank": rank, "importance_std": None, "run_id": run_id,
                                 "created_at": pd.Timestamp(start, tz="UTC") + pd.Timedelta(days=i), "params": "{}"})
    return pd.DataFrame(rows)


RUN_A = [("a", 4.0), ("b", 2.0), ("c", 1.0), ("d", 0.5)]
RUN_B = [("a", 4.0), ("c", 2.0), ("b", 1.0), ("d", 0.5)]
RUN_C = [("d", 9.0), ("e", 3.0), ("a", 1.0), ("b", 0.5)]


def test_compare_two_runs_by_hand():
    report = compare_runs(table({"A": RUN_A, "B": RUN_B}), top=2)
    s = report.summary.iloc[0]
    # k = 1, 2: [1, 2/3]: area 5/6
    assert (s.run_before, s.run_after, s.score, s.target, s.k) == ("A", "B", "genie3", "__all__", 2)
    assert s.fji_area == pytest.approx(5 / 6) and s.drift == pytest.approx(1 / 6) and s.fji_top == pytest.approx(2 / 3)
    assert (s.entered, s.left, s.n_entered, s.n_left) == ("c", "b", 1, 1)
    np.testing.assert_allclose(report.curves["fji"], [1, 2 / 3])
    ch = report.changes.set_index("feature")
    assert list(ch.index) == ["a", "c", "b"]
    assert ch.loc["c", "change"] == 1 and ch.loc["b", "change"] == -1 and ch.loc["a", "change"] == 0
    assert report.max_drift == pytest.approx(1 / 6) and report.exceeds(0.1) and not report.exceeds(0.2)
    text = report.to_text()
    assert "entered the top 2: c" in text and "left the top 2: b" in text and "largest moves: c 3->2, b 2->3" in text


def test_compare_last_runs_baselines_and_run_order():
    t = table({"A": RUN_A, "B": RUN_B, "C": RUN_C})
    report = compare_runs(t.sample(frac=1, random_state=0), last=3, top=4)  # rows in any order: runs by time
    assert list(report.runs.run_id) == ["A", "B", "C"]
    assert list(zip(report.summary.run_before, report.summary.run_after)) == [("A", "B"), ("B", "C")]
    c = report.summary.set_index("run_after").loc["C"]
    # B -> C, by the definition (e is in C only)
    ref = fji_reference(RUN_B, RUN_C, 4)
    assert c.fji_area == pytest.approx(fji_area(ref)) and c.entered == "e" and c.left == "c"
    assert report.max_drift == pytest.approx(1 - fji_area(ref))
    assert report.worst().run_after == "C"
    first = compare_runs(t, last=3, top=4, baseline="first")
    assert list(zip(first.summary.run_before, first.summary.run_after)) == [("A", "B"), ("A", "C")]
    # named runs, in the order given; the default last=2 takes the newest two
    named = compare_runs(t, runs="C,A", top=4)
    assert (named.summary.run_before[0], named.summary.run_after[0]) == ("C", "A")
    assert list(compare_runs(t, top=4).runs.run_id) == ["B", "C"]
    more = compare_runs(t, last=5, top=4)
    assert len(more.runs) == 3 and "5 runs asked for" in more.notes[0]
    # heat map data: every feature of any top 4, in every run that has it
    assert set(more.ranks.feature) == {"a", "b", "c", "d", "e"}
    assert more.ranks.query("run_id == 'C' and feature == 'd'")["rank"].item() == 1


def test_scores_and_targets_per_ranking():
    t = table({"A": RUN_A, "B": RUN_B}, scores=("genie3", "rf"), targets=("__all__", "y1", "y2"))
    report = compare_runs(t, top=3)
    assert list(zip(report.summary.score, report.summary.target)) == [("genie3", "__all__"), ("rf", "__all__")]
    report = compare_runs(t, top=3, scores="rf", targets="all")
    assert list(zip(report.summary.score, report.summary.target)) == [("rf", "__all__"), ("rf", "y1"), ("rf", "y2")]
    assert list(compare_runs(t, targets=["y2"]).summary.target) == ["y2", "y2"]
    # a table with per-target rankings only compares all of them by default
    only = table({"A": RUN_A, "B": RUN_B}, targets=("y1", "y2"))
    assert list(compare_runs(only).summary.target) == ["y1", "y2"]
    # relational tables: the feature level by default
    rel = pd.concat([t.assign(level="feature"), t.assign(level="relation", feature="r_" + t.feature)])
    assert set(compare_runs(rel).changes.feature) <= set("abcd")
    assert set(compare_runs(rel, level="relation").changes.feature) <= {"r_a", "r_b", "r_c", "r_d"}


@pytest.mark.parametrize("kwargs, message", [
    ({"runs": "A,Z"}, "run 'Z' is not in the rankings; its newest runs: B, A"),
    ({"runs": "A"}, "drift needs at least 2"),
    ({"scores": "relief"}, "score 'relief' is not in run 'A' of the rankings; its scores: genie3"),
    ({"targets": "y9"}, "target 'y9' is not in run 'A'"),
    ({"last": 1}, "last must be an integer >= 2"),
    ({"top": 0}, "top must be an integer >= 1"),
    ({"baseline": "median"}, "baseline must be one of previous, first"),
])
def test_bad_input_is_one_line(kwargs, message):
    with pytest.raises(InputError) as err:
        compare_runs(table({"A": RUN_A, "B": RUN_B}), **kwargs)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_fewer_than_two_runs_and_no_rankings(tmp_path):
    with pytest.raises(InputError, match=r"holds 1 run \(A\); drift needs at least 2"):
        compare_runs(table({"A": RUN_A}))
    with pytest.raises(InputError, match="column\\(s\\) rank, run_id missing"):
        compare_runs(table({"A": RUN_A, "B": RUN_B}).drop(columns=["rank", "run_id"]))
    with pytest.raises(InputError, match="rankings not found"):
        compare_runs(str(tmp_path / "nowhere"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="holds no rankings"):
        compare_runs(str(tmp_path / "empty"))
    with pytest.raises(InputError, match="no score in common"):
        compare_runs(pd.concat([table({"A": RUN_A}), table({"B": RUN_B}, scores=("rf",), start="2026-12-01")]))


# ----- the job ----------------------------------------------------------------------------------------------
def run_drift(args, capsys):
    return run_job(args, capsys, job=DRIFT_JOB)


def write_run_folders(root: Path, runs: dict, fmt="csv") -> None:
    """Run folders as jobs/rank.py --output DIR writes them (ranking.csv or ranking.parquet, run.json)."""
    t = table(runs)
    for run_id, rows in t.groupby("run_id"):
        folder = root / f"run-{run_id}"
        folder.mkdir(parents=True)
        if fmt == "csv":
            rows.assign(created_at=rows.created_at.map(lambda x: x.isoformat())).to_csv(folder / "ranking.csv",
                                                                                          index=False)
        else:
            rows.to_parquet(folder / "ranking.parquet", index=False)
        (folder / "run.json").write_text(json.dumps({"run_id": run_id}))


def test_job_on_run_folders_threshold_plot_and_output(tmp_path, capsys):
    write_run_folders(tmp_path / "runs", {"A": RUN_A, "B": RUN_B})
    write_run_folders(tmp_path / "more", {"C": RUN_C}, fmt="parquet")
    # C is a day after A in its own table: give it a later time
    p = tmp_path / "more" / "run-C" / "ranking.parquet"
    pd.read_parquet(p).assign(created_at=pd.Timestamp("2026-12-01", tz="UTC")).to_parquet(p, index=False)
    tables = f"{tmp_path / 'runs'},{tmp_path / 'more' / 'run-C'}"
    code, out, err = run_drift(["--table", tables, "--last", 3, "--top", 2, "--fail-above", 0.9,
                                "--plot", tmp_path / "drift.png", "--output", tmp_path / "drift"], capsys)
    assert code == 0, err
    assert "A -> B" in out and "B -> C" in out and "is at most 0.9" in out
    check_png(tmp_path / "drift.png")
    assert {f.name for f in (tmp_path / "drift").iterdir()} == {"summary.csv", "fji.csv", "changes.csv", "ranks.csv",
                                                                "drift.json"}
    record = json.loads((tmp_path / "drift" / "drift.json").read_text())
    assert [r["run_id"] for r in record["runs"]] == ["A", "B", "C"] and record["worst"]["run_after"] == "C"
    # the same drift above a lower threshold: exit code 3, files rewritten, the worst pair named on stderr
    code, out, err = run_drift(["--table", tables, "--last", 3, "--top", 2, "--fail-above", 0.3,
                                "--plot", tmp_path / "drift.png", "--output", tmp_path / "drift"], capsys)
    assert code == 3 and "is above 0.3 (genie3 [__all__], run B -> C)" in err
    assert pd.read_csv(tmp_path / "drift" / "summary.csv").shape[0] == 2


@pytest.mark.parametrize("args, message", [
    (["--last", 2], "--table is required"),
    (["--table", "{runs}", "--runs", "A,Q"], "run 'Q' is not in"),
    (["--table", "{runs}", "--scores", "nope"], "score 'nope' is not in run"),
    (["--table", "{runs}/run-A"], "holds 1 run (A); drift needs at least 2"),
    (["--table", "{runs}", "--runs", "A,B", "--last", 2], "give --runs or --last, not both"),
    (["--table", "{runs}", "--fail-above", 1.5], "--fail-above must be a number in [0, 1], not 1.5"),
    (["--table", "{runs}", "--plot", "{runs}/run-A/ranking.csv"], "exists and was not written by spark_fr"),
    (["--table", "no_such_db.rankings_nowhere", "--master", "nope"], "master"),
])
def test_job_bad_input_is_one_line_and_exit_code_2(tmp_path, capsys, args, message):
    write_run_folders(tmp_path / "runs", {"A": RUN_A, "B": RUN_B})
    code, out, err = run_drift([str(a).format(runs=tmp_path / "runs") for a in args], capsys)
    assert code == 2 and message in err and err.count("\n") == 1 and err.startswith("error: "), err
    assert not (tmp_path / "runs" / "run-A" / "ranking.png").exists()


def ranking_of(run_id, ranking, day):
    """A Ranking (the object jobs/rank.py publishes) of one run: [(feature, importance)] best first."""
    from spark_fr.ranking import Ranking
    from spark_fr.results import ScoreKey, ScoreResult

    names = [f for f, _ in ranking]
    values = np.array([v for _, v in ranking])
    results = [ScoreResult(ScoreKey(s), values * (1 if s == "genie3" else 0.01)) for s in ("genie3", "rf")]
    return Ranking.from_scores(names, np.ones(len(names), bool), results, [], {"trees": 10},
                               {"run_id": run_id, "created_at": pd.Timestamp(day, tz="UTC").to_pydatetime()})


def test_job_on_a_delta_table_spark_fr_appended_to(tmp_path, capsys):
    """Runs appended to one Delta table by spark_fr's writer (as jobs/rank.py --output-format delta does; the
    notebook test appends real rank runs), then jobs/drift.py on its path: no Spark needed."""
    path = tmp_path / "rankings"
    for run_id, ranking, day in (("A", RUN_A, "2026-11-26"), ("B", RUN_B, "2026-11-27"), ("C", RUN_C, "2026-11-28")):
        ranking_of(run_id, ranking, day).write(str(path), format="delta")
    code, out, err = run_drift(["--table", path, "--last", 3, "--top", 2, "--fail-above", 0.9, "--plot",
                                tmp_path / "drift.png"], capsys)
    assert code == 0, err
    assert "genie3 [__all__]: FJI area 0.833" in out and "rf [__all__]: FJI area 0.833" in out  # scale-free
    check_png(tmp_path / "drift.png")
    report = compare_runs(str(path), runs="A,B", top=2)
    assert list(report.summary.drift) == pytest.approx([1 / 6, 1 / 6])
    in_memory = compare_runs([ranking_of("B", RUN_B, "2026-11-27"), ranking_of("A", RUN_A, "2026-11-26")], top=2)
    assert list(in_memory.runs.run_id) == ["A", "B"] and list(in_memory.summary.drift) == pytest.approx([1 / 6] * 2)
    pd.testing.assert_frame_equal(  # the numbers of the same rows in memory (rf: every importance / 100)
        compare_runs(str(path), last=3, top=2).summary,
        compare_runs(table({"A": RUN_A, "B": RUN_B, "C": RUN_C}, scores=("genie3", "rf")), last=3, top=2).summary)


def test_catalog_table(spark, capsys):
    """A catalog table (two-part name) is read with Spark (a Spark DataFrame source takes the same path): only the
    chosen runs' rows are collected, and the numbers are those of the same rows in pandas."""
    t = table({"A": RUN_A, "B": RUN_B, "C": RUN_C}, scores=("genie3", "rf"))
    expected = compare_runs(t, last=3, top=3)
    spark.createDataFrame(t).write.mode("overwrite").saveAsTable("drift_rankings")
    try:
        via_catalog = compare_runs("default.drift_rankings", last=3, top=3, spark=spark)
        pd.testing.assert_frame_equal(via_catalog.summary, expected.summary)
        pd.testing.assert_frame_equal(via_catalog.changes, expected.changes)
        code, out, err = run_drift(["--table", "default.drift_rankings", "--top", 3, "--fail-above", 0.01], capsys)
        assert code == 3 and "B -> C" in out and "is above 0.01" in err, err
        code, out, err = run_drift(["--table", "default.no_such_rankings"], capsys)
        assert code == 2 and err.startswith("error: rankings table not found: default.no_such_rankings"), err
    finally:
        spark.sql("DROP TABLE IF EXISTS drift_rankings")


# ----- outputs: spark_fr's own or nothing (issue 37) ------------------------------------------------------------
def tree(root: Path) -> dict:
    """Every entry under ``root`` (hidden ones too): {relative path: bytes, or 'dir'}."""
    return {str(p.relative_to(root)): "dir" if p.is_dir() else p.read_bytes() for p in sorted(root.rglob("*"))}


@pytest.mark.parametrize("entry, shown", [
    ("summary.csv", "(summary.csv)"),
    ("drift.json", "(drift.json)"),
    ("summary.csv/", "(summary.csv (a folder))"),
    ("notes.txt", "(notes.txt)"),
])
def test_job_output_holding_what_spark_fr_did_not_write_is_refused_before_any_work(tmp_path, capsys, entry, shown):
    """A user's summary.csv or drift.json (names drift writes), a folder named summary.csv, anything else: one line
    naming it, exit code 2, before the runs are read (no report, no plot), and every byte left as it was."""
    write_run_folders(tmp_path / "runs", {"A": RUN_A, "B": RUN_B})
    out = tmp_path / "out"
    out.mkdir()
    if entry.endswith("/"):
        (out / entry).mkdir()
        (out / entry / "part-0.csv").write_text("the user's data\n")
    else:
        (out / entry).write_text('{"top": 5, "max_drift": 0.1}\n' if entry == "drift.json" else "the user's data\n")
    before = tree(tmp_path)
    code, stdout, err = run_drift(["--table", tmp_path / "runs", "--output", out, "--plot", tmp_path / "drift.png"],
                                  capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith(f"error: --output {out} holds files spark_fr's drift did not write {shown}"), err
    assert stdout == "" and tree(tmp_path) == before


def test_job_replaces_its_own_output_proven_by_content_and_nothing_else(tmp_path, capsys):
    """drift.json carries spark_fr's mark and the SHA-256 of each table; a later run replaces such an output (and
    its plot), leaving no temporary; a table the user edited, or a drift.json without the mark, is not ours."""
    import hashlib

    from spark_fr.version import __version__

    write_run_folders(tmp_path / "runs", {"A": RUN_A, "B": RUN_B})
    out, png = tmp_path / "out", tmp_path / "drift.png"
    args = ["--table", tmp_path / "runs", "--output", out, "--plot", png]
    assert run_drift(args + ["--top", 2], capsys)[0] == 0
    record = json.loads((out / "drift.json").read_text())
    tables = ("summary.csv", "fji.csv", "changes.csv", "ranks.csv")
    assert record["kind"] == "drift" and record["versions"]["spark_fr"] == __version__
    assert record["files"] == {n: hashlib.sha256((out / n).read_bytes()).hexdigest() for n in tables}
    code, _, err = run_drift(args + ["--top", 3], capsys)
    assert code == 0, err
    assert list(pd.read_csv(out / "summary.csv")["k"]) == [3]
    assert json.loads((out / "drift.json").read_text())["top"] == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["drift.png", "out", "runs"]  # no hidden sibling left
    check_png(png)
    (out / "summary.csv").write_text("the user's edits\n")  # no longer the table spark_fr wrote
    before = tree(tmp_path)
    code, _, err = run_drift(args, capsys)
    assert code == 2 and f"--output {out} holds files spark_fr's drift did not write (summary.csv)" in err, err
    assert tree(tmp_path) == before
    (out / "summary.csv").unlink()  # an unmarked drift.json (as spark_fr wrote before it marked them)
    (out / "drift.json").write_text(json.dumps({k: v for k, v in record.items() if k not in ("kind", "files")}))
    code, _, err = run_drift(args, capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert "(drift.json, changes.csv, fji.csv, ...): its drift.json lacks spark_fr's mark" in err
    # an empty folder is filled and kept
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run_drift(["--table", tmp_path / "runs", "--output", empty], capsys)[0] == 0
    assert {p.name for p in empty.iterdir()} == set(tables) | {"drift.json"}


def test_a_failure_while_publishing_leaves_nothing(tmp_path):
    """Publishing fails after the plot and three tables went to their temporary names: neither output is
    written, the earlier output is intact, no temporary and no folder made for the outputs is left."""
    from spark_fr.io import drift_outputs

    report = compare_runs(table({"A": RUN_A, "B": RUN_B}), top=2)
    out, png = tmp_path / "out", tmp_path / "new" / "deeper" / "drift.png"
    report.write(str(out))
    before = tree(tmp_path)
    tables = {**report.tables(), "ranks.csv": None}  # the fourth table cannot be written
    with pytest.raises(TypeError):
        drift_outputs.publish(str(out), str(png), tables, report.record(), png=b"\x89PNG spark_fr")
    assert tree(tmp_path) == before
    with pytest.raises(InputError, match="--plot and --output are the same path"):
        report.publish(str(out), str(out))
    with pytest.raises(InputError, match=r"--plot .*drift.png is inside --output .*, which spark_fr writes"):
        report.publish(str(out), str(out / "drift.png"))
    (tmp_path / "mine.png").write_bytes(b"\x89PNG the user's picture")
    with pytest.raises(InputError, match="mine.png exists and was not written by spark_fr"):
        report.plot(str(tmp_path / "mine.png"))


# ----- runs found in several sources (issue 37) ------------------------------------------------------------------
def write_csv(path: Path, frame: pd.DataFrame) -> Path:
    frame.assign(created_at=frame.created_at.map(lambda x: x.isoformat())).to_csv(path, index=False)
    return path


def test_a_run_in_two_sources_with_different_rows_is_an_error_naming_both(tmp_path, capsys):
    """Run r1 in two files with different rows: one line naming the run and both sources, in either order, before
    any comparison (drift was 0.111 in one order and 0.684 in the other)."""
    one = write_csv(tmp_path / "one.csv", table({"r0": RUN_A, "r1": RUN_B}))
    two = write_csv(tmp_path / "two.csv", table({"r1": RUN_C}, start="2026-11-27"))
    for first, second in ((one, two), (two, one)):
        with pytest.raises(InputError) as err:
            compare_runs(f"{first},{second}", top=4)
        assert str(err.value).startswith(f"run 'r1' is in {first} and in {second} with different rows (feature, "
                                         f"importance, rank differ)") and "\n" not in str(err.value)
    code, out, err = run_drift(["--table", f"{one},{two}", "--runs", "r0,r1"], capsys)
    assert code == 2 and err.startswith(f"error: run 'r1' is in {one} and in {two} with different rows") and not out
    # the same run with one row more in a folder of outputs (sources inside folders are named by their file)
    (tmp_path / "folder").mkdir()
    t = table({"r1": RUN_B + [("z", 0.1)]}, start="2026-11-27")
    write_csv(tmp_path / "folder" / "late.csv", t)
    with pytest.raises(InputError, match=f"run 'r1' is in {one} and in {tmp_path / 'folder' / 'late.csv'} with "
                                         f"different rows \\(4 rows against 5\\)"):
        compare_runs([str(one), str(tmp_path / "folder")])


def test_the_same_run_in_two_sources_is_read_once(tmp_path, caplog):
    """Decision: a run whose rows are the same in two sources (a run's CSV output and the Delta table it was also
    appended to) is not a clash: read once, with a log line; the drift is that of the Delta table alone."""
    import logging

    path = tmp_path / "rankings"
    for run_id, ranking, day in (("A", RUN_A, "2026-11-26"), ("B", RUN_B, "2026-11-27")):
        ranking_of(run_id, ranking, day).write(str(path), format="delta")
    ranking_of("B", RUN_B, "2026-11-27").write(str(tmp_path / "run-B"), format="csv")
    alone = compare_runs(str(path), top=2)
    for source in (f"{path},{tmp_path / 'run-B'}", [str(tmp_path / "run-B"), str(path)]):
        with caplog.at_level(logging.INFO, logger="spark_fr"):
            report = compare_runs(source, top=2)
        pd.testing.assert_frame_equal(report.summary, alone.summary)
        assert "run 'B' is in " in caplog.text and "with the same rows: read once" in caplog.text
        caplog.clear()


def test_python_m_drift_job_runs_the_job(tmp_path):
    """``python -m spark_fr.evaluation.drift_job`` is jobs/drift.py (it exited 0 doing nothing)."""
    import subprocess

    write_run_folders(tmp_path / "runs", {"A": RUN_A, "B": RUN_B})
    r = subprocess.run([sys.executable, "-m", "spark_fr.evaluation.drift_job", "--table", str(tmp_path / "runs"),
                        "--top", "2", "--fail-above", "0.1"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 3 and "A -> B" in r.stdout and "is above 0.1" in r.stderr, r.stderr
    r = subprocess.run([sys.executable, "-m", "spark_fr.evaluation.drift_job", "--table", str(tmp_path / "nowhere")],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.startswith("error: rankings not found"), r.stderr


def test_spark_sources_read_created_at_in_utc_whatever_the_session_zone(spark, tmp_path, caplog):
    """A Spark DataFrame's created_at under a session zone of Asia/Kolkata is the same instant as in pandas
    (toPandas gives the zone's wall time, 5 h 30 min off when read as UTC): the runs' times are right, and the
    same run in a CSV file and a Spark DataFrame is the same run (read once), not a clash."""
    import logging

    t = table({"A": RUN_A, "B": RUN_B, "C": RUN_C})
    zone = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "Asia/Kolkata")
    try:
        df = spark.createDataFrame(t.drop(columns=["importance_std"]))
        report = compare_runs(df, last=3, top=2)
        expected = t.groupby("run_id")["created_at"].min()
        assert list(report.runs["created_at"]) == list(expected), report.runs
        only_c = write_csv(tmp_path / "c.csv", t[t.run_id == "C"])
        with caplog.at_level(logging.INFO, logger="spark_fr"):
            both = compare_runs([df, str(only_c)], last=3, top=2)
        assert "run 'C' is in the DataFrame and " in caplog.text and "read once" in caplog.text
        pd.testing.assert_frame_equal(both.summary, report.summary)
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)
