"""Count rows held as one code per item give the bootstrap intervals of the dense per-item
matrix bit for bit (same seed, same draws), for every kind of cells a YAML task resamples."""

from __future__ import annotations

import numpy as np
import pytest

from jurist.metrics import ordinal, verdicts
from jurist.metrics._arrays import DRAWS_PER_CHUNK
from jurist.metrics.count_codes import CountCodes, count_rows, summed_rows
from jurist.metrics.gold_agreement import auroc_from_counts, bootstrap_ci, bootstrap_cis, kappa_from_confusion
from jurist.tasks.calibration_rows import bootstrap

SEEDS = (0, 1, 7, 2024)
N = 1_500  # several chunks of resamples: DRAWS_PER_CHUNK // N < 1000
assert DRAWS_PER_CHUNK // N < 1000


def _both(dense: np.ndarray, coded: CountCodes, statistics: list, seed: int) -> None:
    """The coded form stands for ``dense`` and gives its intervals exactly, at every seed."""
    assert np.array_equal(coded.dense(), dense)
    assert np.array_equal(summed_rows(coded), dense.sum(axis=0, keepdims=True))
    found = bootstrap_cis(coded, statistics, seed=seed)
    expected = bootstrap_cis(dense, statistics, seed=seed)
    assert found == expected  # exact: not approximately
    assert all(np.isfinite(bound) for interval in found for bound in interval)


@pytest.mark.parametrize("seed", SEEDS)
def test_confusion_codes_give_the_one_hot_intervals(seed: int) -> None:
    rng = np.random.default_rng(seed)
    labels = ["a", "b", "c", "d"]
    gold = rng.choice(labels, N).tolist()
    judged = [g if rng.random() < 0.6 else str(rng.choice(labels)) for g in gold]
    k = len(labels)

    def kappa(sums: np.ndarray) -> np.ndarray:
        return kappa_from_confusion(sums.reshape(-1, k, k))

    statistics = [verdicts.accuracy_from_confusion, kappa, verdicts.macro_f1_from_confusion]
    dense = verdicts.confusion_cells(gold, judged, labels)
    _both(dense, verdicts.confusion_codes(gold, judged, labels), statistics, seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_contingency_codes_give_the_one_hot_intervals(seed: int) -> None:
    rng = np.random.default_rng(seed)
    gold = rng.integers(1, 6, N).astype(float)
    gold[::5] += 0.5  # half points: values not on an integer grid
    judged = np.clip(np.round(gold) + rng.integers(-1, 2, N), 1, 5)
    values = sorted({*gold.tolist(), *judged.tolist()})
    statistics = [
        lambda c: ordinal.mean_absolute_error(c, values),
        lambda c: ordinal.pearson(c, values),
        ordinal.spearman,
        ordinal.kendall_tau_b,
        lambda c: ordinal.quadratic_weighted_kappa(c, values),
    ]
    dense = ordinal.contingency_cells(gold, judged, values)
    _both(dense, ordinal.contingency_codes(gold, judged, values), statistics, seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_binary_and_multilabel_codes_give_the_dense_intervals(seed: int) -> None:
    rng = np.random.default_rng(seed)
    gold, judged = rng.random(N) < 0.4, rng.random(N) < 0.5
    dense = verdicts.binary_counts(gold, judged)
    _both(dense, verdicts.binary_codes(gold, judged), [verdicts.binary_f1_from_counts], seed)
    many_gold, many_judged = rng.random((N, 3)) < 0.4, rng.random((N, 3)) < 0.5
    statistics = [verdicts.multilabel_micro_f1, verdicts.multilabel_macro_f1, verdicts.multilabel_exact_match]
    dense = verdicts.multilabel_cells(many_gold, many_judged)
    _both(dense, verdicts.multilabel_codes(many_gold, many_judged), statistics, seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_auroc_codes_give_the_one_hot_intervals(seed: int) -> None:
    rng = np.random.default_rng(seed)
    gold = rng.random(N) < 0.5
    confidence = np.round(np.clip(rng.normal(0.5 + 0.2 * gold, 0.2), 0, 1), 2)
    distinct, rank = np.unique(confidence, return_inverse=True)
    k = len(distinct)
    codes = CountCodes((~gold).astype(np.intp) * k + rank, 2 * k)
    dense = np.zeros((N, 2 * k))
    dense[np.arange(N), codes.codes] = 1.0
    _both(dense, codes, [auroc_from_counts], seed)


def test_codes_a_category_has_none_of_and_empty_codes() -> None:
    # Cells no item falls in sum to 0; no item at all gives no interval.
    codes = CountCodes(np.array([0, 5, 5, 0, 2]), 9)
    weights = np.array([[1, 2, 0, 1, 1], [0, 0, 5, 0, 0]])
    assert codes.resampled(weights).tolist() == (weights @ codes.dense()).tolist()
    empty = CountCodes(np.zeros(0, dtype=np.intp), 4)
    assert np.isnan(bootstrap_ci(empty, verdicts.binary_f1_from_counts)).all()
    assert all(np.isnan(value) for value in bootstrap(empty, verdicts.binary_f1_from_counts, _settings()))


def test_count_rows_codes_any_integer_matrix() -> None:
    matrix = np.array([[1, 0, 2], [0, 0, 1], [1, 0, 2], [3, 1, 0]])
    coded = count_rows(matrix)
    assert len(coded.rows) == 3 and np.array_equal(coded.dense(), matrix)
    assert bootstrap_cis(coded, [lambda s: s[:, 0] / s.sum(axis=1)], seed=3) == bootstrap_cis(
        matrix, [lambda s: s[:, 0] / s.sum(axis=1)], seed=3
    )


def test_a_code_outside_the_rows_is_refused() -> None:
    with pytest.raises(ValueError, match="codes must lie in"):
        CountCodes(np.array([0, 4]), 4)
    with pytest.raises(ValueError, match="columns"):
        CountCodes(np.array([0]), 3, np.zeros((1, 2)))


def test_calibration_bootstrap_takes_either_form() -> None:
    rng = np.random.default_rng(5)
    gold, judged = rng.integers(0, 3, 400), rng.integers(0, 3, 400)
    codes = CountCodes(gold * 3 + judged, 9)
    statistic = verdicts.accuracy_from_confusion
    assert bootstrap(codes, statistic, _settings()) == bootstrap(codes.dense(), statistic, _settings())


def _settings() -> dict[str, float]:
    return {"n_resamples": 200, "confidence": 0.95, "seed": 0}
