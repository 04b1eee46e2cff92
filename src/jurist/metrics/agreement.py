"""Agreement of a judge with gold labels, as RAGBench reports it (arXiv 2407.11005).

RAGBench compares an evaluator with its gold annotations by AUROC for hallucination
detection (example-level: is the response not fully supported?) and by RMSE for the
continuous TRACe scores (context relevance, context utilization, and here also
completeness and the adherence fraction). Missing values (``None``, e.g. a TRACe score
with a zero denominator, or a failed item) are skipped pairwise, never counted as 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from jurist.metrics._arrays import as_array

__all__ = ["auroc", "hallucination_auroc", "rmse"]


def auroc(labels: Sequence[bool | int] | np.ndarray, scores: Sequence[float] | np.ndarray) -> float | None:
    """Area under the ROC curve of ``scores`` for the positive class ``labels == 1``.

    Computed from ranks (the Mann-Whitney U statistic): with ``n₊`` positives, ``n₋``
    negatives, and ``r_i`` the rank of score ``i`` among all scores (1 = lowest; tied
    scores get the average of the ranks they span),

        ``AUROC = (Σ_{i positive} r_i − n₊(n₊ + 1)/2) / (n₊ · n₋)``

    i.e. the probability that a random positive scores above a random negative, counting
    ties as 1/2. 1.0 is a perfect ranking, 0.5 is chance.

    Args:
        labels: Gold labels, ``True``/``1`` for the positive class, ``False``/``0`` otherwise.
        scores: One real score per label; higher means "more likely positive".

    Returns:
        The AUROC in [0, 1], or ``None`` when only one class is present (or no items): the
        curve is undefined then.

    Raises:
        ValueError: If the lengths differ, a label is not 0/1, or a score is NaN.

    Examples:
        >>> auroc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
        0.75
    """
    if len(labels) != len(scores):
        raise ValueError(f"labels and scores differ in length: {len(labels)} != {len(scores)}")
    y = _binary_labels(labels)
    s = np.asarray(scores, dtype=float).ravel()
    if np.isnan(s).any():
        raise ValueError("scores must not be NaN; drop missing items first")
    positives, negatives = np.sort(s[y]), np.sort(s[~y])
    n_pos, n_neg = positives.size, negatives.size
    if n_pos == 0 or n_neg == 0:
        return None
    # Σ_{i positive} r_i − n₊(n₊ + 1)/2 = Σ_{i positive} (#negatives below s_i + ½ #negatives tied with s_i):
    # count both from the sorted negatives, in integers, and divide once.
    below = np.searchsorted(negatives, positives, side="left")
    up_to = np.searchsorted(negatives, positives, side="right")
    twice_u = int(below.sum(dtype=np.int64)) + int(up_to.sum(dtype=np.int64))
    return twice_u / (2 * n_pos * n_neg)


def _binary_labels(labels: Sequence[bool | int] | np.ndarray) -> np.ndarray:
    """Labels ``True``/``1`` and ``False``/``0`` as a boolean array; anything else is an error."""
    y = as_array(labels)
    if y.dtype.kind == "b":
        return y
    if y.dtype.kind in "iuf":
        if not ((y == 0) | (y == 1)).all():
            raise ValueError("labels must be booleans or 0/1")
        return y == 1
    values = y.tolist()
    if any(isinstance(label, str | bytes) or label not in (0, 1) for label in values):
        raise ValueError("labels must be booleans or 0/1")
    return np.asarray([bool(label) for label in values], dtype=bool)


def rmse(
    pred: Sequence[float | None] | np.ndarray, gold: Sequence[float | None] | np.ndarray
) -> float | None:
    """Root mean squared error over the pairs where both values are present.

    ``RMSE = sqrt( (1/n) Σ_i (pred_i − gold_i)² )`` over the ``n`` positions ``i`` where
    neither ``pred_i`` nor ``gold_i`` is ``None`` or NaN; other positions are skipped.

    Args:
        pred: Predicted values (e.g. a judge's context relevance per item).
        gold: Gold values, aligned with ``pred``.

    Returns:
        The RMSE, or ``None`` if no position has both values.

    Raises:
        ValueError: If the lengths differ.

    Examples:
        >>> rmse([1.0, None, 0.25], [0.5, 0.9, 0.75])
        0.5
    """
    if len(pred) != len(gold):
        raise ValueError(f"pred and gold differ in length: {len(pred)} != {len(gold)}")
    p_values, g_values = _floats(pred), _floats(gold)
    diffs = p_values - g_values
    if np.isnan(diffs).any():  # some value is missing (or ∞ − ∞): keep the pairs where both are present
        both = ~(np.isnan(p_values) | np.isnan(g_values))
        diffs = p_values[both] - g_values[both]
    if diffs.size == 0:
        return None
    return float(np.sqrt(np.mean(np.square(diffs))))


def _floats(values: Sequence[float | None] | np.ndarray) -> np.ndarray:
    """Values as floats, with ``None`` (and NaN, pandas' missing value) as NaN."""
    return np.asarray(values, dtype=np.float64).ravel()


def hallucination_auroc(
    gold_supported: Sequence[bool | None] | np.ndarray,
    adherence_fractions: Sequence[float | None] | np.ndarray,
) -> float | None:
    """AUROC of a judge's adherence for detecting hallucinated responses.

    The positive class is a hallucinated response, ``hallucinated_i = not gold_supported_i``
    (RAGBench's example-level adherence label), and the judge's score is
    ``1 − adherence_fraction_i`` (more unsupported sentences, more likely hallucinated);
    then :func:`auroc`. Items where either value is ``None`` (or NaN) are skipped.

    A boolean adherence can be passed as 1.0/0.0; the fraction ranks items more finely.

    Args:
        gold_supported: Gold example-level adherence per item (True = fully supported).
        adherence_fractions: The judge's share of fully supported response sentences.

    Returns:
        The AUROC, or ``None`` if the remaining items hold only one class.

    Raises:
        ValueError: If the lengths differ.

    Examples:
        >>> hallucination_auroc([True, False, True, None], [1.0, 0.5, 0.5, 0.0])
        0.75
    """
    if len(gold_supported) != len(adherence_fractions):
        raise ValueError(
            f"gold and scores differ in length: {len(gold_supported)} != {len(adherence_fractions)}"
        )
    supported, fractions = _floats(gold_supported), _floats(adherence_fractions)
    present = ~(np.isnan(supported) | np.isnan(fractions))
    return auroc(supported[present] == 0, 1.0 - fractions[present])
