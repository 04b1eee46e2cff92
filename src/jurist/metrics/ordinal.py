"""Agreement of numeric scores (e.g. a 1-10 rating) with gold scores, from contingency tables.

Gold and judged scores take few distinct values, so every statistic here is computed from
the ``k × k`` contingency table ``T[a, b]`` = number of items with gold value ``v_a`` and
judged value ``v_b`` over the sorted distinct values ``v`` of both. A table is the sum of
per-item one-hot cells (:func:`contingency_cells`), so each statistic takes a stack of
flattened tables, shape ``(..., k·k)``, and fits
:func:`jurist.metrics.gold_agreement.bootstrap_ci` exactly: a resample's table is the sum
of the resampled items' cells, and an item drawn twice is two tied observations.

With ``n = Σ T``, gold marginals ``r_a = Σ_b T[a, b]`` and judged marginals
``c_b = Σ_a T[a, b]``. Undefined values (no item, a constant side) are NaN.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from jurist.metrics._arrays import ratio
from jurist.metrics.count_codes import CountCodes

__all__ = [
    "contingency_cells",
    "contingency_codes",
    "exact_agreement",
    "kendall_tau_b",
    "mean_absolute_error",
    "pearson",
    "quadratic_weighted_kappa",
    "root_mean_squared_error",
    "spearman",
    "within_agreement",
]


def contingency_cells(
    gold: Sequence[float] | np.ndarray,
    predicted: Sequence[float] | np.ndarray,
    values: Sequence[float] | np.ndarray,
) -> np.ndarray:
    """One row per item: its cell of the ``k × k`` contingency table over ``values``, flattened.

    Args:
        gold: Gold scores.
        predicted: Judged scores, one per gold score.
        values: The sorted distinct values the table is indexed by (every gold and judged
            score must be one of them).
    """
    gi, pi, k = _cell_indices(gold, predicted, values)
    cells = np.zeros((gi.size, k * k))
    cells[np.arange(gi.size), gi.astype(np.intp) * k + pi] = 1.0
    return cells


def contingency_codes(
    gold: Sequence[float] | np.ndarray,
    predicted: Sequence[float] | np.ndarray,
    values: Sequence[float] | np.ndarray,
) -> CountCodes:
    """:func:`contingency_cells` as one code per item, ``g·k + p`` of ``k·k`` cells (the same
    bootstrap without the ``n × k²`` matrix, see :mod:`jurist.metrics.count_codes`)."""
    gi, pi, k = _cell_indices(gold, predicted, values)
    return CountCodes(gi.astype(np.intp) * k + pi, k * k)


def _cell_indices(
    gold: Sequence[float] | np.ndarray,
    predicted: Sequence[float] | np.ndarray,
    values: Sequence[float] | np.ndarray,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Positions of the gold and judged scores among ``values``, and the number of values."""
    g = np.asarray(gold, dtype=np.float64)
    p = np.asarray(predicted, dtype=np.float64)
    axis = np.asarray(values, dtype=np.float64)
    if g.shape != p.shape:
        raise ValueError(f"gold and predicted differ in length: {g.size} != {p.size}")
    k = axis.size
    steps = np.diff(axis)
    if k > 1 and steps[0] > 0 and (steps == steps[0]).all():
        start = float(axis[0])
        if steps[0] == 1.0 and start.is_integer() and abs(start) + k < _INT16_RANGE:
            # Consecutive integers (a 1-5 or 0-10 rating): the position is the score minus the
            # first value, read by a cast to int16 that is checked against the score itself.
            return _integer_positions(g, int(start), k), _integer_positions(p, int(start), k), k
        # Equally spaced values: the position is arithmetic, no search.
        with np.errstate(invalid="ignore"):
            gi = np.rint((g - axis[0]) / steps[0]).astype(np.int64)
            pi = np.rint((p - axis[0]) / steps[0]).astype(np.int64)
        gi[gi < 0] = k  # below the range, or NaN: not a value, caught below
        pi[pi < 0] = k
    else:
        gi, pi = np.searchsorted(axis, g), np.searchsorted(axis, p)
    if g.size and not (
        (gi < k).all()
        and (pi < k).all()
        and (axis.take(gi, mode="clip") == g).all()
        and (axis.take(pi, mode="clip") == p).all()
    ):
        raise ValueError(_OFF_GRID)
    return gi, pi, k


_INT16_RANGE = 1 << 15
_OFF_GRID = "every score must be one of the table's values"


def _integer_positions(scores: np.ndarray, start: int, k: int) -> np.ndarray:
    """Positions (int16) of scores on the grid ``start, start + 1, ..., start + k - 1``.

    The cast truncates; a score that is not an integer, is out of int16's range, or is NaN or
    infinite casts to a number that differs from it, so the equality check rejects it.
    """
    with np.errstate(invalid="ignore"):
        positions = scores.astype(np.int16)
        exact = bool((positions == scores).all())
    if not exact or (positions.size and (positions.min() < start or positions.max() >= start + k)):
        raise ValueError(_OFF_GRID)
    if start:
        positions -= np.int16(start)
    return positions


def _contingency_table(
    gold: Sequence[float] | np.ndarray,
    predicted: Sequence[float] | np.ndarray,
    values: Sequence[float] | np.ndarray,
) -> np.ndarray:
    """The summed :func:`contingency_cells` (one flattened ``k × k`` table), without the per-item rows.

    Each item's cell is ``a·k + b``; the cells are counted with one ``bincount``. With at most
    256 cells (``k ≤ 16``), the cells are bytes, two items' cells are read as one 16-bit number
    (the byte pair ``(c₀, c₁)``), and the 65,536 pair counts are folded back into cell counts
    (each pair counts once for ``c₀`` and once for ``c₁``): half the numbers to count, at no
    extra pass over the data.
    """
    gi, pi, k = _cell_indices(gold, predicted, values)
    cells = k * k
    if gi.dtype == np.int16 and cells <= 256 and gi.size > 1:
        code = np.multiply(gi, k, out=np.empty(gi.size, dtype=np.uint8), casting="unsafe")
        np.add(code, pi, out=code, casting="unsafe")
        paired = code.size // 2 * 2
        pairs = np.bincount(code[:paired].view(np.uint16), minlength=1 << 16).reshape(256, 256)
        counts = pairs.sum(axis=0) + pairs.sum(axis=1)
        if paired < code.size:
            counts[code[-1]] += 1
        return counts[:cells].astype(np.float64)
    return np.bincount(gi.astype(np.intp) * k + pi, minlength=cells).astype(np.float64)


def _table(counts: np.ndarray) -> np.ndarray:
    data = np.asarray(counts, dtype=np.float64)
    k = int(round(np.sqrt(data.shape[-1])))
    if k * k != data.shape[-1]:
        raise ValueError(f"contingency cells must have k·k columns, got {data.shape[-1]}")
    return data.reshape(*data.shape[:-1], k, k)


def _distance(values: Sequence[float]) -> np.ndarray:
    axis = np.asarray(values, dtype=np.float64)
    return axis[:, None] - axis[None, :]  # v_a − v_b


def mean_absolute_error(counts: np.ndarray, values: Sequence[float]) -> np.ndarray:
    """``MAE = Σ_ab T[a, b] · |v_a − v_b| / n``."""
    table = _table(counts)
    return ratio((table * np.abs(_distance(values))).sum(axis=(-2, -1)), table.sum(axis=(-2, -1)))


def root_mean_squared_error(counts: np.ndarray, values: Sequence[float]) -> np.ndarray:
    """``RMSE = sqrt(Σ_ab T[a, b] · (v_a − v_b)² / n)``."""
    table = _table(counts)
    return np.sqrt(ratio((table * _distance(values) ** 2).sum(axis=(-2, -1)), table.sum(axis=(-2, -1))))


def exact_agreement(counts: np.ndarray) -> np.ndarray:
    """Share of items whose judged score equals the gold score: ``Σ_a T[a, a] / n``."""
    table = _table(counts)
    return ratio(np.trace(table, axis1=-2, axis2=-1), table.sum(axis=(-2, -1)))


def within_agreement(counts: np.ndarray, values: Sequence[float], tolerance: float = 1.0) -> np.ndarray:
    """Share of items within ``tolerance`` of gold: ``Σ_{|v_a − v_b| ≤ tolerance} T[a, b] / n``."""
    table = _table(counts)
    close = np.abs(_distance(values)) <= tolerance + 1e-12
    return ratio((table * close).sum(axis=(-2, -1)), table.sum(axis=(-2, -1)))


def _weighted_pearson(table: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson correlation of a table's items; row ``a`` scores ``x[..., a]``, column ``b`` ``y[..., b]``."""
    n = table.sum(axis=(-2, -1))
    rows, cols = table.sum(axis=-1), table.sum(axis=-2)
    safe = np.where(n > 0, n, 1.0)
    mean_x = (rows * x).sum(axis=-1) / safe
    mean_y = (cols * y).sum(axis=-1) / safe
    dx = x - mean_x[..., None]
    dy = y - mean_y[..., None]
    cov = np.einsum("...a,...ab,...b->...", dx, table, dy)
    var_x = (rows * dx**2).sum(axis=-1)
    var_y = (cols * dy**2).sum(axis=-1)
    denominator = np.sqrt(var_x * var_y)
    # Variances below rounding noise mean a constant side: the correlation is undefined.
    scale = np.maximum((rows * x**2).sum(axis=-1), 1.0) * np.maximum((cols * y**2).sum(axis=-1), 1.0)
    return np.where(
        (n > 1) & (var_x * var_y > 1e-24 * scale), cov / np.where(denominator > 0, denominator, 1.0), np.nan
    )


def pearson(counts: np.ndarray, values: Sequence[float]) -> np.ndarray:
    """Pearson's ``r = Σ T[a, b] (v_a − x̄)(v_b − ȳ) / sqrt(Σ r_a (v_a − x̄)² · Σ c_b (v_b − ȳ)²)``,
    with ``x̄ = Σ r_a v_a / n`` and ``ȳ = Σ c_b v_b / n``."""
    table = _table(counts)
    axis = np.broadcast_to(np.asarray(values, dtype=np.float64), table.shape[:-1])
    return _weighted_pearson(table, axis, axis)


def _midranks(marginal: np.ndarray) -> np.ndarray:
    """Average (mid) rank of each value given its count: ``Σ_{u<a} m_u + (m_a + 1) / 2``."""
    below = np.cumsum(marginal, axis=-1) - marginal
    return below + (marginal + 1.0) / 2.0


def spearman(counts: np.ndarray) -> np.ndarray:
    """Spearman's ``ρ``: Pearson's ``r`` of the mid-ranks (ties get their average rank).

    The rank of gold value ``v_a`` is ``Σ_{u<a} r_u + (r_a + 1) / 2`` (likewise for judged
    values with ``c``), as :func:`scipy.stats.spearmanr` ranks ties.
    """
    table = _table(counts)
    return _weighted_pearson(table, _midranks(table.sum(axis=-1)), _midranks(table.sum(axis=-2)))


def kendall_tau_b(counts: np.ndarray) -> np.ndarray:
    """Kendall's ``τ_b = (P − Q) / sqrt((n₀ − n₁)(n₀ − n₂))``.

    ``P`` counts concordant pairs of items (``Σ_ab T[a, b] · Σ_{a'>a, b'>b} T[a', b']``),
    ``Q`` discordant ones (``Σ_ab T[a, b] · Σ_{a'>a, b'<b} T[a', b']``),
    ``n₀ = n(n − 1)/2``, ``n₁ = Σ_a r_a(r_a − 1)/2`` (pairs tied in gold) and
    ``n₂ = Σ_b c_b(c_b − 1)/2`` (pairs tied in the judgment); as :func:`scipy.stats.kendalltau`.
    """
    table = _table(counts)
    # after[a, b] = Σ_{a' ≥ a, b' ≥ b} T; before[a, b] = Σ_{a' ≥ a, b' ≤ b} T
    after = np.flip(np.cumsum(np.cumsum(np.flip(table, axis=(-2, -1)), axis=-2), axis=-1), axis=(-2, -1))
    before = np.flip(np.cumsum(np.cumsum(np.flip(table, axis=-2), axis=-2), axis=-1), axis=-2)
    pad = [(0, 0)] * (table.ndim - 2)
    greater = np.pad(after, [*pad, (0, 1), (0, 1)])[..., 1:, 1:]  # Σ_{a'>a, b'>b}
    lesser = np.pad(before, [*pad, (0, 1), (1, 0)])[..., 1:, :-1]  # Σ_{a'>a, b'<b}
    concordant = (table * greater).sum(axis=(-2, -1))
    discordant = (table * lesser).sum(axis=(-2, -1))
    n = table.sum(axis=(-2, -1))
    n0 = n * (n - 1) / 2
    rows, cols = table.sum(axis=-1), table.sum(axis=-2)
    n1 = (rows * (rows - 1) / 2).sum(axis=-1)
    n2 = (cols * (cols - 1) / 2).sum(axis=-1)
    return ratio(concordant - discordant, np.sqrt(np.clip((n0 - n1) * (n0 - n2), 0.0, None)))


def quadratic_weighted_kappa(counts: np.ndarray, values: Sequence[float]) -> np.ndarray:
    """Cohen's quadratic-weighted ``κ_w = 1 − Σ w·O / Σ w·E``.

    ``O = T / n`` (observed), ``E[a, b] = r_a · c_b / n²`` (chance) and
    ``w[a, b] = (v_a − v_b)²``. For consecutive integer scores this equals scikit-learn's
    ``cohen_kappa_score(weights="quadratic")`` over the full range (its index distances
    equal the value distances; a constant rescaling of ``w`` cancels).
    """
    table = _table(counts)
    weights = _distance(values) ** 2
    n = table.sum(axis=(-2, -1))
    safe = np.where(n > 0, n, 1.0)
    observed = (weights * table).sum(axis=(-2, -1)) / safe[...]
    expected = np.einsum("...a,ab,...b->...", table.sum(axis=-1), weights, table.sum(axis=-2)) / safe**2
    return np.where(n > 0, 1.0 - ratio(observed, expected), np.nan)
