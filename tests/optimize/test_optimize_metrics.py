"""The metric adapters in DSPy's contracts: scores, GEPA feedback, failures, registry, splits."""

from __future__ import annotations

import doctest
import json
from pathlib import Path
from typing import Any

import dspy
import pytest
from optimize_helpers import pairs_rows

import jurist.metrics.key_overlap
from jurist.errors import ConfigError, InputError
from jurist.judges.config import JudgeConfig
from jurist.metrics.key_overlap import key_overlap
from jurist.optimization import (
    GuardedProgram,
    JudgeMetric,
    MetricResult,
    Tally,
    TaskAdapter,
    optimize,
    split_train,
)
from jurist.signatures.ragbench import SentenceSupport
from jurist.tasks import Task, get_adapter, register_task, task_names
from support import ragbench_rows, write_jsonl


def test_key_overlap_doctests():
    assert doctest.testmod(jurist.metrics.key_overlap).failed == 0


def test_key_overlap_by_hand():
    result = key_overlap(["0a", "1a", "0a"], ["0a", "0b"])
    assert (result.precision, result.recall, result.f1) == (0.5, 0.5, 0.5)
    assert result.missed == ("0b",) and result.extra == ("1a",)
    assert key_overlap([], ["0a"]).f1 == 0.0 and key_overlap(["0a"], []).f1 == 0.0


def _rb_example(tmp_path, **gold: Any) -> dspy.Example:
    row = {
        "id": "r1",
        "question": "What is fact one?",
        "documents": ["Fact one is true. Fact two is false.", "Other text."],
        "response": "Fact one is true. It is also blue.",
        **gold,
    }
    return get_adapter("ragbench").load_examples(write_jsonl(tmp_path / "rb.jsonl", [row]))[0]


def _rb_prediction(relevant, support) -> dspy.Prediction:
    return dspy.Prediction(
        relevance_explanation="",
        all_relevant_sentence_keys=relevant,
        overall_supported_explanation="",
        overall_supported=all(support),
        sentence_support_information=[
            SentenceSupport(response_sentence_key=key, supporting_sentence_keys=["0a"], fully_supported=flag)
            for key, flag in zip("ab", support, strict=False)
        ],
        all_utilized_sentence_keys=["0a"],
    )


def test_ragbench_score_and_feedback_by_hand(tmp_path):
    example = _rb_example(tmp_path, adherence_score=False, all_relevant_sentence_keys=["0a", "0b", "7z"])
    metric = JudgeMetric(get_adapter("ragbench"))
    result = metric.result(example, _rb_prediction(["0a", "1a"], [True, False]))
    # support correct (judge: not supported, gold: not supported) = 1; relevant keys: gold "7z"
    # names no sentence and is dropped, so P = 1/2, R = 1/2, F1 = 0.5; score = 0.5·1 + 0.5·0.5.
    assert result.details == {"support_correct": 1.0, "relevant_f1": 0.5}
    assert result.score == pytest.approx(0.75)
    assert metric(example, _rb_prediction(["0a", "1a"], [True, False])) == pytest.approx(0.75)
    assert "missed gold keys: 0b" in result.feedback and "keys not in gold: 1a" in result.feedback
    assert "not fully supported: b" in result.feedback

    wrong = metric.result(example, _rb_prediction(["0a", "0b"], [True, True]))
    assert wrong.score == pytest.approx(0.5) and wrong.feedback.startswith("Wrong: the gold label says")


def test_ragbench_support_only_and_keys_only(tmp_path):
    adapter = get_adapter("ragbench")
    only_support = _rb_example(tmp_path, adherence_score=True)
    assert (
        adapter.score(
            only_support,
            adapter.postprocess(_rb_prediction([], [True, True]), only_support.inputs().toDict()),
        ).score
        == 1.0
    )
    only_keys = _rb_example(tmp_path, all_relevant_sentence_keys=["0a"])
    output = adapter.postprocess(_rb_prediction(["0a"], [True, False]), only_keys.inputs().toDict())
    assert adapter.score(only_keys, output).score == 1.0
    with pytest.raises(InputError, match="no row carries a gold label"):
        adapter.load_examples(
            write_jsonl(
                tmp_path / "none.jsonl", [{"id": "x", "question": "q", "documents": ["d"], "response": "r"}]
            )
        )


def test_gepa_contract_returns_score_and_feedback(tmp_path):
    example = _rb_example(tmp_path, adherence_score=False, all_relevant_sentence_keys=["0a", "0b"])
    metric = JudgeMetric(get_adapter("ragbench"), feedback=True)
    out = metric(example, _rb_prediction(["0a"], [True, False]), None, "label", None)
    assert isinstance(out, dspy.Prediction)
    assert out.score == pytest.approx(0.5 + 0.5 * (2 / 3)) and "missed gold keys: 0b" in out.feedback


def test_failed_and_unusable_predictions_score_zero_for_training_and_are_counted(tmp_path):
    examples = get_adapter("pairwise").load_examples(write_jsonl(tmp_path / "p.jsonl", pairs_rows(1)))
    tally = Tally()
    metric = JudgeMetric(get_adapter("pairwise"), tally, feedback=True)
    failed = metric(
        examples[0], dspy.Prediction(jurist_error="unparseable_output: no choice"), None, None, None
    )
    assert failed.score == 0.0 and "could not be used (unparseable_output" in failed.feedback
    unusable = metric(examples[0], dspy.Prediction(choice="Z", reason=""), None, None, None)
    assert unusable.score == 0.0 and "is not one of A, B" in unusable.feedback
    assert tally.summary()["unusable_answers"] == 1


def test_pairwise_examples_come_in_both_orders_with_swapped_gold(tmp_path):
    rows = [
        *pairs_rows(2),
        {"id": "t", "question": "q", "response_1": "x", "response_2": "y", "label": "tie"},
    ]
    path = write_jsonl(tmp_path / "p.jsonl", rows)
    two = get_adapter("pairwise").load_examples(path)
    assert [e.example_id for e in two] == ["p0|12", "p0|21", "p1|12", "p1|21"]  # the tie is left out
    assert [e.gold_label for e in two[:2]] == ["2", "1"]
    assert two[0].response_1 == two[1].response_2 and two[0].example_group == two[1].example_group
    three = get_adapter("pairwise", num_options=3).load_examples(path)
    assert [e.gold_label for e in three[-2:]] == ["tie", "tie"]
    adapter = get_adapter("pairwise", num_options=3)
    assert adapter.score(three[-1], {"choice": "C", "reason": ""}).score == 1.0


def test_pairwise_feedback_names_length_and_position(tmp_path):
    adapter = get_adapter("pairwise")
    example = adapter.load_examples(write_jsonl(tmp_path / "p.jsonl", pairs_rows(2)))[2]  # p1|12: good first
    assert example.gold_label == "1"
    wrong = adapter.score(example, {"choice": "B", "reason": ""})
    assert wrong.score == 0.0
    assert "Response 1 is better" in wrong.feedback and "preferred the longer one" in wrong.feedback
    right = adapter.score(example, {"choice": "A", "reason": ""})
    assert right.score == 1.0 and right.feedback.startswith("Correct")


class _EchoAdapter(TaskAdapter):
    task = "test-echo"
    metric_name = "exact"

    def make_program(self) -> dspy.Module:
        return dspy.Predict("text -> echo")

    def load_examples(self, path):
        rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]
        return [
            dspy.Example(
                text=r["text"], gold=r["text"], example_id=str(i), example_key=r["text"], example_group=str(i)
            ).with_inputs("text")
            for i, r in enumerate(rows)
        ]

    def postprocess(self, prediction, inputs):
        return {"echo": str(prediction.echo)}

    def score(self, example, output):
        return MetricResult(float(output["echo"] == example.gold), "ok")


class _EchoTask(Task):
    name = "test-echo"

    def optimization(self, options):
        return _EchoAdapter()


def test_a_new_task_plugs_in_by_subclassing(tmp_path):
    register_task(_EchoTask)
    assert {"pairwise", "ragbench", "test-echo"} <= set(task_names())
    assert isinstance(get_adapter("test-echo"), _EchoAdapter)
    with pytest.raises(ConfigError, match="no task 'nope'; tasks: .*pairwise.*ragbench"):
        get_adapter("nope")
    with pytest.raises(ConfigError, match="task 'ragbench': unknown option"):
        get_adapter("ragbench", num_options=3)


def test_guarded_program_turns_failures_into_counted_predictions():
    tally = Tally()
    lm = dspy.utils.DummyLM([{"echo": "x"}] + [{"wrong": "field"}] * 10)
    guarded = GuardedProgram(dspy.Predict("text -> echo"), tally, num_retries=0, parse_retries=1)
    with dspy.context(lm=lm):
        assert guarded(text="a").echo == "x"
        failed = guarded(text="b")
    assert failed.jurist_error.startswith("unparseable_output")
    summary = tally.summary()
    assert summary["program_calls"] == 2 and summary["failed_calls"] == 1
    assert summary["errors"] == {"unparseable_output": 1}
    assert guarded.deepcopy().tally is tally


def test_split_train_keeps_groups_together(tmp_path):
    examples = get_adapter("pairwise").load_examples(write_jsonl(tmp_path / "p.jsonl", pairs_rows(10)))
    train, val = split_train(examples, 0.3, seed=1)
    assert len(val) == 6 and len(train) == 14
    assert not {e.example_group for e in train} & {e.example_group for e in val}
    assert split_train(examples, 0.3, seed=1)[1] == val
    with pytest.raises(ConfigError, match="between 0 and 1"):
        split_train(examples, 1.0, seed=0)


def test_dev_must_be_held_out_and_the_judge_must_be_an_llm(tmp_path, llm_config):
    train = write_jsonl(tmp_path / "train.jsonl", pairs_rows(4))
    dev = write_jsonl(tmp_path / "dev.jsonl", pairs_rows(2, start=3))  # pair p3 is in both
    with pytest.raises(InputError, match=r"2 dev example\(s\) also occur in the training data.*'p3\|12'"):
        optimize(get_adapter("pairwise"), train, dev, llm_config, out=tmp_path / "a.json")
    with pytest.raises(ConfigError, match="needs an LLM judge"):
        optimize(get_adapter("pairwise"), train, dev, JudgeConfig(), out=tmp_path / "a.json")
    with pytest.raises(ConfigError, match="unknown optimizer 'sgd'"):
        optimize(get_adapter("pairwise"), train, dev, llm_config, out=tmp_path / "a.json", optimizer="sgd")
    rb = write_jsonl(tmp_path / "rb.jsonl", ragbench_rows(2))
    with pytest.raises(InputError):
        optimize(get_adapter("ragbench"), rb, dev, llm_config, out=tmp_path / "a.json")
