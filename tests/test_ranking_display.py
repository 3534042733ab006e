"""How a ranking shows in a notebook: its HTML view (``_repr_html_``, what ``display(ranking)`` renders on
Databricks and in Jupyter) and its plot, a figure returned closed so that it shows once (spark_fr.ranking)."""
import io
import re
from html.parser import HTMLParser

import matplotlib.image
import numpy as np
import pytest

from tests.conftest import ROOT, check_png
from spark_fr.errors import InputError
from spark_fr.ranking import Ranking
from spark_fr.results import ScoreKey, ScoreResult


class Tables(HTMLParser):
    """The text of every table cell, per table and row, and the tags seen."""

    def __init__(self, text):
        super().__init__()
        self.tables, self.tags, self._cell = [], [], None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.tables[-1][-1].append(self._cell)
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


@pytest.fixture
def ranking():
    names = ["<script>x</script>", "b & c", "noise", "constant"]
    genie3 = ScoreResult(ScoreKey("genie3"), np.array([0.7, 0.5, 0.01, 0.0]), np.array([0.1, 0.2, 0.0, 0.0]))
    symbolic = ScoreResult(ScoreKey("symbolic"), np.array([0.2, 0.3, 0.0, 0.0]), None)
    per_target = ScoreResult(ScoreKey("genie3", True), np.array([[0.7, 0.5, 0.0, 0.0], [0.1, 0.2, 0.0, 0.0]]), None)
    params = {"task": "mtr", "method": "ensemble", "ensemble": "rf", "trees": 12, "targets": ["y1", "y2"], "seed": 3}
    metadata = {"n_rows": 1500, "n_features": 4, "timings": {"total_s": 2.25},
                "warnings": ["no information in the rf ranking"], "title": "data.arff"}
    return Ranking.from_scores(names, np.array([1, 1, 1, 0], bool), [genie3, symbolic, per_target], ["y1", "y2"],
                               params, metadata)


def test_html_has_the_facts_and_the_top_features_per_score(ranking):
    text = ranking._repr_html_()
    assert text == ranking.to_html(10)
    assert "<script>" not in text and "&lt;script&gt;x&lt;/script&gt;" in text  # names are escaped
    assert "1,500 rows × 4 features · task mtr (y1, y2) · rf of 12 trees · seed 3 · 2.2 s" in text
    assert ranking.run_id in text and "⚠ no information in the rf ranking" in text
    assert "per-target rankings for 2 targets" in text
    [table] = Tables(text).tables
    assert table[0] == ["rank", "genie3", "symbolic"]
    assert table[1] == ["1", "<script>x</script>", "0.7", "b & c", "0.3"]
    assert table[2] == ["2", "b & c", "0.5", "<script>x</script>", "0.2"]
    assert [row[0] for row in table[1:]] == ["1", "2", "3", "4"]
    assert len(Tables(ranking.to_html(2)).tables[0]) == 3
    with pytest.raises(InputError, match="n must be a positive integer"):
        ranking.to_html(0)


def test_summary_lists_the_top_features_per_score(ranking):
    """The text summary: per score its top features, ranks right-aligned, names padded to 32 characters, the
    importance and its spread where the score has one (symbolic has none)."""
    assert ranking.summary(2).splitlines() == [
        "genie3 (top 2):",
        "    1  <script>x</script>               0.7 ± 0.1",
        "    2  b & c                            0.5 ± 0.2",
        "symbolic (top 2):",
        "    1  b & c                            0.3",
        "    2  <script>x</script>               0.2"]


def test_plot_without_a_path_returns_a_closed_figure_that_renders(ranking, tmp_path):
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    fig = ranking.plot(top=3)
    assert plt.get_fignums() == before  # closed: a notebook shows it once (as a cell's value or display(fig))
    assert [ax.get_title() for ax in fig.axes] == ["genie3", "symbolic"]
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    buffer.seek(0)
    image = matplotlib.image.imread(buffer, format="png")
    assert image.shape[0] > 100 and image[..., :3].std() > 0.05
    saved = ranking.plot(str(tmp_path / "p.png"), top=3)
    assert plt.get_fignums() == before
    saved.dpi = 110  # the dpi the PNG is saved with
    check_png(tmp_path / "p.png", saved, best="<script>x</script>")


def test_relational_html_has_a_table_per_level(spark):
    import spark_fr

    ranking = spark_fr.rank_relational(schema=str(ROOT / "conf" / "relational" / "financial.yaml"), trees=3,
                                       cv_folds=2, seed=1, spark=spark)
    text = ranking._repr_html_()
    parsed = Tables(text)
    assert len(parsed.tables) == 3 and parsed.tags.count("caption") == 3
    assert text.index(">relations<") < text.index(">attributes<") < text.index(">features<")
    top_relation = ranking.top("genie3", 1, level="relation")["feature"][0]
    assert parsed.tables[0][1][1 + 2 * ranking.scores.index("genie3")] == top_relation
    assert re.search(r"[\d,]+ features generated from \d+ tables", text) and "cross-validated accuracy" in text
    assert "RelationalRanking" in text
    lines = ranking.summary(1).splitlines()  # per level and score, the names padded to 40 characters
    assert lines[0] == f"{ranking.scores[0]}, {ranking.levels[0]}s (top 1):"
    assert re.fullmatch(r"    1  .{40} \S+( ± \S+)?", lines[1]) and lines[-1].startswith("cross-validated accuracy")
