"""The vectorised arrays-in metrics equal scikit-learn and SciPy on random inputs (issue 15)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from scipy import stats
from sklearn import metrics as sk

from jurist.metrics import ordinal, verdicts
from jurist.metrics.agreement import auroc, hallucination_auroc, rmse
from jurist.metrics.gold_agreement import accuracy, cohens_kappa, confusion_matrix

TOLERANCE = 1e-12
SEEDS = range(12)


def _close(ours: float | None, reference: float) -> bool:
    return ours is not None and math.isclose(
        float(ours), float(reference), rel_tol=TOLERANCE, abs_tol=TOLERANCE
    )


def _labels(rng: np.random.Generator, kind: str, n: int, k: int) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    """Gold and predicted labels of one kind (int, float, bool, str), mostly agreeing."""
    k = 2 if kind == "bool" else k
    gold = rng.integers(0, k, n)
    predicted = np.where(rng.random(n) < 0.5, gold, rng.integers(0, k, n))
    convert: dict[str, Callable[[np.ndarray], np.ndarray]] = {
        "int": lambda a: a * 3 - 2,
        "float": lambda a: a * 2.0 + 1.0,  # scikit-learn takes integral floats as classes
        "bool": lambda a: a.astype(bool),
        "str": lambda a: np.array(["entailed", "neutral", "contradicted", "tie", "x", "y", "z"])[a],
    }
    labels = convert[kind](np.arange(k)).tolist()
    return convert[kind](gold), convert[kind](predicted), labels


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("as_list", [False, True])
def test_auroc_equals_roc_auc_score_with_ties(seed: int, as_list: bool) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 3000))
    y = rng.random(n) < rng.uniform(0.05, 0.95)
    scores = np.round(rng.normal(size=n), int(rng.integers(0, 3)))  # coarse rounding: many ties
    if y.all() or not y.any():
        y[0] = not y[0]
    labels: Any = y.tolist() if as_list else y
    given: Any = scores.tolist() if as_list else scores
    assert _close(auroc(labels, given), sk.roc_auc_score(y, scores))
    assert _close(auroc(y.astype(int), scores), sk.roc_auc_score(y, scores))
    assert _close(auroc(y.astype(float), scores), sk.roc_auc_score(y, scores))


def test_auroc_one_class_absent_is_none() -> None:
    scores = np.random.default_rng(0).random(50)
    assert auroc(np.ones(50, dtype=bool), scores) is None
    assert auroc(np.zeros(50, dtype=int), scores) is None
    assert auroc(np.zeros(0, dtype=bool), np.zeros(0)) is None


def test_auroc_rejects_bad_arrays() -> None:
    with pytest.raises(ValueError, match="0/1"):
        auroc(np.array([0, 2]), np.array([0.1, 0.2]))
    with pytest.raises(ValueError, match="0/1"):
        auroc(np.array(["0", "1"]), np.array([0.1, 0.2]))
    with pytest.raises(ValueError, match="NaN"):
        auroc(np.array([0, 1]), np.array([0.1, np.nan]))


@pytest.mark.parametrize("seed", SEEDS)
def test_hallucination_auroc_equals_sklearn_on_present_items(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 500
    supported = (rng.random(n) < 0.6).astype(object)
    fractions = np.round(rng.random(n), 1).astype(object)
    supported[rng.random(n) < 0.1] = None
    fractions[rng.random(n) < 0.1] = None
    present = np.array([s is not None and f is not None for s, f in zip(supported, fractions, strict=True)])
    y = ~supported[present].astype(bool)
    score = 1.0 - fractions[present].astype(float)
    expected = sk.roc_auc_score(y, score)
    assert _close(hallucination_auroc(supported.tolist(), fractions.tolist()), expected)
    assert _close(hallucination_auroc(supported, fractions), expected)


@pytest.mark.parametrize("seed", SEEDS)
def test_rmse_equals_mean_squared_error_skipping_missing(seed: int) -> None:
    rng = np.random.default_rng(seed)
    pred, gold = rng.random(1000), rng.random(1000)
    pred[rng.random(1000) < 0.1] = np.nan
    both = ~np.isnan(pred)
    expected = math.sqrt(sk.mean_squared_error(gold[both], pred[both]))
    assert _close(rmse(pred, gold), expected)
    as_list = [None if np.isnan(p) else float(p) for p in pred]
    assert _close(rmse(as_list, gold.tolist()), expected)
    assert rmse(np.full(3, np.nan), np.ones(3)) is None


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kind", ["int", "float", "bool", "str"])
def test_categorical_metrics_equal_sklearn(seed: int, kind: str) -> None:
    rng = np.random.default_rng(seed)
    gold, predicted, labels = _labels(rng, kind, int(rng.integers(1, 2000)), int(rng.integers(2, 7)))
    for g, p in ((gold, predicted), (gold.tolist(), predicted.tolist())):
        assert _close(accuracy(g, p), sk.accuracy_score(gold, predicted))
        matrix = confusion_matrix(g, p, labels)
        assert matrix.dtype == np.int64
        np.testing.assert_array_equal(matrix, sk.confusion_matrix(gold, predicted, labels=labels))
        f1 = verdicts.macro_f1_from_confusion(matrix.ravel())
        assert _close(float(f1), sk.f1_score(gold, predicted, average="macro"))
        cells = verdicts.confusion_cells(g, p, labels).sum(axis=0)
        np.testing.assert_array_equal(cells, matrix.ravel())
        expected = sk.cohen_kappa_score(gold, predicted)
        if math.isnan(expected):
            assert math.isnan(cohens_kappa(g, p))
        else:
            assert _close(cohens_kappa(g, p), expected)
            assert _close(cohens_kappa(g, p, labels), expected)


def test_kappa_with_one_label_is_nan_and_empty_accuracy_is_nan() -> None:
    assert math.isnan(cohens_kappa(np.array(["a", "a"]), np.array(["a", "a"])))
    assert math.isnan(cohens_kappa(np.array([1, 1]), np.array([1, 1])))
    assert math.isnan(accuracy(np.array([]), np.array([])))


def test_label_equality_stays_pythons() -> None:
    # "1" and 1 are different labels; 1 and True and 1.0 are the same one.
    assert accuracy(["1", 1], [1, 1]) == 0.5
    assert accuracy(np.array(["1", "2"]), np.array([1, 2])) == 0.0
    assert accuracy([1, True], [1.0, 1]) == 1.0
    assert cohens_kappa(["1", 1, "1", 1], ["1", 1, 1, 1]) == pytest.approx(0.5)
    np.testing.assert_array_equal(
        confusion_matrix(np.array([1, 2]), np.array([2, 2]), [1.0, 2.0]), [[0, 1], [0, 1]]
    )


def test_missing_label_is_named() -> None:
    with pytest.raises(ValueError, match="label 'c' is not in labels"):
        confusion_matrix(np.array(["a", "b"]), np.array(["a", "c"]), ["a", "b"])
    with pytest.raises(ValueError, match="label 7 is not in labels"):
        confusion_matrix(np.array([7, 1]), np.array([1, 9]), [1, 2])
    with pytest.raises(ValueError, match="label 'q' is not in labels"):
        verdicts.label_indices(np.array(["a", "q"]), ["a"])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("spacing", ["consecutive", "uneven"])
def test_ordinal_metrics_equal_sklearn_and_scipy(seed: int, spacing: str) -> None:
    rng = np.random.default_rng(seed)
    k, n = int(rng.integers(3, 11)), int(rng.integers(5, 3000))
    grid = np.arange(1.0, k + 1.0) if spacing == "consecutive" else np.cumsum(rng.integers(1, 4, k)) / 2.0
    gi = rng.integers(0, k, n)
    pi = np.clip(gi + rng.integers(-2, 3, n), 0, k - 1)
    gold, judged = grid[gi], grid[pi]
    values = grid.tolist()
    table = ordinal._contingency_table(gold, judged, values)
    np.testing.assert_array_equal(
        table, ordinal.contingency_cells(gold.tolist(), judged.tolist(), values).sum(0)
    )
    checks = [
        (ordinal.mean_absolute_error(table, values), sk.mean_absolute_error(gold, judged)),
        (ordinal.root_mean_squared_error(table, values), math.sqrt(sk.mean_squared_error(gold, judged))),
        (ordinal.pearson(table, values), stats.pearsonr(gold, judged).statistic),
        (ordinal.spearman(table), stats.spearmanr(gold, judged).statistic),
        (ordinal.kendall_tau_b(table), stats.kendalltau(gold, judged).statistic),
        (ordinal.exact_agreement(table), sk.accuracy_score(gi, pi)),
    ]
    if spacing == "consecutive":
        qwk = sk.cohen_kappa_score(gi, pi, labels=list(range(k)), weights="quadratic")
        checks.append((ordinal.quadratic_weighted_kappa(table, values), qwk))
    for ours, reference in checks:
        assert _close(float(ours), float(reference)), (ours, reference)


def test_contingency_rejects_scores_off_the_grid() -> None:
    for values in ([1.0, 2.0, 3.0], [1.0, 2.0, 5.0]):
        for bad in (0.5, 1.5, 6.0, -3.0, np.nan, np.inf):
            with pytest.raises(ValueError, match="one of the table's values"):
                ordinal.contingency_cells(np.array([bad]), np.array([1.0]), values)
