"""Statistics of the evaluation (spark_fr.evaluation.statistics) against scipy and Demsar (2006)'s worked example."""
import numpy as np
import pytest
from scipy import stats

from spark_fr.evaluation import statistics as S

# Demsar 2006, Table 6: AUC of C4.5, C4.5+m, C4.5+cf, C4.5+m+cf on 14 data sets. The paper's ranks (voting: cf ahead
# of m+cf) need the unrounded values; 0.97501 reproduces them (its printed 0.975 is a tie).
DEMSAR = np.array([
    [0.763, 0.768, 0.771, 0.798], [0.599, 0.591, 0.590, 0.569], [0.954, 0.971, 0.968, 0.967],
    [0.628, 0.661, 0.654, 0.657], [0.882, 0.888, 0.886, 0.898], [0.936, 0.931, 0.916, 0.931],
    [0.661, 0.668, 0.609, 0.685], [0.583, 0.583, 0.563, 0.625], [0.775, 0.838, 0.866, 0.875],
    [1.000, 1.000, 1.000, 1.000], [0.940, 0.962, 0.965, 0.962], [0.619, 0.666, 0.614, 0.669],
    [0.972, 0.981, 0.97501, 0.975], [0.957, 0.978, 0.946, 0.970]])


def test_demsar_worked_example():
    fr = S.friedman(DEMSAR, greater_is_better=True, digits=None)
    assert np.round(fr["ranks"], 3).tolist() == [3.143, 2.000, 2.893, 1.964]
    assert fr["chi2"] == pytest.approx(9.28, abs=0.005)
    assert fr["f"] == pytest.approx(3.69, abs=0.005)
    assert S.nemenyi_cd(4, 14) == pytest.approx(1.25, abs=0.005)  # "CD = 2.569 sqrt(4*5 / (6*14)) = 1.25"
    # Wilcoxon, C4.5+m against C4.5: zero differences split between the sides gives T = 12, p < 0.05
    assert stats.wilcoxon(DEMSAR[:, 1], DEMSAR[:, 0], zero_method="zsplit").statistic == 12
    assert S.wilcoxon(DEMSAR[:, 1], DEMSAR[:, 0]) == pytest.approx(0.011, abs=0.001)


def test_nemenyi_q_is_demsars_table():
    q = [S.nemenyi_q(k) for k in (2, 3, 4, 5, 10)]
    assert q == pytest.approx([1.960, 2.343, 2.569, 2.728, 3.164], abs=1e-3)  # the table truncates 2.3437


@pytest.mark.parametrize("seed", range(4))
def test_friedman_equals_scipy(seed):
    rng = np.random.default_rng(seed)
    N, k = int(rng.integers(5, 30)), int(rng.integers(3, 7))
    scores = np.round(rng.random((N, k)), 1 if seed % 2 else 6)  # with ties (seed odd) and without
    fr = S.friedman(scores, digits=None, tie_correction=True)
    ref = stats.friedmanchisquare(*scores.T)
    assert fr["chi2"] == pytest.approx(ref.statistic)
    assert fr["p"] == pytest.approx(ref.pvalue)
    # lower-is-better ranks are the mirror image
    assert np.allclose(S.average_ranks(scores, False, None), k + 1 - S.average_ranks(scores, True, None))


@pytest.mark.parametrize("seed", range(3))
def test_wilcoxon_equals_scipy(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.random(12), rng.random(12)
    assert S.wilcoxon(a, b) == pytest.approx(stats.wilcoxon(a, b, zero_method="zsplit").pvalue)
    assert S.wilcoxon(a, a) == 1.0
    assert S.wilcoxon([1.0], [2.0]) == 1.0
    # ties and zeros (values rounded as the evaluation's are): the normal approximation, not a permutation test
    c, e = np.round(a, 1), np.round(b, 1)
    c[0] = e[0]
    ref = stats.wilcoxon(c, e, zero_method="zsplit", method="asymptotic").pvalue
    assert S.wilcoxon(c, e) == pytest.approx(ref)


def test_benjamini_hochberg_by_hand():
    p = [0.01, 0.04, 0.03, 0.20, np.nan]
    reject, adjusted = S.benjamini_hochberg(p, 0.05)
    # sorted 0.01, 0.03, 0.04, 0.20 against 0.0125, 0.025, 0.0375, 0.05: the largest i passing is 1
    assert reject.tolist() == [True, False, False, False, False]
    # adjusted: 4 p_(i) / i = 0.04, 0.06, 0.0533, 0.2, then the minimum over j >= i
    assert np.allclose(adjusted[:4], [0.04, 0.16 / 3, 0.16 / 3, 0.20])
    assert np.isnan(adjusted[4])
    reject, _ = S.benjamini_hochberg([0.01, 0.02, 0.03, 0.04], 0.05)  # step-up: 0.04 <= 4 * 0.05 / 4 rejects all
    assert reject.all()


def test_rounding_to_three_significant_digits_makes_ties():
    assert S.round_significant([0.123456, 1234.5, 0.0, np.nan]).tolist()[:3] == [0.123, 1230.0, 0.0]
    r = S.average_ranks([[0.30041, 0.30049, 0.2]], greater_is_better=False)
    assert r.tolist() == [2.5, 2.5, 1.0]


def test_cd_groups():
    ranks = np.array([1.0, 1.5, 2.2, 3.9, 4.0])
    assert S.cd_groups(ranks, 1.25) == [[0, 1, 2], [3, 4]]
    assert S.cd_groups(ranks, 0.15) == [[3, 4]]
    assert S.cd_groups(ranks, 10) == [[0, 1, 2, 3, 4]]


def test_the_comparison_over_datasets_tests_against_uniform_and_relief():
    """Every ranking against the baseline (BH over all of them) and every other one against Relief (BH over those),
    by the Wilcoxon test (above: scipy's) of the values rounded to 3 significant digits."""
    import pandas as pd

    from spark_fr.evaluation.results import Evaluation

    rng = np.random.default_rng(4)
    names = ["uniform", "genie3-rf", "symbolic-rf", "relief"]
    values = rng.random((8, 4)) * 0.1 + np.array([0.40, 0.46, 0.43, 0.41])
    rows = [{"dataset": f"d{i}", "task": "hmlc", "protocol": "train-test", "split": "test", "k": 10, "n_train": 9,
             "n_test": 5, "labelled": None, "ranking": n, "measure": "pooled_auprc", "value": values[i, j],
             "ranking_s": None} for i in range(8) for j, n in enumerate(names)]
    ev = Evaluation(pd.DataFrame(rows), pd.DataFrame(), pd.DataFrame(), pd.DataFrame(),
                    [{"dataset": f"d{i}", "baseline": "uniform"} for i in range(8)])
    c = ev.comparison()
    r = S.round_significant(values)
    for ref, tested in (("uniform", names[1:]), ("relief", names[1:3])):
        tests = c["against"][ref]
        assert list(tests) == tested
        ps = [S.wilcoxon(r[:, names.index(n)], r[:, names.index(ref)]) for n in tested]
        assert [tests[n]["p"] for n in tested] == pytest.approx(ps)
        assert [tests[n]["significant"] for n in tested] == S.benjamini_hochberg(ps, 0.05)[0].tolist()
    assert c["wilcoxon"] == c["against"]["uniform"] and c["against"]["uniform"]["genie3-rf"]["significant"]
    table = ev.comparison_table().set_index("ranking")
    assert table.loc["genie3-rf", "p_vs_relief"] == pytest.approx(c["against"]["relief"]["genie3-rf"]["p"])
    assert np.isnan(table.loc["uniform", "p_vs_relief"]) and "against relief" in ev.to_text()
