"""The publication layer (spark_fr.io.writers): a user's files survive every mode, an earlier ranking of ours
is replaced whole, concurrent writers lose nothing, and the plot is a real picture of the ranking."""
import hashlib
import json
import multiprocessing
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from spark_fr.errors import InputError
from spark_fr.io.delta_table import CREATE_PROPERTIES, run_records
from spark_fr.io.writers import Publication, foreign_entries, is_our_png
from spark_fr.ranking import Ranking
from spark_fr.results import ScoreKey, ScoreResult
from tests.paths import ROOT


def make_ranking(seed: int = 0, n_features: int = 6) -> Ranking:
    rng = np.random.default_rng(seed)
    names = [f"f{i}" for i in range(n_features)]
    results = [ScoreResult(ScoreKey("genie3"), rng.random(n_features), rng.random(n_features) / 10),
               ScoreResult(ScoreKey("genie3", per_target=True), rng.random((2, n_features)), None)]
    meta = {"input": "test", "versions": {"spark_fr": "test"}, "title": "t"}
    return Ranking.from_scores(names, np.ones(n_features, bool), results, ["y1", "y2"], {"seed": seed}, meta)


def tree(root: Path) -> dict:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None
            for p in sorted(root.rglob("*"))}


def user_files(root: Path) -> None:
    (root / "notes.txt").write_text("the user's notes")
    (root / "data").mkdir()
    (root / "data" / "table.csv").write_text("a,b\n1,2\n")


@pytest.mark.parametrize("fmt,mode", [("csv", None), ("csv", "overwrite"), ("csv", "error"), ("parquet", "overwrite"),
                                      ("delta", None), ("delta", "append"), ("delta", "overwrite"), ("delta", "error")])
def test_user_files_beside_the_output_survive_and_a_users_folder_is_refused(tmp_path, fmt, mode):
    user_files(tmp_path)
    before = tree(tmp_path)
    out = tmp_path / "ranking"
    Publication(str(out), fmt, mode).check().publish(make_ranking())
    after = tree(tmp_path)
    assert {k: v for k, v in after.items() if not k.startswith("ranking")} == before  # nothing else touched
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left
    # the user's folder itself as the output: refused in every mode, nothing changes
    before = tree(tmp_path)
    with pytest.raises(InputError, match="did not write|not a Delta table"):
        Publication(str(tmp_path / "data"), fmt, mode).check()
    with pytest.raises(InputError):
        Publication(str(tmp_path / "notes.txt"), fmt, mode).check()
    assert tree(tmp_path) == before


def test_an_earlier_ranking_of_ours_is_replaced_whole_and_mode_error_refuses_it(tmp_path):
    out = tmp_path / "r"
    first, second = make_ranking(1), make_ranking(2)
    Publication(str(out), "csv").check().publish(first)
    Publication(str(out), "csv").check().publish(second)
    table = pd.read_csv(out / "ranking.csv")
    run = json.loads((out / "run.json").read_text())
    assert set(table.run_id) == {second.run_id} == {run["run_id"]}
    assert sorted(os.listdir(out)) == ["ranking.csv", "run.json"]
    with pytest.raises(InputError, match="output exists"):
        Publication(str(out), "csv", "error").check()
    # switching format replaces the directory: no stale ranking.csv beside the new ranking.parquet
    Publication(str(out), "parquet").check().publish(first)
    assert sorted(os.listdir(out)) == ["ranking.parquet", "run.json"]
    # a user file put into our directory makes it the user's: refused, and kept
    (out / "mine.txt").write_text("x")
    with pytest.raises(InputError, match="mine.txt"):
        Publication(str(out), "csv").check()
    assert foreign_entries(str(out)) == ["mine.txt"]


def test_an_empty_directory_is_filled_and_kept(tmp_path):
    out = tmp_path / "empty"
    out.mkdir()
    inode = out.stat().st_ino
    Publication(str(out), "csv").check().publish(make_ranking())
    assert out.stat().st_ino == inode and sorted(os.listdir(out)) == ["ranking.csv", "run.json"]


def test_delta_append_keeps_runs_and_overwrite_replaces_them(tmp_path):
    from deltalake import DeltaTable

    out = str(tmp_path / "t")
    for seed in range(3):
        Publication(out, "delta").check().publish(make_ranking(seed))
    assert DeltaTable(out).to_pandas().run_id.nunique() == 3
    Publication(out, "delta", "overwrite").check().publish(make_ranking(9))
    assert DeltaTable(out).to_pandas().run_id.nunique() == 1


def test_plot_is_a_picture_of_the_ranking_and_only_ours_is_replaced(tmp_path):
    import matplotlib.image

    ranking = make_ranking(3)
    png = tmp_path / "p.png"
    fig = ranking.plot(str(png), top=4)
    img = matplotlib.image.imread(str(png))
    width, height = fig.get_size_inches() * 110
    assert abs(img.shape[0] - height) <= 1 and abs(img.shape[1] - width) <= 1
    assert img[..., :3].std() > 0.05  # not a blank picture
    best = ranking.top("genie3", 1).feature[0]
    ticks = {t.get_position()[1]: t.get_text() for t in fig.axes[0].get_yticklabels()}
    assert ticks[max(ticks)] == best  # the top bar is the best feature
    assert is_our_png(str(png))
    Publication(None, plot=str(png)).check().publish(make_ranking(4))  # ours: replaced
    user = tmp_path / "user.png"
    user.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    with pytest.raises(InputError, match="not written by spark_fr"):
        Publication(None, plot=str(user)).check()


def _publish(args):
    out, fmt, seed = args
    ranking = make_ranking(seed)
    Publication(out, fmt, "append" if fmt == "delta" else "overwrite").check().publish(ranking)
    return ranking.run_id


@pytest.mark.parametrize("fmt", ["delta", "csv"])
def test_concurrent_writers_lose_nothing(tmp_path, fmt):
    """Eight processes write the same (new) output at once: every Delta append lands (conflicts are retried);
    CSV overwrites leave one complete ranking and no temporary or earlier directory behind."""
    out = str(tmp_path / "shared")
    with multiprocessing.get_context("spawn").Pool(8) as pool:
        run_ids = pool.map(_publish, [(out, fmt, s) for s in range(8)])
    if fmt == "delta":
        from deltalake import DeltaTable

        assert set(DeltaTable(out).to_pandas().run_id) == set(run_ids)
    else:
        table = pd.read_csv(Path(out) / "ranking.csv")
        run = json.loads((Path(out) / "run.json").read_text())
        assert set(table.run_id) == {run["run_id"]} and run["run_id"] in run_ids
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shared"]


# ----- issue 20: a Delta table is ours only when proven; a plot inside the output; the Ranking's arguments -------
def _earlier_spark_fr_table(path: str, ranking: Ranking) -> None:
    """A table as spark_fr wrote it before the mark: the ranking's columns and types, no table property."""
    from deltalake import write_deltalake

    from spark_fr.io.writers import arrow_table

    write_deltalake(path, arrow_table(ranking))


def test_a_new_delta_table_carries_the_mark_and_each_commit_its_run(tmp_path):
    from deltalake import DeltaTable

    out = str(tmp_path / "t")
    first, second = make_ranking(1), make_ranking(2)
    Publication(out, "delta").check().publish(first)
    Publication(out, "delta", "overwrite").check().publish(second)
    table = DeltaTable(out)
    assert table.metadata().configuration == CREATE_PROPERTIES  # the mark among them, kept by the overwrite
    runs = [c.get("spark_fr.run_id") for c in table.history()]  # newest first: overwrite, append, create
    assert runs == [second.run_id, first.run_id, first.run_id]
    # each ranking's commit carries its run record (what run.json holds) as userMetadata
    records = run_records(out)  # the commits holding rows (not the one that created the table)
    assert [(r["version"], r["run_id"]) for r in records] == [(1, first.run_id), (2, second.run_id)]
    assert records[1]["run"]["params"] == second.params and records[0]["run"]["run_id"] == first.run_id
    assert set(table.to_pandas().run_id) == {second.run_id}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t"]  # the staging directory is gone


@pytest.mark.parametrize("mode", ["append", "overwrite"])
def test_an_unmarked_table_with_the_ranking_columns_is_refused_until_adopted(tmp_path, mode):
    import re

    from deltalake import DeltaTable

    out = str(tmp_path / "old")
    _earlier_spark_fr_table(out, make_ranking(1))
    before = tree(tmp_path)
    with pytest.raises(InputError, match="without spark_fr's mark") as err:
        Publication(out, "delta", mode).check()
    assert tree(tmp_path) == before
    # the message's own recipe (the deltalake form) adopts the table
    recipe = re.search(r"deltalake: (DeltaTable\(.*\)\.alter\.set_table_properties\(.*\))\)$", str(err.value)).group(1)
    eval(recipe, {"DeltaTable": DeltaTable})
    Publication(out, "delta", mode).check().publish(make_ranking(2))
    assert DeltaTable(out).to_pandas().run_id.nunique() == (2 if mode == "append" else 1)


@pytest.mark.parametrize("mark", [False, True])
def test_a_table_with_the_ranking_names_but_other_types_is_refused_even_with_the_mark(tmp_path, mark):
    from deltalake import DeltaTable, write_deltalake

    out = str(tmp_path / "theirs")
    users = make_ranking(1).to_pandas()
    users["importance"] = users["importance"].astype(str)  # the user's text column, named as ours
    write_deltalake(out, users)
    if mark:
        DeltaTable(out).alter.set_table_properties({"spark_fr.rankings": "true"}, raise_if_not_exists=False)
    before = tree(tmp_path)
    for mode in ("append", "overwrite"):
        with pytest.raises(InputError, match="column 'importance' is string, a ranking's is double"):
            Publication(out, "delta", mode).check()
    assert tree(tmp_path) == before


def test_a_table_replaced_between_the_check_and_the_commit_is_not_written(tmp_path):
    """The proof is repeated just before the commit: a foreign table that appeared meanwhile is left alone."""
    out = str(tmp_path / "t")
    pub = Publication(out, "delta", "overwrite").check()  # nothing there yet
    _earlier_spark_fr_table(out, make_ranking(7))
    before = tree(tmp_path)
    with pytest.raises(InputError, match="without spark_fr's mark.*nothing was written"):
        pub.publish(make_ranking(8))
    assert tree(tmp_path) == before


@pytest.mark.parametrize("fmt", ["csv", "parquet", "delta"])
def test_a_plot_inside_the_output_is_refused_before_the_work(tmp_path, fmt):
    out = tmp_path / "o"
    with pytest.raises(InputError, match="is inside --output .*put the plot beside it, e.g. --plot .*o.png"):
        Publication(str(out), fmt, plot=str(out / "p.png")).check()
    with pytest.raises(InputError, match="is inside --output"):
        Publication(str(out), fmt, plot=str(out / "sub" / "p.png")).check()
    (tmp_path / "link").symlink_to(out, target_is_directory=True)  # the same place under another name
    out.mkdir()
    with pytest.raises(InputError, match="is inside --output"):
        Publication(str(out), fmt, plot=str(tmp_path / "link" / "p.png")).check()
    with pytest.raises(InputError, match="--output .* is inside --plot"):
        Publication(str(tmp_path / "p.png" / "o"), fmt, plot=str(tmp_path / "p.png")).check()
    Publication(str(out), fmt, plot=str(tmp_path / "o.png")).check()  # beside it: fine
    Publication(str(out), fmt, plot=str(tmp_path / "o2" / "p.png")).check()  # a sibling whose name extends it


def test_selecting_from_a_ranking_with_bad_arguments_is_a_one_line_input_error(tmp_path):
    ranking = make_ranking(1)
    assert ranking.targets == ["__all__", "y1", "y2"]
    assert len(ranking.top("genie3", 2, target="y2")) == 2
    cases = [(lambda: ranking.top("genie4"), "score 'genie4' is not in this ranking; its scores: genie3"),
             (lambda: ranking.top("genie3", target="y3"), "target 'y3' is not in this ranking; its targets: __all__"),
             (lambda: ranking.top("genie3", 0), "n must be a positive integer, not 0"),
             (lambda: ranking.top("genie3", -1), "n must be a positive integer, not -1"),
             (lambda: ranking.top("genie3", "3"), "n must be a positive integer, not '3'"),
             (lambda: ranking.top("genie3", 2.5), "n must be a positive integer, not 2.5"),
             (lambda: ranking.top("genie3", True), "n must be a positive integer, not True"),
             (lambda: ranking.summary(-1), "n must be a positive integer"),
             (lambda: ranking.plot(str(tmp_path / "a.png"), top=0), "top must be a positive integer, not 0"),
             (lambda: ranking.plot(str(tmp_path / "a.png"), target="nope"), "target 'nope' is not in this ranking"),
             (lambda: ranking.plot(str(tmp_path)), "is a directory; give a .png file name"),
             (lambda: ranking.plot("/dev/null/x.png"), "cannot be created: /dev/null is not a directory"),
             (lambda: ranking.plot_curves(str(tmp_path / "c.png")), "plot_curves needs a boosting run")]
    for call, message in cases:
        with pytest.raises(InputError) as err:
            call()
        assert message in str(err.value) and "\n" not in str(err.value), str(err.value)
    assert sorted(os.listdir(tmp_path)) == []  # no picture, no temporary


PUBLISH_LOOP = """
import os, sys
sys.path.insert(0, {root!r})
from tests.io.test_publication import make_ranking
from spark_fr.io.writers import Publication
from spark_fr.runtime.signals import Terminated, received, sigterm_raises
out, fmt = sys.argv[1], sys.argv[2]
rankings = [make_ranking(s, n_features=3000) for s in range(2)]
with sigterm_raises():
    try:
        for i in range(10 ** 6):
            Publication(out, fmt, plot=out + ".png").check().publish(rankings[i % 2])
            if i == 0:
                print("published", flush=True)
    except Terminated:
        sys.exit(143)
    except Exception:  # as spark_fr.runner does: an error of code the signal cut short (matplotlib's renderer
        if received():  # turns it into "ValueError: Invalid bounding box") is still the termination
            sys.exit(143)
        raise
"""


@pytest.mark.parametrize("fmt", ["csv", "delta"])
def test_sigterm_while_publishing_leaves_one_whole_ranking_and_no_temporary(tmp_path, fmt):
    """A real process publishes again and again (the plot too) and is sent SIGTERM at several moments: it exits
    with 143, the output is a whole ranking of ours, and no hidden .tmp-/.old- sibling is left. (Issue 37: under
    load the signal once landed in a weakref callback of matplotlib's while the plot was drawn, Python dropped
    it, and the process ran on ignoring SIGTERM: spark_fr.runtime.signals now sends it again.)"""
    import signal
    import subprocess
    import sys
    import time

    from deltalake import DeltaTable

    script = tmp_path / "loop.py"
    script.write_text(PUBLISH_LOOP.format(root=str(ROOT)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    for k, delay in enumerate((0.0, 0.13, 0.31)):
        root = tmp_path / f"run{k}"
        root.mkdir()
        out = root / "o"
        errors = tmp_path / f"stderr{k}.txt"
        with open(errors, "w") as err:
            proc = subprocess.Popen([sys.executable, str(script), str(out), fmt], stdout=subprocess.PIPE,
                                    stderr=err, text=True, env=env)
        try:
            assert proc.stdout.readline().strip() == "published", errors.read_text()[-3000:]
            time.sleep(delay)
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        # a signal Python dropped inside a finalizer left the loop running (issue 37): its message is here
        assert code == 143 and "Exception ignored" not in errors.read_text(), errors.read_text()[-3000:]
        assert sorted(p.name for p in root.iterdir()) == ["o", "o.png"]
        assert is_our_png(str(root / "o.png"))
        if fmt == "csv":
            assert sorted(os.listdir(out)) == ["ranking.csv", "run.json"]
            table = pd.read_csv(out / "ranking.csv")
            assert len(table) == 3 * 3000 and {json.loads((out / "run.json").read_text())["run_id"]} == set(table.run_id)
        else:
            rows = DeltaTable(str(out)).to_pandas()
            assert len(rows) % (3 * 3000) == 0 and len(rows) > 0


def test_a_sigterm_inside_a_deferred_section_is_raised_when_it_ends():
    import signal

    from spark_fr.runtime.signals import Terminated, deferred, sigterm_raises

    previous = signal.getsignal(signal.SIGTERM)
    reached = []
    with sigterm_raises():
        with pytest.raises(Terminated):
            with deferred():
                os.kill(os.getpid(), signal.SIGTERM)
                reached.append("after the signal")  # the section goes on
        assert reached == ["after the signal"]
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN  # a second one cannot cut the clean-up short
    assert signal.getsignal(signal.SIGTERM) == previous


def test_a_sigterm_during_the_directory_swap_waits_until_the_new_ranking_is_in_place(tmp_path, monkeypatch):
    """The signal arrives right after the earlier ranking was moved aside: the swap completes first."""
    import signal

    from spark_fr.runtime.signals import Terminated, sigterm_raises

    out = tmp_path / "r"
    Publication(str(out), "csv").check().publish(make_ranking(1))
    rename = os.rename

    def rename_then_signal(src, dst):
        rename(src, dst)
        if str(src) == str(out) and ".old-" in str(dst):
            os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(os, "rename", rename_then_signal)
    second = make_ranking(2)
    with sigterm_raises():
        with pytest.raises(Terminated):
            Publication(str(out), "csv", plot=str(tmp_path / "r.png")).check().publish(second)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r", "r.png"]
    assert json.loads((out / "run.json").read_text())["run_id"] == second.run_id


def test_a_publication_that_fails_removes_the_folders_it_made(tmp_path):
    """The output's commit is refused (a user's file appeared there after the check): the plot's folders made
    for this run are removed again; a folder that holds something is kept."""
    out, png = tmp_path / "a" / "b" / "o", tmp_path / "c" / "d" / "p.png"
    pub = Publication(str(out), "csv", plot=str(png)).check()
    out.mkdir(parents=True)
    (out / "mine.txt").write_text("the user's")
    before = tree(tmp_path)
    with pytest.raises(InputError, match="holds files spark_fr did not write"):
        pub.publish(make_ranking(1))
    assert tree(tmp_path) == before  # no c/, no c/d/, no temporary; a/b/o and the user's file untouched
