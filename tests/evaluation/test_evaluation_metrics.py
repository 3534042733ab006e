"""The evaluation's measures against scikit-learn's, and the pooled AUPRC against a literal reading of CLUS's
ROCAndPRCurve (spark_fr.evaluation.metrics)."""
import numpy as np
import pytest
from sklearn import metrics as skm

from spark_fr.evaluation import metrics as M


@pytest.mark.parametrize("seed", range(4))
def test_classification_measures_equal_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    K = int(rng.integers(2, 6))
    y = rng.integers(0, K, 200).astype(float)
    pred = np.where(rng.random(200) < 0.6, y, rng.integers(0, K, 200)).astype(float)
    if seed == 3:  # a class never predicted and one never true: scikit-learn's averaging over present classes
        pred[pred == 0] = 1
        y[y == K - 1] = 0
    got = M.classification_measures(M.confusion(y, pred, K))
    assert got["accuracy"] == pytest.approx(skm.accuracy_score(y, pred), abs=1e-12)
    assert got["kappa"] == pytest.approx(skm.cohen_kappa_score(y, pred), abs=1e-12)
    assert got["macro_f1"] == pytest.approx(skm.f1_score(y, pred, average="macro", zero_division=0), abs=1e-12)
    assert got["mcc"] == pytest.approx(skm.matthews_corrcoef(y, pred), abs=1e-12)
    present = np.union1d(y, pred)
    one_vs_rest = [skm.matthews_corrcoef(y == c, pred == c) for c in present]
    assert got["macro_mcc"] == pytest.approx(np.mean(one_vs_rest), abs=1e-12)


def test_summed_confusion_matrices_are_not_averaged_scores():
    """The SSL papers' rule: a cross-validation's measures come from the summed matrix, which is not the mean."""
    y1, p1 = np.array([0, 0, 1, 1.0]), np.array([0, 1, 1, 1.0])
    y2, p2 = np.array([0, 1, 1, 1, 1, 1.0]), np.array([0, 0, 0, 1, 1, 1.0])
    pooled = M.classification_measures(M.confusion(y1, p1, 2) + M.confusion(y2, p2, 2))["macro_f1"]
    assert pooled == pytest.approx(skm.f1_score(np.r_[y1, y2], np.r_[p1, p2], average="macro"))
    mean = np.mean([skm.f1_score(y1, p1, average="macro"), skm.f1_score(y2, p2, average="macro")])
    assert abs(pooled - mean) > 1e-3


@pytest.mark.parametrize("seed", range(3))
def test_multilabel_measures_equal_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    n, L, k = 120, 7, 10
    Y = (rng.random((n, L)) < rng.uniform(0.05, 0.6, L)).astype(float)
    P = np.clip(np.round((0.5 * Y + 0.7 * rng.random((n, L))) * k) / k, 0, 1)  # k-neighbour shares
    pred = (P >= 0.5).astype(int)
    got = M.multilabel_measures(Y, P)
    assert got["micro_f1"] == pytest.approx(skm.f1_score(Y, pred, average="micro", zero_division=0))
    assert got["macro_f1"] == pytest.approx(skm.f1_score(Y, pred, average="macro", zero_division=0))
    assert got["hamming"] == pytest.approx(skm.hamming_loss(Y, pred))
    assert got["ml_accuracy"] == pytest.approx(skm.jaccard_score(Y, pred, average="samples", zero_division=1))
    assert got["subset_accuracy"] == pytest.approx(skm.accuracy_score(Y, pred))
    assert got["pooled_ap"] == pytest.approx(skm.average_precision_score(Y.ravel(), P.ravel()))


def test_multilabel_unknown_cells_are_left_out():
    rng = np.random.default_rng(5)
    Y = (rng.random((50, 4)) < 0.4).astype(float)
    P = rng.integers(0, 6, (50, 4)) / 5.0
    Yn = Y.copy()
    Yn[rng.random(Y.shape) < 0.2] = np.nan
    known = ~np.isnan(Yn)
    got = M.multilabel_measures(Yn, P)
    pred = (P >= 0.5)
    assert got["hamming"] == pytest.approx(np.mean(pred[known] != (Yn[known] > 0.5)))
    tp = np.sum(pred[known] & (Yn[known] > 0.5))
    fp = np.sum(pred[known] & (Yn[known] < 0.5))
    fn = np.sum(~pred[known] & (Yn[known] > 0.5))
    assert got["micro_f1"] == pytest.approx(2 * tp / (2 * tp + fp + fn))
    assert got["pooled_ap"] == pytest.approx(skm.average_precision_score(Yn[known], P[known]))


@pytest.mark.parametrize("seed", range(5))
def test_pr_areas_equal_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    v = rng.random(300) < 0.3
    s = np.round(np.clip(0.4 * v + rng.random(300), 0, 1) * 10) / 10  # ties, as k-neighbour shares
    assert M.pr_area(v, s, "step") == pytest.approx(skm.average_precision_score(v, s))
    precision, recall, _ = skm.precision_recall_curve(v, s)
    assert M.pr_area(v, s, "trapezoid") == pytest.approx(skm.auc(recall, precision))


def _clus_area(v, s):
    """A literal reading of CLUS's ROCAndPRCurve (enumerateThresholdsAll, addOutputPR, computeArea)."""
    order = sorted(range(len(s)), key=lambda i: -s[i])
    n_pos = int(np.sum(v))
    pr = []
    extend = True
    prev_tp = prev_fp = 0
    tp = fp = 0

    def output(TP, FP):
        nonlocal extend, prev_tp, prev_fp
        if TP + FP == 0:
            return
        prec, rec = TP / (TP + FP), TP / n_pos
        if extend:
            pr.append((0.0, prec))
            extend = False
        else:
            for cr in range(prev_tp + 1, TP):
                cr_fp = prev_fp + (FP - prev_fp) / (TP - prev_tp) * (cr - prev_tp)
                pr.append((cr / n_pos, cr / (cr + cr_fp)))
        pr.append((rec, prec))
        prev_tp, prev_fp = TP, FP

    prev = None
    for i in order:
        if prev is not None and s[i] != prev:
            output(tp, fp)
        if v[i]:
            tp += 1
        else:
            fp += 1
        prev = s[i]
    output(tp, fp)
    return sum(0.5 * (pr[i][1] + pr[i - 1][1]) * (pr[i][0] - pr[i - 1][0]) for i in range(1, len(pr)))


@pytest.mark.parametrize("seed", range(6))
def test_pooled_auprc_is_clus_interpolated_area(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 400))
    v = rng.random(n) < rng.uniform(0.05, 0.5)
    v[0] = True
    k = int(rng.integers(1, 16))
    s = np.round(np.clip(0.3 * v + rng.random(n), 0, 1) * k) / k
    assert M.pr_area(v, s, "interpolated") == pytest.approx(_clus_area(v, s), abs=1e-12)


def test_pr_areas_by_hand():
    v = np.array([1, 1, 0, 0], bool)
    assert M.pr_area(v, np.array([0.9, 0.8, 0.2, 0.1]), "interpolated") == pytest.approx(1.0)  # perfect
    # all tied: one point (recall 1, precision 1/2), extended to recall 0
    tied = np.full(4, 0.5)
    assert M.pr_area(v, tied, "interpolated") == pytest.approx(0.5)
    assert M.pr_area(v, tied, "step") == pytest.approx(0.5)
    assert M.pr_area(v, tied, "trapezoid") == pytest.approx(0.75)  # linear to (0, 1): over-rates
    assert np.isnan(M.pr_area(np.zeros(3, bool), np.ones(3)))


def test_arrmse_uses_the_training_variance():
    rng = np.random.default_rng(0)
    Ytr = rng.normal(size=(100, 3)) * [1, 5, 0.1]
    Y = rng.normal(size=(40, 3)) * [1, 5, 0.1]
    P = Y + rng.normal(size=Y.shape) * 0.3
    var = M.train_variance(Ytr)
    expect = np.mean([np.sqrt(skm.mean_squared_error(Y[:, j], P[:, j]) / np.var(Ytr[:, j])) for j in range(3)])
    assert M.arrmse(Y, P, var) == pytest.approx(expect)
    # predicting the training mean scores about 1
    assert M.arrmse(Y, np.tile(Ytr.mean(axis=0), (40, 1)), var) == pytest.approx(1.0, abs=0.35)
    Yn = Y.copy()
    Yn[:5, 0] = np.nan
    r = M.rrmse(Yn, P, var)
    assert r[0] == pytest.approx(np.sqrt(np.mean((Y[5:, 0] - P[5:, 0]) ** 2) / var[0]))


def test_feature_mse():
    X = np.array([[0.0, 1.0], [1.0, 2.0], [np.nan, 0.0]])
    P = np.array([[0.5, 1.0], [1.0, 0.0], [0.3, 0.0]])
    assert M.feature_mse(X, P, np.array([False, True])) == pytest.approx((0.25 + 0 + 0 + 1 + 0) / 5)


def test_measures_of_the_target_types():
    from spark_fr import tasks

    assert M.measures_of(tasks.get("mtr").evaluation.prediction) == ["arrmse"]
    hmlc = tasks.get("hmlc").evaluation
    assert hmlc.measure in M.measures_of(hmlc.prediction) and M.greater_is_better("pooled_auprc")
    for t in tasks.TARGET_TYPES:  # every target type's main measure is one of its prediction's
        assert t.evaluation.measure in M.measures_of(t.evaluation.prediction), t.name
    assert not M.greater_is_better("hamming") and not M.greater_is_better("au_rarrmse")
