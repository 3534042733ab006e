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
from spark_fr.io.writers import Publication, foreign_entries, is_our_png
from spark_fr.ranking import Ranking
from spark_fr.results import ScoreKey, ScoreResult


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
