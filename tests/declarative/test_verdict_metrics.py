"""The pure metrics of YAML tasks, checked against scipy and scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score, f1_score, precision_recall_fscore_support

from jurist.metrics import ordinal, preference, verdicts
from jurist.metrics.gold_agreement import kappa_from_confusion

RNG = np.random.default_rng(7)


def _scores(n: int = 60) -> tuple[np.ndarray, np.ndarray, list[float]]:
    gold = RNG.integers(1, 11, size=n)
    judged = np.clip(gold + RNG.integers(-3, 4, size=n), 1, 10)
    values = sorted({*gold.tolist(), *judged.tolist()})
    return gold, judged, values


def test_score_statistics_match_scipy_and_sklearn():
    gold, judged, values = _scores()
    table = ordinal.contingency_cells(gold, judged, values).sum(axis=0)
    assert ordinal.mean_absolute_error(table, values) == pytest.approx(np.abs(gold - judged).mean())
    assert ordinal.root_mean_squared_error(table, values) == pytest.approx(
        np.sqrt(((gold - judged) ** 2).mean())
    )
    assert ordinal.pearson(table, values) == pytest.approx(stats.pearsonr(gold, judged).statistic)
    assert ordinal.spearman(table) == pytest.approx(stats.spearmanr(gold, judged).statistic)
    assert ordinal.kendall_tau_b(table) == pytest.approx(stats.kendalltau(gold, judged).statistic)
    assert ordinal.exact_agreement(table) == pytest.approx((gold == judged).mean())
    assert ordinal.within_agreement(table, values) == pytest.approx((np.abs(gold - judged) <= 1).mean())
    expected = cohen_kappa_score(gold, judged, weights="quadratic", labels=list(range(1, 11)))
    assert ordinal.quadratic_weighted_kappa(table, values) == pytest.approx(expected)


def test_score_statistics_are_vectorised_over_resamples():
    gold, judged, values = _scores(30)
    cells = ordinal.contingency_cells(gold, judged, values)
    weights = RNG.multinomial(30, np.full(30, 1 / 30), size=5)
    stacked = weights @ cells
    for row, w in zip(stacked, weights, strict=True):
        g, j = np.repeat(gold, w), np.repeat(judged, w)
        assert ordinal.kendall_tau_b(row) == pytest.approx(stats.kendalltau(g, j).statistic)
        assert ordinal.spearman(row) == pytest.approx(stats.spearmanr(g, j).statistic)
    assert ordinal.kendall_tau_b(stacked).shape == (5,)


def test_constant_side_gives_nan_not_a_number():
    table = ordinal.contingency_cells([3, 3, 3], [1, 2, 3], [1, 2, 3]).sum(axis=0)
    assert np.isnan(ordinal.pearson(table, [1, 2, 3]))
    assert np.isnan(ordinal.spearman(table))
    assert np.isnan(ordinal.kendall_tau_b(table))


def test_label_statistics_match_sklearn():
    labels = ["a", "b", "c", "d"]
    gold = RNG.choice(labels[:3], size=80).tolist()
    judged = [g if RNG.random() < 0.6 else RNG.choice(labels) for g in gold]
    cells = verdicts.confusion_cells(gold, judged, labels)
    total = cells.sum(axis=0)
    assert verdicts.accuracy_from_confusion(total) == pytest.approx(
        np.mean(np.array(gold) == np.array(judged))
    )
    assert verdicts.macro_f1_from_confusion(total) == pytest.approx(f1_score(gold, judged, average="macro"))
    kappa = float(kappa_from_confusion(total.reshape(4, 4)))
    assert kappa == pytest.approx(cohen_kappa_score(gold, judged))


def test_binary_f1_matches_sklearn():
    gold = RNG.random(50) < 0.4
    judged = RNG.random(50) < 0.5
    counts = verdicts.binary_counts(gold, judged).sum(axis=0)
    assert verdicts.binary_f1_from_counts(counts) == pytest.approx(f1_score(gold, judged))


def test_multilabel_statistics_match_sklearn():
    gold = RNG.random((40, 4)) < 0.4
    judged = RNG.random((40, 4)) < 0.4
    counts = verdicts.multilabel_cells(gold, judged).sum(axis=0)
    precision, recall, f1 = verdicts.multilabel_per_label(counts)
    p, r, f, _ = precision_recall_fscore_support(gold, judged, zero_division=np.nan)
    np.testing.assert_allclose(precision, p)
    np.testing.assert_allclose(recall, r)
    np.testing.assert_allclose(f1, f)
    assert verdicts.multilabel_micro_f1(counts) == pytest.approx(f1_score(gold, judged, average="micro"))
    assert verdicts.multilabel_macro_f1(counts) == pytest.approx(f1_score(gold, judged, average="macro"))
    assert verdicts.multilabel_exact_match(counts) == pytest.approx((gold == judged).all(axis=1).mean())


def test_unknown_label_is_an_error():
    with pytest.raises(ValueError, match="not in labels"):
        verdicts.confusion_cells(["a"], ["z"], ["a", "b"])


def test_preference_cells():
    # Row 1: consistent A; row 2: A then A by position = inconsistent; row 3: BA missing.
    first = ["A", "A", "B"]
    second = ["A", "B", None]
    assert preference.ratio_of_sums(preference.consistency_cells(first, second).sum(axis=0)) == 0.5
    positions = preference.position_cells(["A", "A", "B"], ["B", "A", None]).sum(axis=0)
    assert positions.tolist() == [3.0, 5.0]
    assert [preference.combined_verdict(a, b) for a, b in zip(first, second, strict=True)] == [
        "A",
        "tie",
        None,
    ]
    lengths = preference.length_cells([["A", "A"], ["A", "B"], ["B"]], [10, 5, 3], [5, 5, 9]).sum(axis=0)
    assert lengths.tolist() == [3.0, 3.0]
