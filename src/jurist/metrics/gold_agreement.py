"""Agreement of a judge's labels with gold labels: accuracy, Cohen's kappa, per-label agreement.

Labels are any hashable values (``"1"``, ``"2"``, ``"tie"``, ...). Confidence intervals
come from :func:`bootstrap_ci`, a percentile bootstrap that resamples *clusters* (e.g.
the two orders of one pairwise comparison) so that correlated items stay together.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from statistics import NormalDist

import numpy as np
import pandas as pd

from jurist.metrics._arrays import (
    DRAWS_PER_CHUNK,
    as_array,
    confusion_counts,
    joint_codes,
    label_codes,
    scalar,
    values_equal,
)
from jurist.metrics.count_codes import CountCodes

__all__ = [
    "accuracy",
    "agreement_by_label",
    "bootstrap_ci",
    "bootstrap_cis",
    "cohens_kappa",
    "confusion_matrix",
    "kappa_from_confusion",
    "wilson_interval",
    "without_noise",
]


Labels = Sequence[Hashable] | np.ndarray


def _check_lengths(gold: Labels, predicted: Labels) -> None:
    if len(gold) != len(predicted):
        raise ValueError(f"gold and predicted differ in length: {len(gold)} != {len(predicted)}")


def accuracy(gold: Labels, predicted: Labels) -> float:
    """Fraction of items whose predicted label equals the gold label.

    ``accuracy = #{i : predicted_i = gold_i} / n``; NaN when ``n = 0``.

    Examples:
        >>> accuracy(["1", "2", "1"], ["1", "1", "1"])
        0.6666666666666666
    """
    _check_lengths(gold, predicted)
    if len(gold) == 0:
        return float("nan")
    return int(np.count_nonzero(values_equal(as_array(gold), as_array(predicted)))) / len(gold)


def confusion_matrix(gold: Labels, predicted: Labels, labels: Labels) -> np.ndarray:
    """Counts ``M[g, p]`` of items with gold label ``labels[g]`` and predicted ``labels[p]``.

    Raises:
        ValueError: If the lengths differ or a label is not in ``labels``.
    """
    _check_lengths(gold, predicted)
    g_values, p_values = as_array(gold), as_array(predicted)
    g_codes, p_codes = label_codes(g_values, labels), label_codes(p_values, labels)
    outside = (g_codes < 0) | (p_codes < 0)
    if outside.any():
        first = int(np.argmax(outside))
        value = g_values[first] if g_codes[first] < 0 else p_values[first]
        raise ValueError(f"label {scalar(value)!r} is not in labels {as_array(labels).tolist()!r}")
    return confusion_counts(g_codes, p_codes, len(labels))


def kappa_from_confusion(matrix: np.ndarray) -> np.ndarray:
    """Cohen's kappa of one confusion matrix, or of a stack of them (shape ``(..., k, k)``).

    With ``n`` items, observed agreement ``p_o = Σ_k M[k, k] / n`` and chance agreement
    ``p_e = Σ_k (Σ_j M[k, j] / n) · (Σ_i M[i, k] / n)``,

        ``kappa = (p_o − p_e) / (1 − p_e)``

    NaN where ``n = 0`` or ``p_e = 1`` (both raters always give the same single label:
    kappa is undefined).
    """
    counts = np.asarray(matrix, dtype=np.float64)
    n = counts.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = np.trace(counts, axis1=-2, axis2=-1) / n
        expected = (counts.sum(axis=-1) * counts.sum(axis=-2)).sum(axis=-1) / (n * n)
        kappa = (observed - expected) / (1.0 - expected)
    return np.where((n > 0) & (expected < 1.0), kappa, np.nan)


def cohens_kappa(gold: Labels, predicted: Labels, labels: Labels | None = None) -> float:
    """Cohen's kappa between gold and predicted labels (see :func:`kappa_from_confusion`).

    Args:
        gold: Gold labels.
        predicted: Predicted labels, one per gold label.
        labels: The label set; by default every label that occurs in either sequence.

    Examples:
        >>> cohens_kappa(["1", "2", "1", "2"], ["1", "2", "1", "1"])
        0.5
    """
    if labels is not None:
        return float(kappa_from_confusion(confusion_matrix(gold, predicted, labels)))
    # Every label that occurs: the kappa does not depend on their order, so code them as found.
    _check_lengths(gold, predicted)
    g_codes, p_codes, k = joint_codes(as_array(gold), as_array(predicted))
    return float(kappa_from_confusion(confusion_counts(g_codes, p_codes, k)))


def bootstrap_ci(
    counts: np.ndarray | CountCodes,
    statistic: Callable[[np.ndarray], np.ndarray],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of a statistic of summed per-cluster counts.

    ``counts`` has one row per cluster (e.g. one pairwise comparison, both orders) and one
    column per count the statistic needs. Each resample draws ``n`` clusters with
    replacement, sums their rows and applies ``statistic`` (vectorized: it receives a
    ``(resamples, k)`` array and returns one value per resample). The interval is the
    ``(1 − confidence)/2`` and ``(1 + confidence)/2`` percentiles of the resampled values,
    ignoring resamples where the statistic is undefined (NaN). ``counts`` may be
    :class:`~jurist.metrics.count_codes.CountCodes` (a code per cluster instead of its row):
    the same interval, bit for bit, without the ``n × k`` matrix.

    Returns:
        ``(low, high)``; ``(nan, nan)`` when there are no clusters, ``n_resamples`` is 0,
        or every resample is undefined.
    """
    return bootstrap_cis(counts, [statistic], n_resamples=n_resamples, confidence=confidence, seed=seed)[0]


def bootstrap_cis(
    counts: np.ndarray | CountCodes,
    statistics: Sequence[Callable[[np.ndarray], np.ndarray]],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> list[tuple[float, float]]:
    """:func:`bootstrap_ci` of several statistics of the same counts, from one set of resamples.

    Each interval equals :func:`bootstrap_ci` of its statistic with the same ``seed``: the
    resamples are the same draws (a resample's cluster weights are ``Multinomial(n, 1/n)``),
    drawn a chunk at a time so that at most about a million weights are held at once. With
    :class:`~jurist.metrics.count_codes.CountCodes`, a resample's sums are its weights summed
    per code: the same integer counts as the weights times the dense matrix.
    """
    coded = counts if isinstance(counts, CountCodes) else None
    data = np.empty((0, 0)) if coded is not None else np.asarray(counts, dtype=np.float64)
    if coded is None and data.ndim != 2:
        raise ValueError("counts must be a 2-D array: one row per cluster")
    n = len(coded) if coded is not None else data.shape[0]
    nan = (float("nan"), float("nan"))
    if n == 0 or n_resamples <= 0:
        return [nan for _ in statistics]
    rng = np.random.default_rng(seed)
    uniform = np.full(n, 1.0 / n)
    chunk = max(1, DRAWS_PER_CHUNK // n)
    values = np.empty((len(statistics), n_resamples), dtype=np.float64)
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        weights = rng.multinomial(n, uniform, size=size)
        sums = coded.resampled(weights) if coded is not None else weights @ data
        del weights  # the next chunk's draws need the room
        for row, statistic in enumerate(statistics):
            values[row, start : start + size] = np.asarray(statistic(sums), dtype=np.float64).reshape(size)
    tail = (1.0 - confidence) / 2.0 * 100.0
    intervals = []
    for resampled in values:
        defined = resampled[~np.isnan(resampled)]
        if defined.size == 0:
            intervals.append(nan)
            continue
        low, high = np.percentile(defined, [tail, 100.0 - tail])
        intervals.append((without_noise(float(low)), without_noise(float(high))))
    return intervals


def without_noise(value: float) -> float:
    """``value`` rounded to 12 decimals: the float noise a percentile between resamples leaves
    (``-2e-17`` for 0, ``1.0000000000000002`` for 1) goes, and so does a negative zero."""
    return round(value, 12) + 0.0


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a proportion ``p̂ = successes / n``.

    With ``z`` the standard-normal quantile at ``(1 + confidence) / 2``,

        ``(p̂ + z²/2n ± z · sqrt(p̂(1 − p̂)/n + z²/4n²)) / (1 + z²/n)``

    Returns:
        ``(low, high)``; ``(nan, nan)`` when ``n = 0``.

    Examples:
        >>> [round(x, 3) for x in wilson_interval(8, 10)]
        [0.49, 0.943]
    """
    if n <= 0:
        return float("nan"), float("nan")
    z = NormalDist().inv_cdf((1.0 + confidence) / 2.0)
    p = successes / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    scale = 1 + z * z / n
    return without_noise((centre - spread) / scale), without_noise((centre + spread) / scale)


def agreement_by_label(
    gold: Sequence[Hashable], predicted: Sequence[Hashable], *, confidence: float = 0.95
) -> pd.DataFrame:
    """Agreement per gold label (recall) and per predicted label (precision).

    For a gold label ``g``: ``rate = #{i : gold_i = g, predicted_i = g} / #{i : gold_i = g}``;
    for a predicted label ``p``: ``rate = #{i : predicted_i = p, gold_i = p} / #{i :
    predicted_i = p}``. Each rate has a Wilson score interval (:func:`wilson_interval`).

    Returns:
        A DataFrame with columns ``side`` (``"gold"`` or ``"judge"``), ``label``, ``n``,
        ``agreed``, ``rate``, ``rate_low`` and ``rate_high``, labels sorted as strings.
    """
    _check_lengths(gold, predicted)
    rows = []
    for side, keys in (("gold", gold), ("judge", predicted)):
        for label in sorted(set(keys), key=str):
            members = [i for i, key in enumerate(keys) if key == label]
            agreed = sum(gold[i] == predicted[i] for i in members)
            low, high = wilson_interval(agreed, len(members), confidence)
            rows.append(
                {
                    "side": side,
                    "label": label,
                    "n": len(members),
                    "agreed": agreed,
                    "rate": agreed / len(members),
                    "rate_low": low,
                    "rate_high": high,
                }
            )
    return pd.DataFrame(rows, columns=["side", "label", "n", "agreed", "rate", "rate_low", "rate_high"])


def auroc_from_counts(counts: np.ndarray) -> np.ndarray:
    """AUROC from per-score class counts (one row per resample, or a single row).

    ``counts`` has ``2k`` columns for ``k`` distinct scores sorted ascending: the first
    ``k`` count positives at each score, the last ``k`` negatives. With ``P`` and ``N``
    the totals, ``AUROC = Σ_u pos_u · (neg_{<u} + ½ neg_u) / (P · N)`` — the rank form of
    :func:`jurist.metrics.agreement.auroc` (ties count ½), which makes AUROC a function of
    summed counts and so fit :func:`~jurist.metrics.gold_agreement.bootstrap_ci`. NaN
    where a class is absent.
    """
    data = np.atleast_2d(np.asarray(counts, dtype=np.float64))
    k = data.shape[1] // 2
    pos, neg = data[:, :k], data[:, k:]
    below = np.cumsum(neg, axis=1) - neg
    total = pos.sum(axis=1) * neg.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = (pos * (below + 0.5 * neg)).sum(axis=1) / total
    return np.where(total > 0, value, np.nan)
