"""Two runs compared item by item: where their verdicts differ, which one agrees with gold,
and how their figures differ, with paired intervals and tests.

Items are paired by id (the items both runs hold). For the items with gold in both runs:

- **accuracy** of each run (share of items whose verdict agrees with gold), the difference
  A - B with a percentile bootstrap interval of the paired difference, and McNemar's exact
  test (:func:`jurist.metrics.significance.mcnemar_exact`);
- for each numeric per-item column both tables hold among the errors (a name ending in
  ``error``, e.g. ``abs_error``), ``cost`` and ``latency_s``: the mean of each, the mean
  paired difference with its bootstrap interval, and the Wilcoxon signed-rank test
  (:func:`jurist.metrics.significance.wilcoxon_signed_rank`).

The bootstrap is :func:`jurist.metrics.significance.bootstrap_ci`'s (resample the paired
differences ``d_i = a_i - b_i`` with replacement, take the percentiles of the resampled
means), drawn in chunks so 100,000 pairs need no more memory than a few thousand; for
right/wrong pairs it draws the counts of the three kinds of pair (A alone right, B alone
right, neither or both) from their multinomial instead, which gives the same distribution
of the mean at a cost that does not grow with the items.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from jurist.metrics.significance import mcnemar_exact, wilcoxon_signed_rank
from jurist.report.review import Review
from jurist.view.table import ItemTable

__all__ = [
    "Comparison",
    "MetricDelta",
    "bootstrap_interval",
    "compare_columns",
    "compare_tables",
    "headline_deltas",
    "outcome_filter",
    "paired_number_columns",
    "right_wrong_interval",
]

PAIRED_NUMBERS = ("cost", "latency_s")
"""Per-item columns compared pair by pair besides the errors."""

OUTCOMES = ("A", "B", "neither", "both", "no gold")
"""Which run agrees with gold on an item where the verdicts differ."""

_DRAWS_PER_CHUNK = 4_000_000


@dataclass(frozen=True)
class MetricDelta:
    """One figure of both runs over their paired items.

    Attributes:
        name: The figure (``accuracy``, ``abs_error``, ``cost``, ...).
        a: Its value for run A.
        b: Its value for run B.
        delta: ``a - b``.
        low: The lower end of the bootstrap interval of ``delta``.
        high: The upper end.
        test: The paired test (``McNemar exact``, ``Wilcoxon signed-rank``).
        p_value: Its two-sided p-value (``None`` when undefined: no discordant pair).
        n: The pairs used.
    """

    name: str
    a: float
    b: float
    delta: float
    low: float
    high: float
    test: str
    p_value: float | None
    n: int


@dataclass
class Comparison:
    """Two runs' items paired by id.

    Attributes:
        common: Items both runs hold.
        only_a: Items only run A holds.
        only_b: Items only run B holds.
        positions_a: Positions (in A's table) of the items whose verdicts differ, in A's order.
        positions_b: The same items' positions in B's table.
        outcomes: For each of those items, which run agrees with gold (:data:`OUTCOMES`).
        counts: How many differing items have each outcome.
        deltas: The paired figures (:class:`MetricDelta`).
        confidence: The confidence of the intervals.
    """

    common: int
    only_a: int
    only_b: int
    positions_a: np.ndarray
    positions_b: np.ndarray
    outcomes: np.ndarray
    counts: dict[str, int]
    deltas: list[MetricDelta] = field(default_factory=list)
    confidence: float = 0.95

    @property
    def differing(self) -> int:
        """Items whose verdicts differ."""
        return len(self.positions_a)


def _percentiles(means: np.ndarray, confidence: float) -> tuple[float, float]:
    alpha = 1.0 - confidence
    low, high = np.percentile(means, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return float(low), float(high)


def bootstrap_interval(
    differences: np.ndarray, *, n_resamples: int = 2000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """The percentile bootstrap interval of the mean of ``differences``.

    The same draws and result as :func:`jurist.metrics.significance.bootstrap_ci` on the
    differences, drawn a chunk of resamples at a time (at most a few million indices in
    memory at once).
    """
    values = np.asarray(differences, dtype=float)
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    chunk = max(1, _DRAWS_PER_CHUNK // max(1, len(values)))
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        means[start : start + size] = values[rng.integers(0, len(values), size=(size, len(values)))].mean(
            axis=1
        )
    return _percentiles(means, confidence)


def right_wrong_interval(
    only_a: int, only_b: int, pairs: int, *, n_resamples: int = 2000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """The percentile bootstrap interval of accuracy(A) - accuracy(B) over ``pairs`` paired items.

    Each pair's difference is +1 (only A right), -1 (only B right) or 0; a resample of the
    pairs is a multinomial draw of how many of each it holds, ``(k₊, k₋, k₀) ~
    Multinomial(n, (only_a/n, only_b/n, rest/n))``, and its mean difference is
    ``(k₊ - k₋) / n``.
    """
    if pairs <= 0:
        raise ValueError("the interval needs at least one pair")
    probabilities = [only_a / pairs, only_b / pairs, max(0.0, 1.0 - (only_a + only_b) / pairs)]
    draws = np.random.default_rng(seed).multinomial(pairs, probabilities, size=n_resamples)
    return _percentiles((draws[:, 0] - draws[:, 1]) / pairs, confidence)


def _as_text(array: pa.Array) -> pa.Array:
    if pa.types.is_large_string(array.type):
        return array
    return pc.cast(array, pa.large_string())


def _as_floats(array: pa.Array) -> np.ndarray:
    if pa.types.is_null(array.type):
        return np.full(len(array), np.nan)
    return np.asarray(pc.cast(array, pa.float64()).to_numpy(zero_copy_only=False), dtype=float)


def compare_columns(
    ids_a: pa.Array,
    ids_b: pa.Array,
    verdict_a: pa.Array,
    verdict_b: pa.Array,
    agrees_a: pa.Array | None = None,
    agrees_b: pa.Array | None = None,
    numbers: Mapping[str, tuple[pa.Array, pa.Array]] | None = None,
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Comparison:
    """Compare two runs from their columns (each column of A aligned with ``ids_a``, of B with
    ``ids_b``). A missing verdict (a failed item) differs from any verdict, not from another
    missing one. ``numbers`` maps a figure's name to its per-item columns in A and in B.
    """
    index_in_b = pc.index_in(_as_text(ids_a), value_set=_as_text(ids_b))
    found = np.asarray(pc.is_valid(index_in_b).to_numpy(zero_copy_only=False), dtype=bool)
    positions_a = np.nonzero(found)[0].astype(np.int64)
    positions_b = np.asarray(index_in_b.filter(pc.is_valid(index_in_b)).to_numpy(), dtype=np.int64)
    common = len(positions_a)
    take_a, take_b = pa.array(positions_a), pa.array(positions_b)

    verdicts_a = _as_text(verdict_a).take(take_a)
    verdicts_b = _as_text(verdict_b).take(take_b)
    same = pc.fill_null(pc.equal(verdicts_a, verdicts_b), False)
    both_missing = pc.and_(pc.is_null(verdicts_a), pc.is_null(verdicts_b))
    differ = ~np.asarray(pc.or_(same, both_missing).to_numpy(zero_copy_only=False), dtype=bool)

    right_a = _as_floats(agrees_a.take(take_a)) if agrees_a is not None else np.full(common, np.nan)
    right_b = _as_floats(agrees_b.take(take_b)) if agrees_b is not None else np.full(common, np.nan)
    outcomes = np.full(common, "no gold", dtype=object)
    known = ~np.isnan(right_a) & ~np.isnan(right_b)
    a_right, b_right = known & (right_a == 1), known & (right_b == 1)
    outcomes[a_right & ~b_right] = "A"
    outcomes[b_right & ~a_right] = "B"
    outcomes[a_right & b_right] = "both"
    outcomes[known & ~a_right & ~b_right] = "neither"
    differing_outcomes = outcomes[differ]
    counts = {name: int(np.count_nonzero(differing_outcomes == name)) for name in OUTCOMES}

    deltas: list[MetricDelta] = []
    pairs = int(np.count_nonzero(known))
    if pairs:
        test = mcnemar_exact(list(right_a[known] == 1), list(right_b[known] == 1))
        low, high = right_wrong_interval(
            test["b"], test["c"], pairs, n_resamples=n_resamples, confidence=confidence, seed=seed
        )
        deltas.append(
            MetricDelta(
                name="accuracy",
                a=float(np.mean(right_a[known])),
                b=float(np.mean(right_b[known])),
                delta=float(test["difference"]),
                low=low,
                high=high,
                test="McNemar exact",
                p_value=test["p_value"],
                n=pairs,
            )
        )
    for name, (column_a, column_b) in (numbers or {}).items():
        values_a = _as_floats(column_a.take(take_a))
        values_b = _as_floats(column_b.take(take_b))
        usable = np.isfinite(values_a) & np.isfinite(values_b)
        if np.count_nonzero(usable) < 2:
            continue
        paired_a, paired_b = values_a[usable], values_b[usable]
        low, high = bootstrap_interval(
            paired_a - paired_b, n_resamples=n_resamples, confidence=confidence, seed=seed
        )
        wilcoxon = wilcoxon_signed_rank(paired_a.tolist(), paired_b.tolist())
        deltas.append(
            MetricDelta(
                name=name,
                a=float(paired_a.mean()),
                b=float(paired_b.mean()),
                delta=float((paired_a - paired_b).mean()),
                low=low,
                high=high,
                test="Wilcoxon signed-rank",
                p_value=wilcoxon["p_value"],
                n=int(len(paired_a)),
            )
        )
    return Comparison(
        common=common,
        only_a=len(ids_a) - common,
        only_b=len(ids_b) - common,
        positions_a=positions_a[differ],
        positions_b=positions_b[differ],
        outcomes=differing_outcomes,
        counts=counts,
        deltas=deltas,
        confidence=confidence,
    )


def _numeric(table: ItemTable, name: str) -> bool:
    kind = table.types.get(name)
    return kind is not None and (pa.types.is_integer(kind) or pa.types.is_floating(kind))


def paired_number_columns(a: ItemTable, b: ItemTable) -> list[str]:
    """The numeric per-item columns both tables hold that are compared pair by pair."""
    names = [name for name in a.columns if name.endswith("error")] + list(PAIRED_NUMBERS)
    return [name for name in dict.fromkeys(names) if _numeric(a, name) and _numeric(b, name)]


def compare_tables(
    a: ItemTable,
    review_a: Review,
    b: ItemTable,
    review_b: Review,
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Comparison:
    """Compare two runs' per-item tables (reading only the columns compared).

    Raises:
        ValueError: A table has no ``id`` column, or a review names no verdict column.
    """
    verdicts = []
    for table, review in ((a, review_a), (b, review_b)):
        if "id" not in table.types:
            raise ValueError(f"{table.path}: the item table has no 'id' column")
        if not review.verdict or review.verdict not in table.types:
            raise ValueError(f"{table.path}: the run says no verdict column to compare")
        verdicts.append(table.column(review.verdict))
    agrees_a = a.column(review_a.agrees) if review_a.agrees and review_a.agrees in a.types else None
    agrees_b = b.column(review_b.agrees) if review_b.agrees and review_b.agrees in b.types else None
    if agrees_a is None or agrees_b is None:
        agrees_a = agrees_b = None
    numbers = {name: (a.column(name), b.column(name)) for name in paired_number_columns(a, b)}
    return compare_columns(
        a.column("id"),
        b.column("id"),
        verdicts[0],
        verdicts[1],
        agrees_a,
        agrees_b,
        numbers,
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
    )


def headline_deltas(
    metrics_a: Mapping[str, float], metrics_b: Mapping[str, float]
) -> list[tuple[str, float, float, float]]:
    """``(name, a, b, a - b)`` for each headline figure both runs' summaries hold (over each
    run's own items, so not paired; no interval)."""
    return [
        (name, metrics_a[name], metrics_b[name], metrics_a[name] - metrics_b[name])
        for name in metrics_a
        if name in metrics_b
    ]


def outcome_filter(comparison: Comparison, outcome: str | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The differing items with one outcome (all for ``None``): positions in A, in B, outcomes."""
    if outcome is None:
        return comparison.positions_a, comparison.positions_b, comparison.outcomes
    mask = comparison.outcomes == outcome
    return comparison.positions_a[mask], comparison.positions_b[mask], comparison.outcomes[mask]
