"""Win rates, consistency and length metrics on hand-built judged records."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from jurist.metrics.pairwise.subeval import (
    consistency_stats,
    consistent_rows,
    judgement_counts,
    length_bias,
    length_stats,
    pair_table,
    win_rates,
    win_rates_with_ties,
)

REF, M = "ref", "m"


def both(index: str, first: str | None, second: str | None, task: str = "uml_class-general") -> list[dict]:
    """Both orders of one comparison: (ref, m) chose ``first``, (m, ref) chose ``second``."""
    return [
        {"index": index, "A": REF, "B": M, "choice": first, "task": task},
        {"index": index, "A": M, "B": REF, "choice": second, "task": task},
    ]


def records(*groups: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([row for group in groups for row in group])


def row(table: pd.DataFrame, group: str = "Overall", model: str = M, opponent: str = REF) -> pd.Series:
    column = "group" if "group" in table.columns else "metric"
    found = table[(table[column] == group) & (table["model"] == model) & (table["opponent"] == opponent)]
    assert len(found) == 1, found
    return found.iloc[0]


def test_two_options_consistent_only_and_inconsistent_as_tie() -> None:
    data = records(both("q1", "B", "A"), both("q2", "B", "A"), both("q3", "A", "A"))
    old = row(win_rates(data, n_resamples=0))
    assert (old.win, old.lose, old.both_good, old.both_fail, old.n) == (4, 0, 0, 0, 4)
    assert old.win_rate == old.win_both_good_rate == old.win_half_tie_rate == 1.0
    assert row(win_rates(data, n_resamples=0), model=REF, opponent=M).win_rate == 0.0

    new = row(win_rates_with_ties(data, n_resamples=0))
    assert (new.win, new.tie, new.total) == (4, 2, 6)
    assert new.win_rate_with_tie == pytest.approx(5 / 6)
    assert new.win_rate_without_tie == 1.0
    reverse = row(win_rates_with_ties(data, n_resamples=0), model=REF, opponent=M)
    assert reverse.win_rate_with_tie == pytest.approx(1 / 6)
    assert reverse.win_rate_without_tie == 0.0


def test_consistency_and_position_preference() -> None:
    data = records(
        both("q1", "B", "A"),
        both("q2", "A", "B"),
        both("q3", "A", "A"),
        both("q4", "B", "B"),
        both("q5", "A", "A"),
    )
    stats = consistency_stats(data)
    assert (stats.extracted_rows, stats.consistent_rows) == (10, 4)
    assert stats.row_consistency_rate == pytest.approx(0.4)
    assert (stats.complete_pairs, stats.consistent_pairs, stats.inconsistent_pairs) == (5, 2, 3)
    assert stats.consistency_rate == pytest.approx(0.4)
    assert (stats.first_position_wins, stats.second_position_wins) == (4, 2)
    assert stats.first_position_rate == pytest.approx(4 / 6)
    statuses = pair_table(data).set_index("index")["status"].to_dict()
    assert statuses == {
        "q1": "consistent",
        "q2": "consistent",
        "q3": "inconsistent",
        "q4": "inconsistent",
        "q5": "inconsistent",
    }


def test_three_options_both_good() -> None:
    data = records(both("q1", "B", "A"), both("q2", "C", "C"), both("q3", "A", "B"))
    old = row(win_rates(data, n_resamples=0))
    assert (old.win, old.lose, old.both_good, old.both_fail) == (2, 2, 2, 0)
    assert old.win_rate == 0.5
    assert old.win_both_good_rate == pytest.approx(4 / 6)
    assert old.win_half_tie_rate == pytest.approx(3 / 6)
    assert consistency_stats(data).consistency_rate == 1.0


def test_four_options_both_good_and_both_fail() -> None:
    data = records(
        both("q1", "B", "A"),
        both("q2", "C", "C"),
        both("q3", "D", "D"),
        both("q4", "A", "B"),
        both("q5", "B", "A"),
    )
    old = row(win_rates(data, n_resamples=0))
    assert (old.win, old.lose, old.both_good, old.both_fail, old.n) == (4, 2, 2, 2, 10)
    assert old.win_rate == pytest.approx(4 / 6)
    # SubEval's documented formulas: both_fail is not in the denominator of win+both good.
    assert old.win_both_good_rate == pytest.approx(6 / 8)
    assert old.win_half_tie_rate == pytest.approx((4 + 2) / 10)

    new = row(win_rates_with_ties(data, n_resamples=0))
    assert (new.win, new.tie, new.total) == (4, 2, 10)  # D,D counts in the total only
    assert new.win_rate_with_tie == pytest.approx(0.5)
    assert new.win_rate_without_tie == pytest.approx(0.5)
    reference = row(win_rates_with_ties(data, n_resamples=0), model=REF, opponent=M)
    assert reference.win_rate_with_tie == pytest.approx(0.3)
    assert reference.win_rate_without_tie == pytest.approx(0.25)


def test_zero_denominators_are_nan_not_zero() -> None:
    only_inconsistent = records(both("q1", "A", "A"))
    assert win_rates(only_inconsistent, n_resamples=0).empty
    new = row(win_rates_with_ties(only_inconsistent, n_resamples=0))
    assert new.win_rate_with_tie == 0.5
    assert math.isnan(new.win_rate_without_tie)

    only_both_fail = records(both("q1", "D", "D"))
    old = row(win_rates(only_both_fail, n_resamples=0))
    assert math.isnan(old.win_rate) and math.isnan(old.win_both_good_rate)
    assert old.win_half_tie_rate == 0.5
    assert math.isnan(old.win_rate_low) and math.isnan(old.win_rate_high)

    only_both_good = records(both("q1", "C", "C"))
    new = row(win_rates_with_ties(only_both_good, n_resamples=0))
    assert new.win_rate_with_tie == 0.5
    assert math.isnan(new.win_rate_without_tie)

    nothing = records(both("q1", None, None))
    assert win_rates(nothing).empty and win_rates_with_ties(nothing).empty
    stats = consistency_stats(nothing)
    assert math.isnan(stats.consistency_rate) and math.isnan(stats.first_position_rate)
    assert math.isnan(stats.row_consistency_rate)
    assert math.isnan(judgement_counts(pd.DataFrame(columns=["index", "A", "B", "choice"])).extraction_rate)


def test_unpaired_judgements_count_as_consistent_like_subeval() -> None:
    data = records(both("q1", "B", None), both("q2", "B", "A"))
    data = pd.concat(
        [data, pd.DataFrame([{"index": "q3", "A": M, "B": REF, "choice": "A"}])], ignore_index=True
    )
    flags = consistent_rows(data).tolist()
    assert flags == [True, False, True, True, True]
    stats = consistency_stats(data)
    assert (stats.extracted_rows, stats.consistent_rows, stats.complete_pairs) == (4, 4, 1)
    statuses = pair_table(data).set_index("index")["status"].to_dict()
    assert statuses == {"q1": "one_order", "q2": "consistent", "q3": "one_order"}
    assert row(win_rates(data, n_resamples=0)).win == 4


def test_extraction_counts_failures_and_exact_matches() -> None:
    data = pd.DataFrame(
        [
            {"index": "q1", "A": REF, "B": M, "choice": "A", "status": "ok"},
            {"index": "q1", "A": M, "B": REF, "choice": None, "status": "failed"},
            {"index": "q2", "A": REF, "B": M, "choice": None, "status": "exact_match"},
            {"index": "q2", "A": M, "B": REF, "choice": None, "status": "exact_match"},
            {"index": "q3", "A": REF, "B": M, "choice": None, "status": "ok"},
        ]
    )
    counts = judgement_counts(data)
    assert (counts.comparisons, counts.failed, counts.exact_matches, counts.judged, counts.extracted) == (
        5,
        1,
        2,
        3,
        1,
    )
    assert counts.extraction_rate == pytest.approx(1 / 3)
    assert pair_table(data).set_index("index")["status"].to_dict() == {
        "q1": "one_order",
        "q2": "exact_match",
        "q3": "not_extracted",
    }


def test_groups_per_design_file_task_and_pooled_metric() -> None:
    data = records(
        both("a", "B", "A", task="uml_class-general"),
        both("b", "A", "B", task="uml_class-faithfulness"),
        both("c", "B", "A", task="architecture_design-general"),
    )
    old = win_rates(data, reference_model=REF, n_resamples=0)
    assert set(old["opponent"]) == {REF}
    assert list(old["group"]) == [
        "Overall",
        "architecture_design",
        "uml_class",
        "architecture_design-general",
        "uml_class-faithfulness",
        "uml_class-general",
    ]
    rates = dict(zip(old["group"], old["win_rate"], strict=True))
    assert rates["Overall"] == pytest.approx(2 / 3)
    assert rates["uml_class"] == 0.5 and rates["architecture_design"] == 1.0
    assert rates["uml_class-faithfulness"] == 0.0
    new = win_rates_with_ties(data, reference_model=REF, n_resamples=0)
    assert list(new["metric"]) == ["Overall", "faithfulness", "general"]
    assert dict(zip(new["metric"], new["win_rate_with_tie"], strict=True))["general"] == 1.0


def test_bootstrap_intervals_bracket_the_estimate_and_are_seeded() -> None:
    data = records(*(both(f"q{i}", "B", "A") for i in range(6)), *(both(f"r{i}", "A", "B") for i in range(4)))
    first = row(win_rates(data, n_resamples=500, seed=3))
    again = row(win_rates(data, n_resamples=500, seed=3))
    assert first.win_rate == pytest.approx(0.6)
    assert 0.0 <= first.win_rate_low <= first.win_rate <= first.win_rate_high <= 1.0
    assert first.win_rate_low < first.win_rate_high
    assert (first.win_rate_low, first.win_rate_high) == (again.win_rate_low, again.win_rate_high)


def test_bad_records_raise() -> None:
    with pytest.raises(ValueError, match="lack the column"):
        win_rates(pd.DataFrame({"index": ["q"], "A": [REF], "B": [M]}))
    with pytest.raises(ValueError, match="more than once"):
        consistency_stats(records(both("q1", "A", "B"), both("q1", "A", "B")))
    # A self-comparison may occur twice (its two orders share one key), not three times.
    assert len(pair_table(pd.DataFrame([{"index": "q", "A": M, "B": M, "choice": "A"}] * 2))) == 1
    with pytest.raises(ValueError, match="more than once"):
        pair_table(pd.DataFrame([{"index": "q", "A": M, "B": M, "choice": "A"}] * 3))
    with pytest.raises(ValueError, match="choice must be"):
        pair_table(pd.DataFrame([{"index": "q", "A": REF, "B": M, "choice": "E"}]))


def test_length_stats_and_length_bias() -> None:
    data = records(both("q1", "B", "A"), both("q2", "B", "A"), both("q3", "A", "A"))
    data["answer1"] = ["xx", "xxxx", "xxxx", "xxxxxx", "xx", "xxxxxx"]
    data["answer2"] = ["xxxx", "xx", "xxxxxx", "xxxx", "xxxxxx", "xx"]
    stats = length_stats(data)
    assert list(stats["model"]) == [REF, M]
    assert stats.set_index("model").loc[REF, "mean"] == pytest.approx((2 + 2 + 4 + 4 + 2 + 2) / 6)
    m_lengths = [4, 4, 6, 6, 6, 6]
    assert stats.set_index("model").loc[M, "std"] == pytest.approx(pd.Series(m_lengths).std(ddof=0))
    bias = length_bias(data, n_resamples=0)
    # q1, q2: the longer (m's) answer always wins; q3 (A, A): first order picks the
    # shorter, second order the longer.
    assert (bias.decisive, bias.longer_wins) == (6, 5)
    assert bias.rate == pytest.approx(5 / 6)
