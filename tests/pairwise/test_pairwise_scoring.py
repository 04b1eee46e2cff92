"""Scoring judged records from any judge: parsing, reference inference and input errors."""

from __future__ import annotations

import pandas as pd
import pytest

from jurist.errors import InputError
from jurist.tasks.pairwise import FAIL_MESSAGE, infer_reference_model, records_from_table
from jurist.tasks.pairwise.scoring import score_records


def judged(pairs: list[tuple[str, str, str, str | None, str | None]]) -> pd.DataFrame:
    """Records from (index, model 1, model 2, choice in order 1-2, choice in order 2-1)."""
    rows = []
    for index, first, second, choice_12, choice_21 in pairs:
        rows.append({"cmp_index": f"{index};{first};{second}", "A": first, "B": second, "choice": choice_12})
        rows.append({"cmp_index": f"{index};{second};{first}", "A": second, "B": first, "choice": choice_21})
    return pd.DataFrame(rows)


def with_index(records: pd.DataFrame) -> pd.DataFrame:
    return records.assign(index=records["cmp_index"].str.split(";").str[0])


def test_scores_records_that_already_have_choices() -> None:
    records = judged([("q1", "ref", "m", "B", "A"), ("q2", "ref", "m", "A", "A")])
    scores = score_records(records, judge_name="my-judge", n_resamples=0)
    assert (scores.judge, scores.reference_model, scores.num_options) == ("my-judge", "ref", 4)
    assert scores.consistency.consistency_rate == 0.5
    assert scores.length_stats.empty and scores.length_bias.decisive == 0


def test_reference_model_inference() -> None:
    against_ref = judged(
        [("q", "ref", "a", "A", "B"), ("q", "ref", "b", "A", "B"), ("r", "ref", "a", "A", "B")]
    )
    assert infer_reference_model(with_index(against_ref)) == "ref"
    all_pairs = judged([("q", "a", "b", "A", "B"), ("q", "a", "c", "A", "B"), ("q", "b", "c", "A", "B")])
    assert infer_reference_model(with_index(all_pairs)) is None
    assert score_records(all_pairs, n_resamples=0).reference_model is None
    mixed_order = judged([("q", "a", "b", "A", "B"), ("r", "b", "a", "A", "B")])
    assert infer_reference_model(with_index(mixed_order)) is None
    assert score_records(mixed_order, reference_model="b", n_resamples=0).reference_model == "b"


def test_bad_judged_records_are_input_errors() -> None:
    twice = judged([("q1", "ref", "m", "B", "A"), ("q1", "ref", "m", "B", "A")])
    with pytest.raises(InputError, match="more than once"):
        score_records(twice, n_resamples=0)
    with pytest.raises(InputError) as caught:
        score_records(pd.DataFrame({"A": ["a"], "B": ["b"], "choice": ["A"]}))
    assert caught.value.field == "index"
    with pytest.raises(InputError) as caught:
        score_records(pd.DataFrame({"cmp_index": ["q;a;c"], "A": ["a"], "B": ["b"], "choice": ["A"]}))
    assert (caught.value.line, caught.value.field) == (1, "cmp_index")
    with pytest.raises(InputError, match="unknown reference model"):
        score_records(judged([("q", "a", "b", "A", "B")]), reference_model="c")


def test_statuses_and_choices_from_raw_answers() -> None:
    table = pd.DataFrame(
        {
            "A": ["a"] * 5,
            "B": ["b"] * 5,
            "judgement": ["Choice: A\nReason: x", "EM", f"Error: {FAIL_MESSAGE}", "", "Choice: C"],
        }
    )
    records = records_from_table(table, num_options=2)
    assert list(records["status"]) == ["ok", "exact_match", "failed", "failed", "ok"]
    assert list(records["choice"]) == ["A", None, None, None, None]
