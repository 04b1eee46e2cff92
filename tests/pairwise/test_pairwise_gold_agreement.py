"""Accuracy, Cohen's kappa, bootstrap intervals and two-order agreement with gold labels."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from jurist.metrics.gold_agreement import (
    accuracy,
    agreement_by_label,
    bootstrap_ci,
    cohens_kappa,
    confusion_matrix,
    kappa_from_confusion,
)
from jurist.metrics.pairwise.subeval import gold_agreement, pair_verdicts


def test_accuracy_and_kappa_by_hand() -> None:
    gold, predicted = ["1", "1", "2", "2"], ["1", "2", "2", "2"]
    assert accuracy(gold, predicted) == 0.75
    # p_o = 3/4; p_e = 1/2 * 1/4 + 1/2 * 3/4 = 1/2; kappa = (3/4 - 1/2) / (1 - 1/2) = 1/2
    assert cohens_kappa(gold, predicted) == pytest.approx(0.5)
    assert cohens_kappa(gold, gold) == 1.0
    assert math.isnan(cohens_kappa(["1", "1"], ["1", "1"]))
    assert math.isnan(accuracy([], []))
    with pytest.raises(ValueError, match="differ in length"):
        accuracy(["1"], [])


def test_kappa_is_vectorized_over_confusion_matrices() -> None:
    one = confusion_matrix(["1", "1", "2", "2"], ["1", "2", "2", "2"], ["1", "2"])
    stack = np.stack([one, np.zeros_like(one)])
    values = kappa_from_confusion(stack)
    assert values[0] == pytest.approx(0.5) and math.isnan(values[1])
    with pytest.raises(ValueError, match="not in labels"):
        confusion_matrix(["1"], ["tie"], ["1", "2"])


def test_bootstrap_interval() -> None:
    counts = np.array([[1, 1]] * 30 + [[0, 1]] * 10, dtype=float)

    def rate(c: np.ndarray) -> np.ndarray:
        return c[:, 0] / c[:, 1]

    low, high = bootstrap_ci(counts, rate, n_resamples=2000, seed=1)
    assert 0.6 < low < 0.75 < high < 0.9
    assert bootstrap_ci(counts, rate, n_resamples=2000, seed=1) == (low, high)
    assert all(math.isnan(x) for x in bootstrap_ci(np.zeros((0, 2)), rate))
    assert all(math.isnan(x) for x in bootstrap_ci(counts, rate, n_resamples=0))


def test_agreement_by_label() -> None:
    table = agreement_by_label(["1", "1", "2"], ["1", "2", "2"])
    rows = {(r.side, r.label): (r.n, r.agreed, r.rate) for r in table.itertuples()}
    assert rows[("gold", "1")] == (2, 1, 0.5)
    assert rows[("judge", "2")] == (2, 1, 0.5)


def test_two_order_verdicts_and_gold_agreement() -> None:
    pairs = pd.DataFrame(
        {
            "gold": ["1", "2", "1", "2", "1"],
            "choice_12": ["A", "B", "A", "A", None],
            "choice_21": ["B", "A", "A", "B", "B"],
            "dataset": ["x", "x", "x", "y", "y"],
        }
    )
    judged = pair_verdicts(pairs)
    assert list(judged["verdict"]) == ["1", "2", "tie", "1", None]
    assert list(judged["judged_21"]) == ["1", "2", "2", "1", "1"]
    table = gold_agreement(pairs, n_resamples=0).set_index("dataset")
    assert list(table.index) == ["x", "y", "all"]
    assert table.loc["x", "accuracy"] == pytest.approx(2 / 3)
    assert table.loc["x", "order_accuracy"] == pytest.approx(5 / 6)
    assert table.loc["x", "consistency_rate"] == pytest.approx(2 / 3)
    assert table.loc["y", "complete"] == 1 and table.loc["y", "coverage"] == 0.5
    assert table.loc["y", "accuracy"] == 0.0
    assert table.loc["y", "order_accuracy"] == pytest.approx(1 / 3)  # only the lone second order is right
    assert table.loc["all", "pairs"] == 5
    with pytest.raises(ValueError, match="gold labels"):
        gold_agreement(pairs.assign(gold="3"), n_resamples=0)
