"""Paired significance tests for comparing two systems on the same items.

``scores_a[i]`` and ``scores_b[i]`` are two systems' scores on item ``i`` (e.g. per-text
entity F1 of a baseline and of an LLM judge). Implemented with the standard library and
numpy only, so that scoring needs no SciPy; the tests check the p-values against SciPy's
``ttest_rel``, ``wilcoxon`` and ``binomtest`` (McNemar's exact test of paired right/wrong).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from jurist.metrics._arrays import DRAWS_PER_CHUNK

__all__ = ["bootstrap_ci", "mcnemar_exact", "paired_t_test", "significance_test", "wilcoxon_signed_rank"]

TestType = Literal["paired_t", "wilcoxon", "bootstrap"]


def _differences(scores_a: Sequence[float], scores_b: Sequence[float]) -> list[float]:
    if len(scores_a) != len(scores_b):
        raise ValueError(f"paired tests need equal lengths, got {len(scores_a)} and {len(scores_b)}")
    if not scores_a:
        raise ValueError("paired tests need at least one pair of scores")
    return [float(a) - float(b) for a, b in zip(scores_a, scores_b, strict=True)]


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function ``I_x(a, b)``."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, 1.0 - x) / b


def _normal_two_sided(z: float) -> float:
    return math.erfc(abs(z) / math.sqrt(2.0))


def paired_t_test(scores_a: Sequence[float], scores_b: Sequence[float]) -> dict[str, Any]:
    """Student's paired t-test, two-sided.

    With ``d_i = a_i - b_i``: ``t = mean(d) / (sd(d) / √n)`` (``sd`` with ``n - 1``),
    ``df = n - 1``, ``p = I_{df/(df+t²)}(df/2, 1/2)`` (two-sided tail of Student's t).
    When every difference is equal the test is degenerate: ``t`` is ``None`` and ``p`` is
    1.0 if the differences are 0, else 0.0.
    """
    d = _differences(scores_a, scores_b)
    n = len(d)
    mean = sum(d) / n
    if n < 2:
        return {"statistic": None, "p_value": None, "df": 0, "mean_difference": mean}
    variance = sum((x - mean) ** 2 for x in d) / (n - 1)
    if variance <= 1e-300:
        return {"statistic": None, "p_value": 1.0 if mean == 0 else 0.0, "df": n - 1, "mean_difference": mean}
    t = mean / math.sqrt(variance / n)
    df = n - 1
    p = _betainc(df / 2.0, 0.5, df / (df + t * t))
    return {"statistic": t, "p_value": min(1.0, p), "df": df, "mean_difference": mean}


def _average_ranks(values: Sequence[float]) -> tuple[list[float], list[int]]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    ties: list[int] = []
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2.0 + 1.0
        ties.append(j - i + 1)
        i = j + 1
    return ranks, ties


def _exact_counts(n: int) -> list[int]:
    """Number of subsets of {1..n} with each sum: the null distribution of ``W+`` (× 2^n)."""
    counts = [1] + [0] * (n * (n + 1) // 2)
    for k in range(1, n + 1):
        for total in range(len(counts) - 1, k - 1, -1):
            counts[total] += counts[total - k]
    return counts


def wilcoxon_signed_rank(scores_a: Sequence[float], scores_b: Sequence[float]) -> dict[str, Any]:
    """Wilcoxon signed-rank test, two-sided, zero differences dropped (Wilcoxon's method).

    With ``d_i = a_i - b_i ≠ 0`` ranked by ``|d_i|`` (ties share their mean rank):
    ``W+ = Σ_{d_i>0} rank_i``, ``W- = Σ_{d_i<0} rank_i``, ``statistic = min(W+, W-)``.
    The p-value is chosen as SciPy's ``method="auto"`` does:

    - more than 50 pairs: normal approximation, ``z = (W+ - m(m+1)/4) / σ`` with ``m`` the
      non-zero differences, ``σ² = [m(m+1)(2m+1) - Σ_g (t_g³ - t_g)/2] / 24`` (tie groups
      of size ``t_g``), ``p = 2 Φ(-|z|)``;
    - otherwise, with no ties and no zeros: the exact null distribution of ``W+``,
      ``p = 2 min(P(W ≥ W+), P(W ≤ W+))``;
    - otherwise up to 13 pairs: every sign assignment of the differences enumerated
      (an exact permutation test); beyond that, the normal approximation.

    ``p`` is ``None`` when every difference is zero.
    """
    d = _differences(scores_a, scores_b)
    nonzero = [x for x in d if x != 0.0]
    zeros = len(d) - len(nonzero)
    m = len(nonzero)
    if not m:
        return {"statistic": 0.0, "p_value": None, "n": len(d), "zeros": zeros, "method": "none"}
    ranks, ties = _average_ranks([abs(x) for x in nonzero])
    w_plus = sum(r for r, x in zip(ranks, nonzero, strict=True) if x > 0)
    w_minus = sum(r for r, x in zip(ranks, nonzero, strict=True) if x < 0)
    has_ties = any(t > 1 for t in ties)
    if len(d) > 50 or ((has_ties or zeros) and len(d) > 13):
        method = "normal"
        variance = (m * (m + 1) * (2 * m + 1) - sum(t**3 - t for t in ties) / 2.0) / 24.0
        z = (w_plus - m * (m + 1) / 4.0) / math.sqrt(variance)
        p = _normal_two_sided(z)
    elif not has_ties and not zeros:
        method = "exact"
        counts = _exact_counts(m)
        total = float(2**m)
        observed = int(round(w_plus))
        p = 2 * min(sum(counts[observed:]) / total, sum(counts[: observed + 1]) / total)
    else:
        method = "permutation"
        tolerance = 1e-9 * max(1.0, abs(w_plus))
        greater = less = 0
        for signs in itertools.product((1, -1), repeat=m):
            value = sum(r for r, s in zip(ranks, signs, strict=True) if s > 0)
            greater += value >= w_plus - tolerance
            less += value <= w_plus + tolerance
        total = float(2**m)
        p = 2 * min(greater / total, less / total)
    return {
        "statistic": min(w_plus, w_minus),
        "p_value": min(1.0, p),
        "n": len(d),
        "zeros": zeros,
        "method": method,
    }


def mcnemar_exact(correct_a: Sequence[bool], correct_b: Sequence[bool]) -> dict[str, Any]:
    """McNemar's exact test of two judges' paired right/wrong on the same items, two-sided.

    Only the discordant pairs count: ``b`` items that judge A got right and B wrong, ``c``
    items that A got wrong and B right, ``n = b + c``. Under the null hypothesis (both are
    right equally often) ``b ~ Binomial(n, 1/2)``, so

    ``p = min(1, 2 · Σ_{k=0}^{min(b, c)} C(n, k) / 2^n)``

    (the exact binomial test of ``b`` out of ``n`` at 1/2; summed in log space, so it stays
    accurate for any ``n``). ``statistic`` is ``min(b, c)``; ``difference`` is
    ``(b - c) / N`` over all ``N`` pairs, the accuracy of A minus that of B. ``p`` is
    ``None`` when no pair is discordant (the judges are right on exactly the same items).

    Raises:
        ValueError: The sequences differ in length or are empty.
    """
    if len(correct_a) != len(correct_b):
        raise ValueError(f"paired tests need equal lengths, got {len(correct_a)} and {len(correct_b)}")
    if not len(correct_a):
        raise ValueError("paired tests need at least one pair of results")
    right_a = np.asarray(correct_a, dtype=bool)
    right_b = np.asarray(correct_b, dtype=bool)
    b = int(np.count_nonzero(right_a & ~right_b))
    c = int(np.count_nonzero(~right_a & right_b))
    n = b + c
    result: dict[str, Any] = {
        "statistic": min(b, c),
        "b": b,
        "c": c,
        "n": int(len(right_a)),
        "difference": (b - c) / len(right_a),
        "method": "exact",
    }
    if n == 0:
        return {**result, "p_value": None}
    low = min(b, c)
    log_terms = [
        math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) - n * math.log(2.0)
        for k in range(low + 1)
    ]
    top = max(log_terms)
    tail = math.exp(top) * math.fsum(math.exp(term - top) for term in log_terms)
    return {**result, "p_value": min(1.0, 2.0 * tail)}


def bootstrap_ci(
    scores_a: Sequence[float],
    scores_b: Sequence[float],
    *,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Any]:
    """Percentile bootstrap interval of the mean paired difference.

    Resample the differences ``d_i = a_i - b_i`` with replacement ``n_resamples`` times
    (seeded: the same inputs give the same interval; drawn a chunk of resamples at a time,
    so at most about a million indices are held at once), take each resample's mean, and
    report the ``(1-confidence)/2`` and ``(1+confidence)/2`` percentiles. ``significant``
    iff the interval excludes 0.
    """
    d = np.asarray(_differences(scores_a, scores_b))
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    chunk = max(1, DRAWS_PER_CHUNK // max(1, len(d)))
    for start in range(0, n_resamples, chunk):  # the same draws as one call, a chunk at a time
        size = min(chunk, n_resamples - start)
        means[start : start + size] = d[rng.integers(0, len(d), size=(size, len(d)))].mean(axis=1)
    alpha = 1.0 - confidence
    lower, upper = np.percentile(means, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return {
        "mean_difference": float(d.mean()),
        "ci_lower": float(lower),
        "ci_upper": float(upper),
        "confidence": confidence,
        "significant": not (lower <= 0.0 <= upper),
    }


def significance_test(
    scores_a: Sequence[float],
    scores_b: Sequence[float],
    test_type: TestType = "paired_t",
    alpha: float = 0.05,
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> dict[str, Any]:
    """One of the three paired tests, with a verdict at level ``alpha``.

    ``paired_t`` (:func:`paired_t_test`) and ``wilcoxon`` (:func:`wilcoxon_signed_rank`):
    ``significant`` iff ``p < alpha``. ``bootstrap`` (:func:`bootstrap_ci` at confidence
    ``1 - alpha``): ``significant`` iff the interval excludes 0.
    """
    if test_type == "bootstrap":
        result = bootstrap_ci(scores_a, scores_b, n_resamples=n_resamples, confidence=1 - alpha, seed=seed)
        return {"test": test_type, "alpha": alpha, **result}
    if test_type == "paired_t":
        result = paired_t_test(scores_a, scores_b)
    elif test_type == "wilcoxon":
        result = wilcoxon_signed_rank(scores_a, scores_b)
    else:
        raise ValueError(f"test_type must be paired_t, wilcoxon or bootstrap, got {test_type!r}")
    p = result["p_value"]
    return {"test": test_type, "alpha": alpha, **result, "significant": p is not None and p < alpha}
