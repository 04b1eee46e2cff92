"""McNemar's exact test of paired right/wrong, checked against SciPy's exact binomial test."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from jurist.metrics.significance import mcnemar_exact


def pairs(b: int, c: int, both_right: int = 0, both_wrong: int = 0) -> tuple[list[bool], list[bool]]:
    """Paired results with ``b`` items only A got right and ``c`` only B got right."""
    a = [True] * b + [False] * c + [True] * both_right + [False] * both_wrong
    other = [False] * b + [True] * c + [True] * both_right + [False] * both_wrong
    return a, other


@pytest.mark.parametrize(("b", "c"), [(1, 0), (0, 3), (5, 1), (3, 3), (10, 2), (7, 8), (0, 25), (40, 61)])
def test_p_value_is_scipys_exact_binomial_test(b, c):
    a, other = pairs(b, c, both_right=4, both_wrong=2)
    result = mcnemar_exact(a, other)
    assert (result["b"], result["c"], result["statistic"]) == (b, c, min(b, c))
    assert result["p_value"] == pytest.approx(stats.binomtest(b, b + c, 0.5).pvalue, rel=1e-10)


def test_hand_computed_value():
    # b = 6, c = 1: p = 2 * (C(7,0) + C(7,1)) / 2^7 = 16 / 128.
    a, other = pairs(6, 1, both_right=10)
    result = mcnemar_exact(a, other)
    assert result["p_value"] == pytest.approx(16 / 128)
    assert result["difference"] == pytest.approx((6 - 1) / 17)


def test_concordant_pairs_do_not_change_the_test():
    bare = mcnemar_exact(*pairs(9, 2))
    padded = mcnemar_exact(*pairs(9, 2, both_right=500, both_wrong=300))
    assert bare["p_value"] == pytest.approx(padded["p_value"], rel=1e-12)


def test_large_counts_stay_accurate():
    # 100k items: the tail is summed in log space, far from overflow, and still SciPy's value.
    a, other = pairs(26_000, 24_000, both_right=40_000, both_wrong=10_000)
    result = mcnemar_exact(a, other)
    expected = stats.binomtest(26_000, 50_000, 0.5).pvalue
    assert result["p_value"] == pytest.approx(expected, rel=1e-8)
    assert 0 < result["p_value"] < 1e-10


def test_random_paired_results_match_scipy():
    rng = np.random.default_rng(7)
    for size in (5, 30, 200):
        a = rng.random(size) < 0.7
        other = rng.random(size) < 0.5
        result = mcnemar_exact(list(a), list(other))
        n = result["b"] + result["c"]
        if n:
            assert result["p_value"] == pytest.approx(stats.binomtest(result["b"], n, 0.5).pvalue, rel=1e-10)


def test_every_small_table_against_exact_integer_sums():
    for b, c in itertools.product(range(8), repeat=2):
        if b + c == 0:
            continue
        n = b + c
        exact = min(1.0, 2 * sum(math.comb(n, k) for k in range(min(b, c) + 1)) / 2**n)
        assert mcnemar_exact(*pairs(b, c))["p_value"] == pytest.approx(exact, rel=1e-12)


def test_no_discordant_pair_has_no_p_value_and_bad_input_is_refused():
    assert mcnemar_exact([True, False], [True, False])["p_value"] is None
    with pytest.raises(ValueError, match="equal lengths"):
        mcnemar_exact([True], [True, False])
    with pytest.raises(ValueError, match="at least one"):
        mcnemar_exact([], [])
