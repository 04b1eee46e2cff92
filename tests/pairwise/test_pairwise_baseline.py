"""The offline pairwise judge, and its runs of comparisons and pairs through the judging loop."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import jurist
from jurist.datasets.pairwise.tables import load_pairs, load_subeval_table
from jurist.programs.pairwise.baseline import PairwiseBaseline
from jurist.programs.pairwise.program import PairwiseJudgeProgram
from jurist.signatures.pairwise import INPUT_NAMES, PairwiseInputs
from jurist.tasks.pairwise.scoring import score_records

DATA = Path(__file__).parents[1] / "data"
SAMPLE = DATA / "llmbar" / "natural_sample.json"
MIRROR = {"A": "B", "B": "A", "C": "C", "D": "D"}

QUESTION = "Which gas do plants absorb for photosynthesis?"
GOOD = "Plants absorb carbon dioxide gas for photosynthesis."
BAD = "Bananas are yellow."


def test_is_deterministic_and_symmetric_in_the_order() -> None:
    judge = PairwiseBaseline()
    for row in load_pairs(SAMPLE).itertuples():
        first = judge(question=row.question, response_1=row.response_1, response_2=row.response_2)
        again = judge(question=row.question, response_1=row.response_1, response_2=row.response_2)
        swapped = judge(question=row.question, response_1=row.response_2, response_2=row.response_1)
        assert first == again
        inputs = PairwiseInputs(question=row.question, response_1=row.response_1, response_2=row.response_2)
        assert judge.judge(inputs) == first and judge.judge(inputs.swapped()) == swapped
        scores = judge.scores(inputs)
        if (scores[0].coverage, scores[0].cosine) != (scores[1].coverage, scores[1].cosine):
            assert swapped.choice == MIRROR[first.choice]  # type: ignore[index]


def test_two_options_prefer_the_closer_response() -> None:
    judge = PairwiseBaseline()
    assert judge(question=QUESTION, response_1=GOOD, response_2=BAD).choice == "A"
    assert judge(question=QUESTION, response_1=BAD, response_2=GOOD).choice == "B"
    tie = judge(question=QUESTION, response_1=BAD, response_2=BAD)
    assert tie.choice == "A"  # an exact tie is position 1, so both orders disagree
    result = judge(question=QUESTION, response_1=GOOD, response_2=BAD)
    assert "question and guidance" in result.reason and result.reason.startswith("1. Response 1 covers")


def test_reference_answer_takes_precedence() -> None:
    judge = PairwiseBaseline()
    kwargs = {"question": QUESTION, "response_1": GOOD, "response_2": "Oxygen is released; sugar is made."}
    assert judge(**kwargs).choice == "A"
    with_reference = judge(**kwargs, reference_answer="Oxygen is released and sugar is made.")
    assert with_reference.choice == "B"
    assert "reference answer" in with_reference.reason


def test_three_and_four_options() -> None:
    judge = PairwiseBaseline(good_min_coverage=0.5, tie_margin=0.1)
    assert (
        judge(question=QUESTION, response_1=GOOD, response_2=GOOD + " Indeed.", num_options=3).choice == "C"
    )
    assert judge(question=QUESTION, response_1=GOOD, response_2=BAD, num_options=3).choice == "A"
    assert judge(question=QUESTION, response_1=GOOD, response_2=GOOD, num_options=4).choice == "C"
    assert judge(question=QUESTION, response_1=BAD, response_2=BAD, num_options=4).choice == "D"
    assert judge(question=QUESTION, response_1=BAD, response_2=GOOD, num_options=4).choice == "B"
    with pytest.raises(ValueError):
        judge(question=QUESTION, response_1=GOOD, response_2=BAD, num_options=5)


def test_a_baseline_run_holds_a_scorable_record_table(tmp_path: Path) -> None:
    table = load_subeval_table(DATA / "devbench-subeval" / "examples" / "DevBench_projects_example.xlsx")
    table["answer-copy"] = table["answer-gpt-4-0613"]
    data = tmp_path / "table.jsonl"
    table.to_json(data, orient="records", lines=True)
    options = {"reference_model": "gpt-4-0613", "compare": ["gpt-4-0613", "gpt-4-0125-preview", "copy"]}
    jurist.judge("pairwise", data, out=tmp_path / "run", options={**options, "resamples": 0}, progress=False)
    record_file = tmp_path / "run" / "record_baseline_2.tsv"
    records = pd.read_csv(record_file, sep="\t")
    assert list(records.columns)[-1] == "baseline"
    exact = int((records["baseline"] == "EM").sum())
    assert exact == 2 * len(table)  # copy against gpt-4-0613, in both orders: never judged
    scores = score_records(record_file, n_resamples=0)
    assert (scores.reference_model, scores.counts.exact_matches) == ("gpt-4-0613", exact)
    assert scores.counts.extracted == scores.counts.judged == len(records) - exact
    assert set(scores.win_rates_with_ties["model"]) == {"gpt-4-0613", "gpt-4-0125-preview"}


def test_pairs_judged_in_both_orders_and_their_agreement(tmp_path: Path) -> None:
    run = jurist.judge(
        "pairwise-gold", SAMPLE, out=tmp_path / "run", options={"resamples": 100}, progress=False
    )
    result = run.scores.extra["agreement"]
    judged = result.judged
    assert judged["judgement_12"].str.startswith("Choice: ").all()
    assert set(judged["choice_12"]) | set(judged["choice_21"]) <= {"A", "B"}
    row = result.agreement.iloc[0]
    assert (row["dataset"], row["pairs"], row["complete"]) == ("natural_sample", 12, 12)
    for name in ("accuracy", "order_accuracy", "consistency_rate"):
        assert 0.0 <= row[name] <= 1.0
    assert row["accuracy_low"] <= row["accuracy"] <= row["accuracy_high"]
    assert set(result.by_label["side"]) == {"gold", "judge"}


def test_one_input_type_for_every_pairwise_judge() -> None:
    # The baseline, the LLM program and the runner's items all take PairwiseInputs' fields,
    # which are the input fields of the judge's signature.
    inputs = PairwiseInputs(question=QUESTION, response_1=GOOD, response_2=BAD, reference_answer=GOOD)
    assert tuple(inputs.as_inputs()) == INPUT_NAMES
    assert set(PairwiseJudgeProgram(3).choose.signature.input_fields) == set(INPUT_NAMES)
    assert inputs.swapped().swapped() == inputs
    assert (inputs.swapped().response_1, inputs.swapped().response_2) == (BAD, GOOD)
    assert PairwiseBaseline()(**inputs.as_inputs(), num_options=2).choice == "A"
    with pytest.raises(TypeError):
        PairwiseBaseline()(question=QUESTION, response_1=GOOD, response_two=BAD)
