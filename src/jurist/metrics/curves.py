"""Curves of a judge's scores and confidences: ROC points, reliability bins, calibration error.

The numbers behind the ROC curves and reliability diagrams of the reports. Each function is
vectorised (sorting, cumulative sums and ``bincount``; no loop over items) and equals
scikit-learn's reference: :func:`roc_curve` is ``sklearn.metrics.roc_curve`` and
:func:`reliability_bins` is ``sklearn.calibration.calibration_curve`` (which keeps only the
non-empty bins, as here).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from jurist.metrics.agreement import _binary_labels

__all__ = ["expected_calibration_error", "reliability_bins", "roc_curve"]

Strategy = Literal["uniform", "quantile"]


def roc_curve(
    labels: Sequence[bool | int] | np.ndarray,
    scores: Sequence[float] | np.ndarray,
    *,
    drop_intermediate: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The receiver operating characteristic of ``scores`` for the positive class ``labels == 1``.

    With the distinct scores sorted in decreasing order as thresholds ``t_1 > t_2 > …``, the
    point of threshold ``t_j`` counts the items scored at or above it:

        ``TPR_j = #{i positive : s_i ≥ t_j} / n₊``, ``FPR_j = #{i negative : s_i ≥ t_j} / n₋``

    The curve starts at ``(0, 0)`` with threshold ``+∞`` and ends at ``(1, 1)``. With
    ``drop_intermediate``, points on a straight segment between two corners are dropped
    (the curve and its area are unchanged). A class with no item makes its rate undefined
    (NaN), as in scikit-learn; the area under the curve is
    :func:`jurist.metrics.agreement.auroc`.

    Args:
        labels: Gold labels, ``True``/``1`` for the positive class, ``False``/``0`` otherwise.
        scores: One real score per label; higher means "more likely positive".
        drop_intermediate: Keep only the corners of the curve.

    Returns:
        ``(fpr, tpr, thresholds)``, three arrays of one length; ``thresholds`` decreases.

    Raises:
        ValueError: If the lengths differ, a label is not 0/1, or a score is NaN.

    Examples:
        >>> fpr, tpr, thresholds = roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
        >>> fpr.tolist(), tpr.tolist()
        ([0.0, 0.0, 0.5, 0.5, 1.0], [0.0, 0.5, 0.5, 1.0, 1.0])
    """
    if len(labels) != len(scores):
        raise ValueError(f"labels and scores differ in length: {len(labels)} != {len(scores)}")
    y = _binary_labels(labels)
    s = np.asarray(scores, dtype=np.float64).ravel()
    if np.isnan(s).any():
        raise ValueError("scores must not be NaN; drop missing items first")
    order = np.argsort(s, kind="mergesort")[::-1]
    ordered, hits = s[order], y[order]
    # The last item of each run of tied scores closes one threshold.
    last = np.flatnonzero(np.diff(ordered)) if ordered.size else np.zeros(0, dtype=np.int64)
    ends = np.r_[last, ordered.size - 1] if ordered.size else last
    tps = np.cumsum(hits, dtype=np.int64)[ends]
    fps = (ends + 1) - tps
    thresholds = ordered[ends]
    if drop_intermediate and tps.size > 2:
        corner = np.r_[True, np.logical_or(np.diff(fps, 2), np.diff(tps, 2)), True]
        tps, fps, thresholds = tps[corner], fps[corner], thresholds[corner]
    tps = np.r_[0, tps]
    fps = np.r_[0, fps]
    thresholds = np.r_[np.inf, thresholds]
    positives = tps[-1]
    negatives = fps[-1]
    with np.errstate(invalid="ignore", divide="ignore"):
        tpr = tps / positives if positives > 0 else np.full(tps.shape, np.nan)
        fpr = fps / negatives if negatives > 0 else np.full(fps.shape, np.nan)
    return fpr.astype(np.float64), tpr.astype(np.float64), thresholds


def _bin_ids(confidence: np.ndarray, n_bins: int, strategy: Strategy) -> tuple[np.ndarray, int]:
    """Each confidence's bin (``0 … n_bins − 1``) and the number of bins.

    ``uniform``: edges ``0, 1/B, …, 1``; ``quantile``: the confidences' ``0, 1/B, …, 1``
    quantiles. Bin ``b`` holds the values in ``(e_b, e_{b+1}]`` (the first also ``e_0``),
    as scikit-learn's ``calibration_curve`` cuts them.
    """
    if n_bins < 1:
        raise ValueError(f"n_bins must be at least 1, got {n_bins}")
    if strategy == "uniform":
        edges = np.linspace(0.0, 1.0, n_bins + 1)
    elif strategy == "quantile":
        edges = np.percentile(confidence, np.linspace(0.0, 1.0, n_bins + 1) * 100.0)
    else:
        raise ValueError(f"strategy must be 'uniform' or 'quantile', got {strategy!r}")
    return np.searchsorted(edges[1:-1], confidence), n_bins


def _reliability_counts(
    correct: Sequence[bool | int] | np.ndarray,
    confidence: Sequence[float] | np.ndarray,
    n_bins: int,
    strategy: Strategy,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per bin: the sum of confidences, the number of correct items, and the number of items."""
    if len(correct) != len(confidence):
        raise ValueError(f"correct and confidence differ in length: {len(correct)} != {len(confidence)}")
    y = _binary_labels(correct)
    p = np.asarray(confidence, dtype=np.float64).ravel()
    if np.isnan(p).any():
        raise ValueError("confidences must not be NaN; drop missing items first")
    if p.size and (p.min() < 0.0 or p.max() > 1.0):
        raise ValueError("confidences must be probabilities in [0, 1]")
    if p.size == 0:
        empty = np.zeros(max(n_bins, 0))
        return empty, empty, empty.astype(np.int64)
    ids, bins = _bin_ids(p, n_bins, strategy)
    sums = np.bincount(ids, weights=p, minlength=bins)
    hits = np.bincount(ids, weights=y.astype(np.float64), minlength=bins)
    totals = np.bincount(ids, minlength=bins)
    return sums, hits, totals


def reliability_bins(
    correct: Sequence[bool | int] | np.ndarray,
    confidence: Sequence[float] | np.ndarray,
    n_bins: int = 10,
    strategy: Strategy = "uniform",
) -> list[dict[str, float | int]]:
    """The points of a reliability diagram: per bin of confidence, how often the judge was right.

    Items are put in ``n_bins`` bins by confidence (``uniform``: equal widths on [0, 1];
    ``quantile``: about equally many items per bin). For each non-empty bin ``b`` with
    items ``B_b``:

        ``confidence_b = (1/|B_b|) Σ_{i ∈ B_b} p_i``, ``accuracy_b = (1/|B_b|) Σ_{i ∈ B_b} y_i``

    A calibrated judge has ``accuracy_b ≈ confidence_b`` (the points lie on the diagonal).

    Args:
        correct: Per item, whether the verdict was right (``True``/``1``), or the gold label
            when ``confidence`` is the probability of the positive class.
        confidence: The judge's probability per item, in [0, 1].
        n_bins: The number of bins.
        strategy: ``uniform`` or ``quantile`` bin edges.

    Returns:
        ``{"confidence", "accuracy", "n"}`` per non-empty bin, in increasing confidence.

    Raises:
        ValueError: Lengths differ, a label is not 0/1, a confidence is NaN or outside
            [0, 1], ``n_bins < 1``, or an unknown strategy.

    Examples:
        >>> reliability_bins([0, 1, 1, 1], [0.2, 0.3, 0.9, 0.95], n_bins=2)
        [{'confidence': 0.25, 'accuracy': 0.5, 'n': 2}, {'confidence': 0.925, 'accuracy': 1.0, 'n': 2}]
    """
    sums, hits, totals = _reliability_counts(correct, confidence, n_bins, strategy)
    filled = np.flatnonzero(totals)
    means = sums[filled] / totals[filled]
    rates = hits[filled] / totals[filled]
    return [
        {"confidence": float(c), "accuracy": float(a), "n": int(n)}
        for c, a, n in zip(means, rates, totals[filled], strict=True)
    ]


def expected_calibration_error(
    correct: Sequence[bool | int] | np.ndarray,
    confidence: Sequence[float] | np.ndarray,
    n_bins: int = 10,
    strategy: Strategy = "uniform",
) -> float | None:
    """Expected calibration error: the item-weighted gap between confidence and accuracy.

    With the bins of :func:`reliability_bins` and ``n`` items,

        ``ECE = Σ_b (|B_b| / n) · |accuracy_b − confidence_b|``

    0 is perfectly calibrated; the largest value is 1.

    Returns:
        The ECE, or ``None`` when there are no items.

    Raises:
        ValueError: As :func:`reliability_bins`.

    Examples:
        >>> round(expected_calibration_error([0, 1, 1, 1], [0.2, 0.3, 0.9, 0.95], n_bins=2), 4)
        0.1625
    """
    sums, hits, totals = _reliability_counts(correct, confidence, n_bins, strategy)
    n = int(totals.sum())
    if n == 0:
        return None
    return float(np.abs(hits - sums).sum() / n)
