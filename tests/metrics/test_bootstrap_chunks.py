"""Bootstraps drawn a chunk of resamples at a time give the intervals of all draws at once,
and several statistics share one set of draws without changing any interval."""

from __future__ import annotations

import numpy as np

from jurist.metrics import significance
from jurist.metrics._arrays import DRAWS_PER_CHUNK
from jurist.metrics.gold_agreement import bootstrap_ci, bootstrap_cis, kappa_from_confusion, without_noise


def _accuracy(sums: np.ndarray) -> np.ndarray:
    table = sums.reshape(-1, 3, 3)
    return np.trace(table, axis1=1, axis2=2) / table.sum(axis=(1, 2))


def _kappa(sums: np.ndarray) -> np.ndarray:
    return kappa_from_confusion(sums.reshape(-1, 3, 3))


def _all_at_once(cells: np.ndarray, statistic, n_resamples: int, seed: int) -> tuple[float, float]:
    """The interval from one draw of every resample's weights (the whole matrix in memory),
    its bounds rounded as every interval is (12 decimals: no float noise)."""
    n = cells.shape[0]
    weights = np.random.default_rng(seed).multinomial(n, np.full(n, 1.0 / n), size=n_resamples)
    values = statistic(weights @ cells)
    tail = (1.0 - 0.95) / 2.0 * 100.0
    low, high = np.percentile(values[~np.isnan(values)], [tail, 100.0 - tail])
    return without_noise(float(low)), without_noise(float(high))


def test_chunked_bootstrap_equals_all_draws_at_once() -> None:
    rng = np.random.default_rng(4)
    n = 3_000  # DRAWS_PER_CHUNK // n resamples per chunk: several chunks
    assert DRAWS_PER_CHUNK // n < 1000
    agree = rng.random(n) < 0.7
    gold = rng.integers(0, 3, n)
    judged = np.where(agree, gold, rng.integers(0, 3, n))
    cells = np.eye(9)[gold * 3 + judged]
    for statistic in (_accuracy, _kappa):
        assert bootstrap_ci(cells, statistic, seed=11) == _all_at_once(cells, statistic, 1000, 11)
    shared = bootstrap_cis(cells, [_accuracy, _kappa], seed=11)
    assert shared == [bootstrap_ci(cells, _accuracy, seed=11), bootstrap_ci(cells, _kappa, seed=11)]
    assert np.isnan(bootstrap_cis(cells[:0], [_accuracy, _kappa])).all()


def test_paired_bootstrap_in_chunks_equals_all_draws_at_once() -> None:
    rng = np.random.default_rng(2)
    a, b = rng.random(700).tolist(), rng.random(700).tolist()
    result = significance.bootstrap_ci(a, b, n_resamples=5_000, seed=3)
    d = np.asarray(a) - np.asarray(b)
    means = d[np.random.default_rng(3).integers(0, d.size, size=(5_000, d.size))].mean(axis=1)
    alpha = 1.0 - 0.95
    low, high = np.percentile(means, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    assert (result["ci_lower"], result["ci_upper"]) == (float(low), float(high))
