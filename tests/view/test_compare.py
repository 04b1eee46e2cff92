"""Comparing two runs: differing items, who agrees with gold, paired intervals and tests."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from scipy import stats
from view_support import LABEL_REVIEW, write_table

from jurist.metrics.significance import bootstrap_ci
from jurist.report.review import Review
from jurist.view.compare import (
    bootstrap_interval,
    compare_columns,
    compare_tables,
    right_wrong_interval,
)
from jurist.view.table import ItemTable

# Ten items; gold, A's verdict and B's verdict. B lacks i9 and has an extra item x.
GOLD = ["pos", "neg", "pos", "neg", "mixed", "pos", "neg", "pos", "neg", "pos"]
A = ["pos", "neg", "neg", "neg", "pos", "pos", "neg", "pos", None, "pos"]
B = ["pos", "pos", "pos", "neg", "neg", "pos", "neg", "neg", "neg"]


def columns(verdicts, ids):
    golds = dict(zip([f"i{i}" for i in range(10)], GOLD, strict=True))
    agrees = [
        None if v is None or golds.get(i) is None else v == golds[i]
        for i, v in zip(ids, verdicts, strict=True)
    ]
    return pa.array(ids), pa.array(verdicts, type=pa.string()), pa.array(agrees, type=pa.bool_())


def test_differing_items_and_who_is_right_by_hand():
    ids_a, verdict_a, agrees_a = columns(A, [f"i{i}" for i in range(10)])
    ids_b, verdict_b, agrees_b = columns([*B, "pos"], [f"i{i}" for i in range(9)] + ["x"])
    result = compare_columns(ids_a, ids_b, verdict_a, verdict_b, agrees_a, agrees_b, n_resamples=500)
    assert (result.common, result.only_a, result.only_b) == (9, 1, 1)
    # i1: A right; i2: B right; i4: neither; i7: A right; i8: A failed, B right.
    differing = [f"i{p}" for p in result.positions_a]
    assert differing == ["i1", "i2", "i4", "i7", "i8"]
    assert list(result.outcomes) == ["A", "B", "neither", "A", "no gold"]
    assert result.counts == {"A": 2, "B": 1, "neither": 1, "both": 0, "no gold": 1}
    accuracy = result.deltas[0]
    # Paired items with gold in both: i0..i7 (i8 failed in A). A right on 6 of 8 (wrong on
    # i2, i4), B right on 5 of 8 (wrong on i1, i4, i7).
    assert accuracy.name == "accuracy" and accuracy.n == 8
    assert (accuracy.a, accuracy.b, accuracy.delta) == (
        pytest.approx(6 / 8),
        pytest.approx(5 / 8),
        pytest.approx(1 / 8),
    )
    # McNemar: b = 2 (A alone right), c = 1: p = 2 * (C(3,0) + C(3,1)) / 8 = 1.
    assert accuracy.p_value == pytest.approx(stats.binomtest(2, 3, 0.5).pvalue) == pytest.approx(1.0)
    assert accuracy.low <= accuracy.delta <= accuracy.high


def test_missing_verdicts_on_both_sides_are_not_a_difference():
    ids = pa.array(["a", "b"])
    verdicts = pa.array([None, "x"], type=pa.string())
    result = compare_columns(ids, ids, verdicts, verdicts)
    assert result.differing == 0 and result.deltas == []


def test_numeric_columns_get_wilcoxon_and_the_bootstrap_of_the_differences():
    rng = np.random.default_rng(3)
    errors_a = rng.integers(0, 4, size=60).astype(float)
    errors_b = np.clip(errors_a + rng.integers(-1, 3, size=60), 0, None)
    ids = pa.array([f"i{i}" for i in range(60)])
    verdicts = pa.array(["v"] * 60)
    result = compare_columns(
        ids,
        ids,
        verdicts,
        verdicts,
        numbers={"abs_error": (pa.array(errors_a), pa.array(errors_b))},
        n_resamples=1000,
    )
    (delta,) = result.deltas
    assert delta.delta == pytest.approx(float((errors_a - errors_b).mean()))
    assert delta.p_value == pytest.approx(stats.wilcoxon(errors_a, errors_b).pvalue, rel=1e-6)
    reference = bootstrap_ci(list(errors_a), list(errors_b), n_resamples=1000, seed=0)
    assert (delta.low, delta.high) == (
        pytest.approx(reference["ci_lower"]),
        pytest.approx(reference["ci_upper"]),
    )


def test_the_chunked_bootstrap_is_bootstrap_ci(monkeypatch):
    import jurist.view.compare as compare

    differences = np.random.default_rng(1).normal(size=37)
    reference = bootstrap_ci(list(differences), [0.0] * 37, n_resamples=300, seed=5, confidence=0.9)
    monkeypatch.setattr(compare, "_DRAWS_PER_CHUNK", 37 * 7)  # 7 resamples per chunk
    low, high = bootstrap_interval(differences, n_resamples=300, seed=5, confidence=0.9)
    assert (low, high) == (pytest.approx(reference["ci_lower"]), pytest.approx(reference["ci_upper"]))


def test_the_right_wrong_interval_matches_resampling_the_pairs():
    # 200 pairs: 30 only A right, 12 only B right. Resampling pairs (bootstrap_ci) and drawing
    # the counts (multinomial) are the same distribution; with 20,000 resamples each, the
    # percentiles agree to well within one pair's step (1/200).
    differences = [1.0] * 30 + [-1.0] * 12 + [0.0] * 158
    reference = bootstrap_ci(differences, [0.0] * 200, n_resamples=20_000, seed=2)
    low, high = right_wrong_interval(30, 12, 200, n_resamples=20_000, seed=2)
    assert low == pytest.approx(reference["ci_lower"], abs=0.006)
    assert high == pytest.approx(reference["ci_upper"], abs=0.006)


def test_compare_tables_reads_the_review_columns(tmp_path):
    def table(name, verdicts):
        rows = [
            {
                "id": f"i{i}",
                "verdict": v,
                "gold": g,
                "correct": None if v is None else v == g,
                "cost": 0.01 * i,
            }
            for i, (v, g) in enumerate(zip(verdicts, GOLD, strict=False))
        ]
        return ItemTable(write_table(tmp_path / f"{name}.parquet", rows, row_group_size=4))

    result = compare_tables(table("a", A), LABEL_REVIEW, table("b", B), LABEL_REVIEW, n_resamples=200)
    assert [delta.name for delta in result.deltas] == ["accuracy", "cost"]
    assert result.deltas[1].delta == pytest.approx(0.0)
    with pytest.raises(ValueError, match="no verdict column"):
        compare_tables(table("c", A), Review(), table("d", B), LABEL_REVIEW)
