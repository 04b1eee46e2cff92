"""Tasks' metrics in DSPy's contracts: scores, GEPA feedback, failures, a new task, splits."""

from __future__ import annotations

import doctest
import inspect
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
    MetricResult,
    Tally,
    optimize,
    split_train,
    task_metric,
)
from jurist.signatures.ragbench import SentenceSupport
from jurist.tasks import Task, get_task, register_task, task_names
from jurist.testing import OpenAICompatibleServer
from jurist.verbs import optimize as jurist_optimize
from support import prompt_sections, ragbench_rows, write_jsonl

RAGBENCH, PAIRWISE = get_task("ragbench"), get_task("pairwise")


def _examples(task: Task, path: Path, **options: Any) -> list[dspy.Example]:
    return task.gold_examples(path, task.options(options))


def _score(task: Task, example: dspy.Example, output: dict[str, Any], **options: Any) -> MetricResult:
    return task.example_score(example, output, task.options(options))


def _scored(task: Task, example: dspy.Example, prediction: Any) -> MetricResult:
    """The task's score of a prediction after its own postprocess."""
    _, postprocess = task.optimization_program(task.options())
    return _score(task, example, postprocess(prediction, example.inputs().toDict()))


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
    return _examples(RAGBENCH, write_jsonl(tmp_path / "rb.jsonl", [row]))[0]


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
    metric = task_metric(RAGBENCH)
    result = _scored(RAGBENCH, example, _rb_prediction(["0a", "1a"], [True, False]))
    # support correct (judge: not supported, gold: not supported) = 1; relevant keys: gold "7z"
    # names no sentence and is dropped, so P = 1/2, R = 1/2, F1 = 0.5; score = 0.5·1 + 0.5·0.5.
    assert result.details == {"support_correct": 1.0, "relevant_f1": 0.5}
    assert result.score == pytest.approx(0.75)
    assert metric(example, _rb_prediction(["0a", "1a"], [True, False])) == pytest.approx(0.75)
    assert "missed gold keys: 0b" in result.feedback and "keys not in gold: 1a" in result.feedback
    assert "not fully supported: b" in result.feedback

    wrong = _scored(RAGBENCH, example, _rb_prediction(["0a", "0b"], [True, True]))
    assert wrong.score == pytest.approx(0.5) and wrong.feedback.startswith("Wrong: the gold label says")


def test_ragbench_support_only_and_keys_only(tmp_path):
    only_support = _rb_example(tmp_path, adherence_score=True)
    assert _scored(RAGBENCH, only_support, _rb_prediction([], [True, True])).score == 1.0
    only_keys = _rb_example(tmp_path, all_relevant_sentence_keys=["0a"])
    assert _scored(RAGBENCH, only_keys, _rb_prediction(["0a"], [True, False])).score == 1.0
    with pytest.raises(InputError, match="no row carries a gold label"):
        _examples(
            RAGBENCH,
            write_jsonl(
                tmp_path / "none.jsonl", [{"id": "x", "question": "q", "documents": ["d"], "response": "r"}]
            ),
        )


def test_gepa_contract_returns_score_and_feedback(tmp_path):
    example = _rb_example(tmp_path, adherence_score=False, all_relevant_sentence_keys=["0a", "0b"])
    metric = task_metric(RAGBENCH, feedback=True)
    out = metric(example, _rb_prediction(["0a"], [True, False]), None, "label", None)
    assert isinstance(out, dspy.Prediction)
    assert out.score == pytest.approx(0.5 + 0.5 * (2 / 3)) and "missed gold keys: 0b" in out.feedback


def test_failed_and_unusable_predictions_score_zero_for_training_and_are_counted(tmp_path):
    examples = _examples(PAIRWISE, write_jsonl(tmp_path / "p.jsonl", pairs_rows(1)))
    tally = Tally()
    metric = task_metric(PAIRWISE, tally=tally, feedback=True)
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
    two = _examples(PAIRWISE, path)
    assert [e.example_id for e in two] == ["p0|12", "p0|21", "p1|12", "p1|21"]  # the tie is left out
    assert [e.gold_label for e in two[:2]] == ["2", "1"]
    assert two[0].response_1 == two[1].response_2 and two[0].example_group == two[1].example_group
    three = _examples(PAIRWISE, path, num_options=3)
    assert [e.gold_label for e in three[-2:]] == ["tie", "tie"]
    assert _score(PAIRWISE, three[-1], {"choice": "C", "reason": ""}, num_options=3).score == 1.0


def test_pairwise_feedback_names_length_and_position(tmp_path):
    example = _examples(PAIRWISE, write_jsonl(tmp_path / "p.jsonl", pairs_rows(2)))[2]  # p1|12: good first
    assert example.gold_label == "1"
    wrong = _score(PAIRWISE, example, {"choice": "B", "reason": ""})
    assert wrong.score == 0.0
    assert "Response 1 is better" in wrong.feedback and "preferred the longer one" in wrong.feedback
    right = _score(PAIRWISE, example, {"choice": "A", "reason": ""})
    assert right.score == 1.0 and right.feedback.startswith("Correct")


def test_the_metric_is_a_plain_function_of_the_tasks_parts(tmp_path):
    example = _rb_example(tmp_path, adherence_score=False, all_relevant_sentence_keys=["0a", "0b"])
    metric = task_metric(RAGBENCH)
    assert inspect.isfunction(metric) and metric.__name__ == "ragbench_support_and_keys"
    assert inspect.signature(metric).parameters["trace"].default is None
    prediction = _rb_prediction(["0a"], [True, False])
    assert metric(example, prediction) == _scored(RAGBENCH, example, prediction).score
    # The pairwise metric follows the task's options (3 options: C is a tie).
    examples = _examples(PAIRWISE, write_jsonl(tmp_path / "p.jsonl", pairs_rows(1)), num_options=3)
    assert (
        task_metric(PAIRWISE, {"num_options": 3})(examples[0], dspy.Prediction(choice="C", reason="")) == 0.0
    )
    assert task_metric(PAIRWISE)(examples[0], dspy.Prediction(choice="C", reason="")) == 0.0  # unusable


class _EchoTask(Task):
    """A task optimization knows only by its parts: program, postprocess, gold examples, score."""

    name = "test-echo"
    optimized_metric = "exact"

    def program(self, options):
        return dspy.Predict("text -> echo")

    def postprocess(self, prediction, inputs, options):
        return {"echo": str(prediction.echo).strip()}

    def gold_examples(self, path, options):
        rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]
        return [
            dspy.Example(
                text=r["text"],
                gold=r["gold"],
                example_id=r["id"],
                example_key=r["text"],
                example_group=r["id"],
            ).with_inputs("text")
            for r in rows
        ]

    def example_score(self, example, output, options):
        right = output["echo"] == example.gold
        return float(right), "Correct." if right else f"Say {example.gold!r}."


def _echo(body: dict[str, Any]) -> str:
    text = prompt_sections(body).get("text", "")
    return f"[[ ## echo ## ]]\n{text.upper() if 'shout' in text else text}\n\n[[ ## completed ## ]]"


def test_a_new_task_is_optimized_from_its_parts_alone(tmp_path, llm_config):
    register_task(_EchoTask)
    task = get_task("test-echo")
    assert {"pairwise", "ragbench", "test-echo"} <= set(task_names())
    assert "optimize" in task.verbs and "optimize" not in get_task("gates").verbs
    rows = [
        {"id": f"e{i}", "text": f"word {i}" + (" shout" if i % 3 == 0 else ""), "gold": f"word {i}"}
        for i in range(9)
    ]
    for row in rows:
        row["gold"] = row["text"]
    train = write_jsonl(tmp_path / "train.jsonl", rows[:6])
    dev = write_jsonl(tmp_path / "dev.jsonl", rows[6:])
    # A (score, feedback) pair is a score with feedback.
    feedback = task_metric(task, feedback=True)(_examples(task, dev)[0], dspy.Prediction(echo="WORD 6 SHOUT"))
    assert (feedback.score, feedback.feedback) == (0.0, "Say 'word 6 shout'.")
    with OpenAICompatibleServer(_echo) as server:
        config = llm_config.model_copy(update={"api_base": server.base_url})
        result = jurist_optimize("test-echo", train, dev, config, out=tmp_path / "echo.json")
    artifact = result.artifact
    assert artifact.task == "test-echo" and artifact.options == {}
    # dev: e6 shouts (wrong), e7 and e8 are echoed right; training traces scoring 1 become demos.
    assert artifact.scores["dev_before"].metric == "exact"
    assert artifact.scores["dev_before"].score == pytest.approx(2 / 3)
    demos = artifact.program["demos"]
    assert [demo["text"] for demo in demos] == ["word 1", "word 2", "word 4", "word 5"]


def test_tasks_are_looked_up_with_their_options():
    with pytest.raises(ConfigError, match="no task 'nope'; tasks: .*pairwise.*ragbench"):
        jurist_optimize("nope", "a", "b", JudgeConfig(), out="x.json")
    with pytest.raises(ConfigError, match="task 'ragbench': unknown option"):
        task_metric(RAGBENCH, {"num_options": 3})
    with pytest.raises(ConfigError, match="task 'gates' cannot be optimized"):
        jurist_optimize("gates", "a", "b", JudgeConfig(), out="x.json")


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
    examples = _examples(PAIRWISE, write_jsonl(tmp_path / "p.jsonl", pairs_rows(10)))
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
        optimize(PAIRWISE, train, dev, llm_config, out=tmp_path / "a.json")
    with pytest.raises(ConfigError, match="needs an LLM judge"):
        optimize(PAIRWISE, train, dev, JudgeConfig(), out=tmp_path / "a.json")
    with pytest.raises(ConfigError, match="unknown optimizer 'sgd'"):
        optimize(PAIRWISE, train, dev, llm_config, out=tmp_path / "a.json", optimizer="sgd")
    rb = write_jsonl(tmp_path / "rb.jsonl", ragbench_rows(2))
    with pytest.raises(InputError):
        optimize(RAGBENCH, rb, dev, llm_config, out=tmp_path / "a.json")
