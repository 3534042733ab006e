"""Target types, one piece at a time: inference from the target columns, the checks of a forced task, the
encoders, fitting (including values whose squares overflow), and the registry."""
import numpy as np
import pytest

from spark_fr import tasks
from spark_fr.tasks import TargetColumn, TaskError


def num(name, values=None, lo=0.0, hi=1.0, n_known=10):
    distinct = None if values is None else np.array(sorted(values), dtype=float)
    return TargetColumn(name, "numeric", None, distinct, n_known, lo, hi)


def nom(name, cats, counts=None):
    return TargetColumn(name, "nominal", list(cats), None, 10, np.inf, -np.inf,
                        counts if counts is not None else {c: 5 for c in cats})


HIER = TargetColumn("class", "hierarchical")


@pytest.mark.parametrize("columns,labels_xml,expected", [
    ([nom("y", ["a", "b"])], False, "classification"),
    ([num("y", None, 0.0, 9.5)], False, "regression"),
    ([num("y", [0, 1])], False, "regression"),          # one 0/1 number: regression, as before
    ([num("a", None), num("b", [0, 0.5, 1])], False, "mtr"),
    ([num("a", [0, 1]), nom("b", ["0", "1"])], False, "mlc"),
    ([num("a", None)], True, "mlc"),                   # a label file decides (and the check then refuses)
    ([HIER], False, "hmlc"),
])
def test_inference(columns, labels_xml, expected):
    assert tasks.infer(columns, labels_xml).name == expected


def test_inference_refuses_what_no_type_claims():
    with pytest.raises(TaskError, match="no target column"):
        tasks.infer([])
    with pytest.raises(TaskError, match="choose --task explicitly"):
        tasks.infer([nom("a", ["x", "y"]), nom("b", ["u", "v"])])


@pytest.mark.parametrize("task,columns,fragment", [
    ("regression", [nom("y", ["a", "b", "c", "d", "e"])], "target column 'y' is nominal ('a', 'b', 'c', 'd', ...)"),
    ("regression", [num("a"), num("b")], "regression takes exactly one numeric target"),
    ("mtr", [num("a"), nom("b", ["u"])], "target column 'b' is nominal"),
    ("regression", [num("y", None, 3.0, 3.0)], "target column 'y' is constant"),
    ("mtr", [num("a", None, 1, 1), num("b", None, 2, 2)], "every target column is constant"),
    ("mlc", [num("Y1", None, 0.2, 7.3)], "label column 'Y1' has values more than 255 distinct values"),
    ("mlc", [num("a", [0, 1]), nom("b", ["no", "yes"])], "label column 'b' has values 'no', 'yes'"),
    ("classification", [num("y", None, 0.1, 9.9)], "it looks continuous: use --task regression"),
    ("classification", [nom("y", ["a", "b"], {"a": 9, "b": 0})], "has a single class 'a'"),
    ("classification", [nom("a", ["x"]), nom("b", ["y"])], "classification takes exactly one target"),
    ("hmlc", [num("y")], "HMLC needs a label hierarchy"),
    ("unsupervised", [num("y")], "--task unsupervised takes no --targets"),
])
def test_a_forced_task_is_checked_against_its_targets(task, columns, fragment):
    with pytest.raises(TaskError) as info:
        tasks.get(task).check(columns)
    assert fragment in str(info.value)


def test_encoders():
    mlc = tasks.get("mlc").encoder([nom("a", ["0", "1"]), num("b", [0, 1])])
    Y = mlc.encode([np.array([1.0, 0.0, np.nan]), np.array([0.0, 1.0, 1.0])], 3)
    np.testing.assert_array_equal(Y, [[1, 0], [0, 1], [np.nan, 1]])
    cls = tasks.get("classification").encoder([num("y", [1, 3, 7])])
    assert cls.classes == ["1", "3", "7"]
    np.testing.assert_array_equal(cls.encode([np.array([7.0, 1.0, np.nan, 3.0])], 4)[:, 0], [2, 0, np.nan, 1])
    named = tasks.get("classification").encoder([nom("y", ["no", "yes"])])
    assert named.classes == ["no", "yes"] and named.categories == [["no", "yes"]]
    from spark_fr.hierarchy import Hierarchy

    h = Hierarchy.from_clus_spec("A,A/a1,B")
    Yh = tasks.get("hmlc").encoder([HIER], h).encode([["A/a1", "B", "?"]], 3)
    col = {lab: j for j, lab in enumerate(h.labels)}
    assert Yh[0, col["A"]] == Yh[0, col["A/a1"]] == 1 and Yh[0, col["B"]] == 0  # closed under ancestors
    assert Yh[1, col["B"]] == 1 and Yh[1].sum() == 1
    assert np.isnan(Yh[2]).all()
    assert tasks.get("unsupervised").encoder([]).encode([], 4).shape == (4, 0)


def test_fitting_scales_columns_whose_squares_overflow_by_a_power_of_two():
    from spark_fr.tasks.regression import SAFE_EXPONENT, scale_for

    rng = np.random.default_rng(1)
    Y = rng.normal(size=(50, 3))
    assert np.all(scale_for(np.abs(Y).max(axis=0)) == 1.0)
    big = Y * np.array([1.0, 2.0 ** 600, 2.0 ** 1000])
    scale = scale_for(np.abs(big).max(axis=0))
    assert scale[0] == 1.0 and np.all(np.log2(scale[1:]) % 1 == 0)
    assert np.nanmax(np.abs(big * scale)) <= 2.0 ** SAFE_EXPONENT
    a, b = tasks.get("mtr").fit(Y, list("abc")), tasks.get("mtr").fit(big, list("abc"))
    np.testing.assert_array_equal(a.clustering_matrix(a.targets(Y)), b.clustering_matrix(b.targets(big)))


def test_registry():
    assert tasks.names() == ("classification", "regression", "mtr", "mlc", "hmlc", "unsupervised")
    assert tasks.names("ensemble") == tasks.names()
    assert set(tasks.names("relief")) == set(tasks.names())
    with pytest.raises(TaskError, match="unknown task 'multiclass'"):
        tasks.get("multiclass")
    relief_only = type("ReliefOnly", (tasks.TargetType,), {"name": "relief_only", "methods": frozenset({"relief"})})()
    with pytest.raises(TaskError, match="--method ensemble does not support the task 'relief_only'"):
        tasks.require_method(relief_only, "ensemble")
    assert not tasks.get("unsupervised").supervised
