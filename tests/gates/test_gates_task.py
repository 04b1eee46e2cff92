"""The ``gates`` task through the generic verbs: score, judge (the claim check), prompt, options."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import jurist
from jurist.cli.task_options import split_task_arguments
from jurist.errors import ConfigError
from jurist.tasks import get_task
from jurist.tasks.gates import GateReport, GatesTask
from jurist.tasks.gates.render import questions_frame, render_markdown, report_to_dict
from jurist.tasks.gates.scoring import score_traces
from support import run_cli

GOLD = [
    {
        "qid": "q1",
        "q": "What colour is the sky?",
        "answerable": True,
        "gold_ids": ["d1"],
        "gold_claim": "The sky is blue on a clear day.",
    },
    {
        "qid": "q2",
        "q": "Who wrote Hamlet?",
        "answerable": True,
        "gold_ids": ["d2"],
        "gold_claim": "William Shakespeare wrote Hamlet.",
    },
    {"qid": "q3", "q": "What is Z?", "answerable": False, "gold_ids": []},
]
TRACES = [
    {"qid": "q1", "answer": "On a clear day the sky is blue. citations: [d1]"},
    {"qid": "q1", "answer": "The sky is green. citations: [d1]"},
    {"qid": "q2", "answer": "Christopher Marlowe. citations: [d2]"},
    {"qid": "q2", "answer": "not in context"},
    {"qid": "q3", "answer": "Z is a letter. citations: [d9]"},
]


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps(GOLD), encoding="utf-8")
    traces = tmp_path / "traces.jsonl"
    traces.write_text("".join(json.dumps(t) + "\n" for t in TRACES), encoding="utf-8")
    return gold, traces


def test_gates_is_registered_and_serves_judge_score_and_prompt():
    task = get_task("gates")
    assert isinstance(task, GatesTask)
    assert not hasattr(type(task), "judge")  # the claim judge is an ordinary run of the judging loop
    assert task.verbs == ["judge", "score", "prompt"]
    options = {"gold", "thresholds", "precision_min", "fail_on_na", "refusal_token"}
    assert options <= set(task.Options.model_fields)
    with pytest.raises(ConfigError, match="task 'gates' cannot be optimized"):
        task.example_score(None, {}, task.options())
    with pytest.raises(ConfigError, match="task 'gates' cannot be optimized"):
        jurist.optimize("gates", "train.jsonl", "dev.jsonl", None, out="x.json")


def test_score_is_the_gate_report(files):
    gold, traces = files
    report = score_traces(gold, traces)
    scores = jurist.score("gates", traces, gold=gold)
    assert isinstance(scores.extra["report"], GateReport)
    assert scores.report == render_markdown(report)
    assert scores.summary == report_to_dict(report)
    assert scores.items.equals(questions_frame(report))
    assert get_task("gates").report(scores) == scores.report
    # The gold QA set can also be given as the task option.
    assert jurist.score("gates", traces, options={"gold": gold}).report == scores.report


def test_score_without_gold_is_a_named_error(files):
    _, traces = files
    with pytest.raises(ConfigError, match="give the gold QA set") as caught:
        jurist.score("gates", traces)
    assert caught.value.field == "gold"


def test_threshold_options_override_the_file_and_fail_on_na_only_when_given(files, tmp_path):
    gold, traces = files
    loose = jurist.score("gates", traces, gold=gold, options={"precision_min": 0.0})
    assert loose.summary["thresholds"]["precision_min"] == 0.0
    file = tmp_path / "thresholds.yaml"
    file.write_text("precision_min: 0.3\nfail_on_na: true\n", encoding="utf-8")
    from_file = jurist.score("gates", traces, gold=gold, options={"thresholds": file})
    assert from_file.summary["thresholds"]["precision_min"] == 0.3
    assert from_file.summary["thresholds"]["fail_on_na"] is True
    both = jurist.score("gates", traces, gold=gold, options={"thresholds": file, "precision_min": 0.5})
    assert both.summary["thresholds"]["precision_min"] == 0.5
    assert both.summary["thresholds"]["fail_on_na"] is True
    skip = jurist.score("gates", traces, gold=gold, options={"thresholds": file, "fail_on_na": False})
    assert skip.summary["thresholds"]["fail_on_na"] is False
    token = jurist.score("gates", traces, gold=gold, options={"refusal_token": "Z is a letter."})
    assert token.summary["inputs"]["refusal_token"] == "z is a letter."
    with pytest.raises(ConfigError, match="precision-min|less than or equal"):
        jurist.score("gates", traces, gold=gold, options={"precision_min": 2})


def test_options_from_the_command_line_use_the_gate_flag_names(files):
    gold, _ = files
    task = get_task("gates")
    _, values = split_task_arguments(
        task, ["--gold", str(gold), "--precision-min", "0.9", "--fail-on-na", "--refusal-token", "n/a"]
    )
    options = task.options(values)
    assert options.model_dump()["precision_min"] == 0.9
    assert options.model_dump()["fail_on_na"] is True


def test_judge_runs_the_claim_check_like_gate_judge(files, tmp_path, capsys):
    gold, traces = files
    config = tmp_path / "baseline.yaml"
    config.write_text("model: baseline\n", encoding="utf-8")
    args = ["gate", str(gold), str(traces), "--judge", str(config), "--judge-out", str(tmp_path / "direct")]
    assert run_cli([*args, "--json"]) == 1
    expected = json.loads(capsys.readouterr().out)
    run = jurist.judge("gates", traces, out=tmp_path / "run", options={"gold": gold}, progress=False)
    assert run.extra["report"].extra_metrics == expected["extra_metrics"]
    assert run.summary["gate"] == expected  # an ordinary run's summary, the gate report in it
    assert run.summary["judged_claim_accuracy"] == expected["extra_metrics"]["judged_claim_accuracy"]
    assert (run.summary["items"], run.summary["ok"], run.summary["task"]) == (3, 3, "gates")
    assert run.summary["passed"] is expected["passed"] is False
    assert (tmp_path / "run" / "report.md").read_text(encoding="utf-8") == run.report
    assert json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8")) == run.summary
    lines = get_task("gates").summary_lines(run)
    assert lines[0] == "gates: FAIL (G1, G2); 5 traces scored"
    assert "  judged claim accuracy: 0.333" in lines
    assert lines[-1] == f"report: {tmp_path / 'run' / 'report.md'}"


def test_items_and_prompt_are_the_claim_items(files):
    gold, traces = files
    task = get_task("gates")
    options = task.options({"gold": gold})
    dataset = task.read(traces, options)
    items = list(task.items(dataset, options))
    assert [item.id for item in items] == ["line-1", "line-2", "line-3"]
    assert items[0].inputs == {
        "question": "What colour is the sky?",
        "gold_claim": "The sky is blue on a clear day.",
        "answer": "On a clear day the sky is blue. citations: [d1]",
    }
    assert dataset.describe()["items"] == 3
    calls = jurist.prompt("gates", traces, row=2, options={"gold": gold})
    assert [call["item"] for call in calls] == ["line-3"]
    content = calls[0]["messages"][-1]["content"]
    assert "William Shakespeare wrote Hamlet." in content and "Christopher Marlowe" in content
    verdict = task.baseline(options)
    assert verdict.fingerprint()


def test_cli_score_judge_and_prompt(files, tmp_path, capsys):
    gold, traces = files
    assert run_cli(["gate", str(gold), str(traces)]) == 1
    gate_output = capsys.readouterr().out
    scored = ["score", "gates", str(traces), "--gold", str(gold)]
    assert run_cli(scored) == 0
    assert capsys.readouterr().out == gate_output
    assert run_cli([*scored, "--json", "--precision-min", "0"]) == 0
    assert json.loads(capsys.readouterr().out)["thresholds"]["precision_min"] == 0.0
    out = tmp_path / "run"
    args = ["judge", "gates", str(traces), "--gold", str(gold), "--out", str(out), "--no-progress"]
    assert run_cli(args) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("gates: FAIL") and "judged claim accuracy: 0.333" in printed
    assert run_cli(["prompt", "gates", str(traces), "--gold", str(gold)]) == 0
    assert "The sky is blue on a clear day." in capsys.readouterr().out


def test_a_trace_file_is_a_declared_kind_of_file_a_run_directory_is_not(files, tmp_path):
    gold, traces = files
    task = get_task("gates")
    (kind,) = task.other_files(task.options())
    assert kind.what == "trace files"
    assert kind.takes(traces) and not kind.takes(tmp_path)
    scores = kind.score([traces], task.options(), gold)
    assert scores.summary == report_to_dict(score_traces(gold, traces))
    with pytest.raises(ConfigError, match="cannot score several trace files at once"):
        kind.score([traces, traces], task.options(), gold)
