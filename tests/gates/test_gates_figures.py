"""The gates task's figures: the gates against their thresholds, trace outcomes and rates, as scored."""

from __future__ import annotations

from collections import Counter

import pytest

from figure_checks import by_title, check_figures
from jurist.errors import ConfigError
from jurist.metrics.gold_agreement import wilson_interval
from jurist.tasks import get_task

# Two answerable (q1, q2) and two unanswerable (q3, q4) questions (tests/gates/conftest.py).
TRACES = [
    {"qid": "q1", "answer": "X maps keys to values. citations: [p1#1]"},  # OK
    {"qid": "q2", "answer": "not in context"},  # OVER_REFUSAL
    {"qid": "q2", "answer": "Y explained. citations: [p9#9]"},  # ANS_NO_HIT
    {"qid": "q3", "answer": "Z is a letter. citations: [p1#1]"},  # HALLUCINATION
    {"qid": "q4", "answer": "not in context"},  # REFUSAL_OK
    {"qid": "q4", "answer": "not in context"},  # REFUSAL_OK
]


@pytest.fixture
def scored(gold_file, traces_file):
    task = get_task("gates")
    options = task.options({"gold": str(gold_file())})
    return task, options, task.score(traces_file(TRACES), options)


def test_gates_figure_is_the_gate_table(scored) -> None:
    task, options, scores = scored
    figures = by_title(check_figures(task.figures(scores, options)))
    assert [f.kind for f in figures.values()] == ["gates", "bars", "bars"]
    gates = figures["Gates"].data["gates"]
    table = scores.summary["gates"]
    assert [g["name"] for g in gates] == [f"{row['gate']} {row['metric']}" for row in table]
    for gate, row in zip(gates, table, strict=True):
        assert (gate["value"], gate["threshold"], gate["op"]) == (
            row["value"],
            row["threshold"],
            row["comparator"],
        )
        assert gate["passed"] is (not row["blocking"])
    failing = [row["gate"] for row in table if row["blocking"]]
    assert failing and f"failing: {', '.join(failing)}" in figures["Gates"].caption


def test_outcomes_count_the_traces_and_rates_carry_wilson_intervals(scored) -> None:
    task, options, scores = scored
    figures = by_title(task.figures(scores, options))
    outcomes = {bar["label"]: bar["value"] for bar in figures["Trace outcomes"].data["bars"]}
    assert outcomes == {
        "OK": 1,
        "REFUSAL_OK": 2,
        "OVER_REFUSAL": 1,
        "HALLUCINATION": 1,
        "ANS_NO_HIT": 1,
    }
    assert sum(outcomes.values()) == scores.summary["counts"]["traces_scored"] == len(TRACES)
    rates = {bar["label"]: bar for bar in figures["Rates"].data["bars"]}
    metrics = scores.summary["metrics"]
    assert set(rates) == {name for name, ratio in metrics.items() if ratio["value"] is not None}
    for name, bar in rates.items():
        ratio = metrics[name]
        assert bar["value"] == ratio["value"] == ratio["numerator"] / ratio["denominator"]
        assert (bar["low"], bar["high"]) == wilson_interval(ratio["numerator"], ratio["denominator"])


def test_review_is_the_per_question_outcome(scored) -> None:
    task, options, scores = scored
    review = task.review(options)
    assert review.verdict == "label" and review.gold is None and review.label is None
    assert all(column in scores.items for column in (review.verdict, *review.columns))
    labels = Counter(scores.items["label"].dropna())
    assert labels == {"OK": 1, "HALLUCINATION": 1, "REFUSAL_OK": 1}  # q2's traces differ: no label
    assert "label" not in task.verbs
    with pytest.raises(ConfigError, match="cannot export labels"):
        task.gold_rows(None, {}, options)
