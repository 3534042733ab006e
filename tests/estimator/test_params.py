"""The Params of the Estimator and its model (spark_fr/estimator/params.py, issue 35 (2)): explainParams and
extractParamMap work for every Param (a tuple default made pyspark's explainParams raise TypeError), and the
Params of the methods not chosen are grouped in one line per group."""
import numpy as np
import pandas as pd

from spark_fr.estimator import FeatureRanker, FeatureRankingModel


def explained(stage) -> dict:
    """{first word of each explainParams line: the line}."""
    text = stage.explainParams()
    return {line.split(":")[0].split(" (")[0]: line for line in text.split("\n")}


def test_explain_params_and_extract_param_map_cover_every_param(spark):
    ranker = FeatureRanker(labelCol="y", numTrees=3, seed=1, scores=["genie3"], reliefInfluence=[0.2, 0.4])
    lines = explained(ranker)
    used = [n for n in lines if " options" not in n]
    grouped = {n: line for n, line in lines.items() if " options" in n}
    assert sorted(grouped) == ["boosting options", "relief options", "relief/reliefe options", "reliefe options"]
    assert grouped["relief options"].startswith("relief options (unused with method='ensemble'; explainParam(name) "
                                                "explains one): reliefHmlcNormaliser, reliefHmlcSquared, "
                                                "reliefInfluence, ")
    named = used + [p for line in grouped.values() for p in line.split("): ")[1].split(", ")]
    assert sorted(named) == sorted(p.name for p in ranker.params) and len(named) == 55
    assert ranker.explainParam("reliefInfluence").endswith("(default: (0.5, 1.0), current: (0.2, 0.4))")
    assert lines["numTrees"].endswith("(current: 3)") and lines["maxDepth"].endswith("(undefined)")
    values = ranker.extractParamMap()
    assert set(values) == {p for p in ranker.params if ranker.isDefined(p)} and len(values) == 39
    assert values[ranker.reliefInfluence] == (0.2, 0.4) and values[ranker.selectionMode] == "numTopFeatures"

    relief = explained(ranker.copy({ranker.method: "relief"}))
    assert "reliefNeighbours" in relief and "numTrees" not in relief and "ensemble/boosting options" in relief

    pdf = pd.DataFrame(np.random.default_rng(0).uniform(size=(40, 3)), columns=["a", "b", "y"])
    model = ranker.fit(spark.createDataFrame(pdf))
    assert isinstance(model, FeatureRankingModel)
    assert explained(model) == lines
    assert {p.name: v for p, v in model.extractParamMap().items()} == \
        {p.name: v for p, v in ranker.extractParamMap().items()}


def test_the_new_params_have_spark_ml_getters_and_setters():
    r = FeatureRanker().setLabelType("categorical").setSelectionMode("fwe").setSelectionThreshold(0.01)
    assert (r.getLabelType(), r.getSelectionMode(), r.getSelectionThreshold()) == ("categorical", "fwe", 0.01)
    fresh = FeatureRanker()
    assert (fresh.getLabelType(), fresh.getSelectionMode(), fresh.getSelectionThreshold()) == \
        (None, "numTopFeatures", None)
