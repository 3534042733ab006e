"""spark_fr.io.csv_text: a frame's CSV text is pandas' ``to_csv(index=False)`` byte for byte, and ranking.csv is the
file pandas wrote before."""
import os

import numpy as np
import pandas as pd
import pytest

from spark_fr.io.csv_text import frame_csv
from spark_fr.io.writers import Publication
from tests.io.test_publication import make_ranking

AWKWARD = ["", "plain", "a,b", 'say "hi"', "two\nlines", "cr\rhere", "crlf\r\n", " lead", "trail ", "é ü ✓", '"',
           ",", "'single'", "tab\there", "x" * 900 + ',"' + "y" * 50]


def random_frame(seed: int, rows: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-5, 1e-4, 1e16, 1e15, 1.5e300, 5e-324, 0.1, 1 / 3])
    spread = rng.normal(size=rows) * 10.0 ** rng.integers(-8, 9, rows)
    floats = np.where(rng.random(rows) < 0.3, rng.choice(special, rows), spread)
    words = [AWKWARD[i] for i in rng.integers(0, len(AWKWARD), rows)]
    objects = [None if r < 0.1 else np.nan if r < 0.15 else 7 if r < 0.2 else 2.5 if r < 0.25 else (1, "a") if r < 0.3
               else w for r, w in zip(rng.random(rows), words)]
    with np.errstate(over="ignore"):  # 1.5e300 as float32: inf
        f32 = floats.astype(np.float32)
    return pd.DataFrame({"f": floats, "i": rng.integers(-10 ** 12, 10 ** 12, rows), "b": rng.random(rows) < 0.5,
                         "w,ord": words, "o": pd.Series(objects, dtype=object),
                         "f32": f32, "u": rng.integers(0, 255, rows).astype(np.uint8),
                         "same": ["{\"k\": [1, 2], \"s\": \"v,w\"}"] * rows})


@pytest.mark.parametrize("seed,rows", [(0, 0), (1, 1), (2, 7), (3, 500)])
def test_frame_csv_is_pandas_to_csv(seed, rows):
    """Floats (NaN, infinities, signed zeros, the switches to exponents, the smallest subnormal), integers, booleans,
    strings needing quotes (commas, quotes, CR, LF, one repeated long value), missing values and other objects."""
    df = random_frame(seed, rows)
    assert frame_csv(df) == df.to_csv(index=False)
    for columns in (["f"], ["o", "w,ord"], ["same", "i"]):
        assert frame_csv(df[columns]) == df[columns].to_csv(index=False), columns


def test_frames_it_does_not_cover_are_written_by_pandas():
    """Dates, categories, nullable integers, one column, duplicate and non-string names: the same text (pandas')."""
    base = pd.DataFrame({"a": [1.5, np.nan], "s": ["x", "y,z"]})
    frames = [base.assign(d=pd.to_datetime(["2024-01-01", None])), base.assign(c=pd.Categorical(["p", "q"])),
              base.assign(n=pd.array([1, None], dtype="Int64")), base[["s"]], base.set_axis(["a", "a"], axis=1),
              base.set_axis([0, 1], axis=1), base.iloc[:, :0]]
    for df in frames:
        assert frame_csv(df) == df.to_csv(index=False)


def test_ranking_csv_is_the_file_pandas_wrote(tmp_path):
    """ranking.csv against what the writer wrote before: the table with ``created_at`` in ISO form, through
    ``to_csv``."""
    ranking = make_ranking(3, 40)
    Publication(str(tmp_path / "out"), "csv").publish(ranking)
    df = ranking.to_pandas()
    df["created_at"] = df["created_at"].map(lambda t: t.isoformat())
    df.to_csv(tmp_path / "pandas.csv", index=False)
    assert (tmp_path / "out" / "ranking.csv").read_bytes() == (tmp_path / "pandas.csv").read_bytes()
    assert os.path.getsize(tmp_path / "pandas.csv") > 1000
