"""spark_fr.ranking: the default run id of a ranking never takes down a process that reads ``ranking.csv`` with
pandas (pandas 2.3.3's C parser crashes on a field like ``45e3417356314ba9...``: digits, an ``e``, ten or more
digits; about 1 random uuid4 in 950 is one)."""
import re
import subprocess
import sys
import uuid

import numpy as np

from spark_fr.ranking import Ranking, new_run_id
from spark_fr.results import ScoreKey, ScoreResult

CRASHES_PANDAS = uuid.UUID("45e34173-5631-4ba9-9f5b-4096a0a4d134")  # segfaulted tests/io/test_io_csv.py
ALL_DIGITS = uuid.UUID("12345678-9012-4345-8789-012345678901")  # read back as the float 1.2345678901234568e+31
PLAIN = uuid.UUID("987c25b0-4b80-4f2e-a30d-39b503561c7d")


def one_ranking() -> Ranking:
    scores = ScoreResult(ScoreKey("genie3"), np.array([0.7, 0.2]), np.array([0.1, 0.0]))
    return Ranking.from_scores(["a", "b"], np.array([True, True]), [scores], ["y"], {"seed": 1}, {})


def test_a_run_id_pandas_would_read_as_a_number_is_drawn_again(monkeypatch, tmp_path):
    drawn = iter([CRASHES_PANDAS, ALL_DIGITS, PLAIN])
    monkeypatch.setattr(uuid, "uuid4", lambda: next(drawn))
    path = tmp_path / "ranking.csv"
    one_ranking().to_pandas().to_csv(path, index=False)
    read = "import pandas as pd, sys; print(pd.read_csv(sys.argv[1]).run_id.unique().tolist())"
    # in another process: before the fix pandas' parser died there of a segmentation fault on CRASHES_PANDAS
    done = subprocess.run([sys.executable, "-X", "faulthandler", "-c", read, str(path)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == repr([PLAIN.hex])


def test_run_ids_are_distinct_uuid4_hex_that_never_read_as_numbers():
    ids = [new_run_id() for _ in range(3000)]
    assert len(set(ids)) == len(ids)
    for run_id in ids:
        assert re.fullmatch(r"[0-9a-f]{32}", run_id) and uuid.UUID(run_id).version == 4, run_id
        assert not re.match(r"[0-9]+(e|$)", run_id), run_id


def test_a_run_id_given_by_the_user_is_kept_as_given():
    scores = ScoreResult(ScoreKey("genie3"), np.array([0.7]), None)
    ranking = Ranking.from_scores(["a"], np.array([True]), [scores], ["y"], {}, {"run_id": "1e5"})
    assert ranking.run_id == "1e5" and set(ranking.to_pandas().run_id) == {"1e5"}
