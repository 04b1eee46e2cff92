"""ROC points and reliability bins equal scikit-learn's on random inputs; ECE from its definition."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from sklearn.calibration import calibration_curve
from sklearn.metrics import roc_auc_score
from sklearn.metrics import roc_curve as sk_roc_curve

import jurist.metrics.curves
from jurist.metrics.curves import expected_calibration_error, reliability_bins, roc_curve

SEEDS = range(10)


def _labels_and_scores(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 2000))
    y = rng.random(n) < rng.uniform(0.1, 0.9)
    if y.all() or not y.any():
        y[0] = not y[0]
    scores = np.round(rng.random(n) + 0.3 * y, int(rng.integers(0, 3)))  # rounding: many ties
    return y, scores


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("drop_intermediate", [False, True])
def test_roc_curve_equals_sklearn(seed: int, drop_intermediate: bool) -> None:
    y, scores = _labels_and_scores(seed)
    fpr, tpr, thresholds = roc_curve(y, scores, drop_intermediate=drop_intermediate)
    sk_fpr, sk_tpr, sk_thresholds = sk_roc_curve(y, scores, drop_intermediate=drop_intermediate)
    np.testing.assert_allclose(fpr, sk_fpr, rtol=0, atol=1e-12)
    np.testing.assert_allclose(tpr, sk_tpr, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(thresholds, sk_thresholds)
    # The area under our points is the AUROC scikit-learn reports.
    assert np.trapezoid(tpr, fpr) == pytest.approx(roc_auc_score(y, scores), abs=1e-12)


def test_roc_curve_takes_lists_and_int_labels() -> None:
    fpr, tpr, thresholds = roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    assert fpr.tolist() == [0.0, 0.0, 0.5, 0.5, 1.0]
    assert tpr.tolist() == [0.0, 0.5, 0.5, 1.0, 1.0]
    assert thresholds.tolist() == [np.inf, 0.8, 0.4, 0.35, 0.1]


def test_roc_curve_one_class_has_undefined_rate() -> None:
    fpr, tpr, _ = roc_curve([True, True], [0.2, 0.7])
    assert np.isnan(fpr).all()
    assert tpr.tolist() == [0.0, 0.5, 1.0]


def test_roc_curve_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="length"):
        roc_curve([0, 1], [0.5])
    with pytest.raises(ValueError, match="0/1"):
        roc_curve([0, 2], [0.5, 0.6])
    with pytest.raises(ValueError, match="NaN"):
        roc_curve([0, 1], [0.5, np.nan])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("n_bins", [1, 5, 10, 17])
def test_reliability_bins_equal_calibration_curve(seed: int, strategy: str, n_bins: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 1500))
    confidence = np.round(rng.random(n), int(rng.integers(1, 4)))  # values on the bin edges too
    correct = rng.random(n) < confidence
    if correct.all() or not correct.any():
        correct[0] = not correct[0]
    bins = reliability_bins(correct, confidence, n_bins=n_bins, strategy=strategy)  # type: ignore[arg-type]
    accuracy, mean_confidence = calibration_curve(correct, confidence, n_bins=n_bins, strategy=strategy)
    np.testing.assert_allclose([b["accuracy"] for b in bins], accuracy, rtol=0, atol=1e-12)
    np.testing.assert_allclose([b["confidence"] for b in bins], mean_confidence, rtol=0, atol=1e-12)
    assert sum(b["n"] for b in bins) == n
    # ECE from its definition over the same bins.
    expected = sum(b["n"] / n * abs(b["accuracy"] - b["confidence"]) for b in bins)
    assert expected_calibration_error(correct, confidence, n_bins, strategy) == pytest.approx(  # type: ignore[arg-type]
        expected, abs=1e-12
    )


def test_reliability_of_a_calibrated_judge_and_an_overconfident_one() -> None:
    confidence = np.repeat([0.25, 0.75], 4)
    calibrated = np.array([1, 0, 0, 0, 1, 1, 1, 0], dtype=bool)
    assert expected_calibration_error(calibrated, confidence, n_bins=2) == 0.0
    assert expected_calibration_error(np.zeros(8, dtype=bool), np.ones(8), n_bins=4) == 1.0
    assert reliability_bins([], [], n_bins=3) == []
    assert expected_calibration_error([], []) is None


def test_reliability_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        reliability_bins([1, 0], [0.5, 1.2])
    with pytest.raises(ValueError, match="NaN"):
        reliability_bins([1, 0], [0.5, np.nan])
    with pytest.raises(ValueError, match="n_bins"):
        reliability_bins([1, 0], [0.5, 0.2], n_bins=0)
    with pytest.raises(ValueError, match="strategy"):
        reliability_bins([1, 0], [0.5, 0.2], strategy="equal")  # type: ignore[arg-type]


def test_doctests() -> None:
    assert doctest.testmod(jurist.metrics.curves).failed == 0
