"""Figures of verdicts weighted by token probabilities: continuous agreement and preference.

A weighted score (``Σ p(s) · s``) is continuous, so its agreement with gold is computed on
the values themselves, not on a table of counts:

- MAE ``mean |x − y|``; RMSE ``sqrt(mean (x − y)²)``;
- Pearson's r; Spearman's ρ (Pearson's r of the ranks, tied values given their average
  rank); Kendall's τ-b ``(C − D) / sqrt((n₀ − n₁)(n₀ − n₂))`` over the ``n₀ = n(n−1)/2``
  pairs, ``C``/``D`` the concordant/discordant ones and ``n₁``/``n₂`` those tied in ``x``/``y``.

A correlation with no variation on one side is NaN, as for the sampled scores.

A pairwise item weighted in each order gives the probability that the second response
(B) is preferred: in order ``AB`` ``p(B) + p(tie)/2``, in order ``BA`` (B shown first)
``p(A) + p(tie)/2``. The row's preference is the mean over its two orders (swap-averaged),
and the weighted win rate of B is the mean of the rows' preferences, a tie counting half,
as AlpacaEval 2 averages its weighted preferences (``preference − 1``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

__all__ = ["continuous_agreement", "kendall_tau_b", "order_preference", "pearson", "spearman"]

NAN = float("nan")
_CHUNK = 512
"""Rows of the pair table Kendall's τ-b builds at once (memory: chunk × n)."""


def pearson(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Pearson's r, NaN with fewer than two items or no variation on a side.

    Examples:
        >>> pearson([1, 2, 3], [2, 4, 7])
        0.9933992677987828
    """
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(a) < 2:
        return NAN
    da, db = a - a.mean(), b - b.mean()
    denominator = float(np.sqrt((da * da).sum() * (db * db).sum()))
    return float((da * db).sum() / denominator) if denominator > 0 else NAN


def _ranks(values: np.ndarray) -> np.ndarray:
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values))
    ordered = values[order]
    start = 0
    while start < len(values):
        end = start
        while end + 1 < len(values) and ordered[end + 1] == ordered[start]:
            end += 1
        ranks[order[start : end + 1]] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def spearman(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Spearman's ρ: Pearson's r of the average ranks.

    Examples:
        >>> spearman([1, 2, 3, 4], [1, 3, 2, 4])
        0.8
    """
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    return pearson(_ranks(a), _ranks(b)) if len(a) >= 2 else NAN


def kendall_tau_b(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Kendall's τ-b over every pair of items.

    Examples:
        >>> kendall_tau_b([1, 2, 3, 4], [1, 3, 2, 4])
        0.6666666666666666
    """
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = len(a)
    if n < 2:
        return NAN
    s = tied_x = tied_y = 0.0
    for start in range(0, n, _CHUNK):
        rows = slice(start, min(start + _CHUNK, n))
        sx = np.sign(a[rows, None] - a[None, :])
        sy = np.sign(b[rows, None] - b[None, :])
        upper = np.arange(rows.start, rows.stop)[:, None] < np.arange(n)[None, :]
        s += float((sx * sy)[upper].sum())
        tied_x += float(((sx == 0) & upper).sum())
        tied_y += float(((sy == 0) & upper).sum())
    pairs = n * (n - 1) / 2
    denominator = np.sqrt((pairs - tied_x) * (pairs - tied_y))
    return float(s / denominator) if denominator > 0 else NAN


def continuous_agreement(
    gold: Sequence[float] | np.ndarray, judged: Sequence[float] | np.ndarray
) -> dict[str, float]:
    """``items``, ``mae``, ``rmse``, ``pearson``, ``spearman`` and ``kendall_tau`` of judged
    values against gold ones (NaN without items)."""
    g, j = np.asarray(gold, dtype=float), np.asarray(judged, dtype=float)
    if len(g) == 0:
        return {"items": 0, **dict.fromkeys(("mae", "rmse", "pearson", "spearman", "kendall_tau"), NAN)}
    error = j - g
    return {
        "items": len(g),
        "mae": float(np.abs(error).mean()),
        "rmse": float(np.sqrt((error * error).mean())),
        "pearson": pearson(j, g),
        "spearman": spearman(j, g),
        "kendall_tau": kendall_tau_b(j, g),
    }


def order_preference(probabilities: Mapping[str, float], order: str) -> float:
    """The probability that response B is preferred, from one order's positional
    probabilities (``A``, ``B`` and ``tie``), a tie counting half.

    Examples:
        >>> order_preference({"A": 0.2, "B": 0.6, "tie": 0.2}, "AB")
        0.7
        >>> order_preference({"A": 0.2, "B": 0.6, "tie": 0.2}, "BA")
        0.30000000000000004
    """
    tie = probabilities.get("tie", 0.0) / 2
    position_of_b = "A" if order == "BA" else "B"
    return probabilities.get(position_of_b, 0.0) + tie
