"""The optional judged claim check of ``jurist gate --judge`` and ``jurist judge gates``: an ordinary
run of the ``gates`` task that adds a column and metrics only."""

from __future__ import annotations

import json
from pathlib import Path

import jurist
from jurist.runner import MANIFEST
from jurist.tasks import task_of_run
from jurist.tasks.gates import run_gate
from jurist.tasks.gates.render import report_to_dict
from jurist.testing import OpenAICompatibleServer
from support import prompt_sections, run_cli

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


def _files(tmp_path: Path) -> tuple[Path, Path]:
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps(GOLD))
    traces = tmp_path / "traces.jsonl"
    traces.write_text("".join(json.dumps(t) + "\n" for t in TRACES))
    return gold, traces


def _deterministic(report) -> dict:
    data = report_to_dict(report)
    data.pop("extra_metrics")
    for row in data["questions"]:
        for key in [k for k in row if k.startswith("judged")]:
            row.pop(key)
    return data


def _judged(gold, traces, run_dir, config=None, **kwargs):
    options = {"gold": gold}
    return jurist.judge("gates", traces, config, out=run_dir, options=options, progress=False, **kwargs)


def test_baseline_claim_judge_adds_a_column_and_metrics_only(tmp_path):
    gold, traces = _files(tmp_path)
    plain = jurist.score("gates", traces, gold=gold).extra["report"]
    judged = _judged(gold, traces, tmp_path / "run").extra["report"]
    # Only answered traces of answerable questions with a claim are judged: 3 of 5.
    rows = {row.gold.qid: row for row in judged.questions}
    assert rows["q1"].extra["judged claim"] == "1/2"
    assert rows["q2"].extra["judged claim"] == "0/1"
    assert "judged claim" not in rows["q3"].extra
    assert judged.extra_metrics["judged_claim_accuracy"] == 1 / 3
    assert judged.extra_metrics["judged_claim_failed"] == 0.0
    assert _deterministic(judged) == _deterministic(plain)
    assert judged.exit_code == plain.exit_code


def test_llm_claim_judge_through_loopback_with_a_failure_resume_and_retry(llm_config, tmp_path):
    def responder(body):
        answer = prompt_sections(body).get("answer", "")
        if "Marlowe" in answer:
            return "no idea"
        verdict = "True" if "blue" in answer else "False"
        return f"[[ ## states_claim ## ]]\n{verdict}\n\n[[ ## reason ## ]]\nchecked\n\n[[ ## completed ## ]]"

    gold, traces = _files(tmp_path)
    with OpenAICompatibleServer(responder) as srv:
        config = llm_config.model_copy(update={"api_base": srv.base_url})
        report = _judged(gold, traces, tmp_path / "run", config).extra["report"]
        assert report.extra_metrics["judged_claim_accuracy"] == 1 / 2
        assert report.extra_metrics["judged_claim_failed"] == 1 / 3
        rows = {row.gold.qid: row for row in report.questions}
        assert rows["q1"].extra["judged claim"] == "1/2"
        assert "judged claim" not in rows["q2"].extra  # its one judged trace failed
        srv.reset_count()
        again = _judged(gold, traces, tmp_path / "run", config).extra["report"]
        assert srv.requests == 0
        assert again.extra_metrics == report.extra_metrics
        retried = _judged(gold, traces, tmp_path / "run", config, retry_failed=True).extra["report"]
        assert srv.requests > 0  # only the failed item is asked again, and fails again
        assert retried.extra_metrics == report.extra_metrics


def test_cli_judge_option_keeps_the_gate_exit_code(tmp_path, capsys):
    gold, traces = _files(tmp_path)
    config = tmp_path / "judge.yaml"
    config.write_text("model: baseline\n")
    plain_code = run_gate(gold, traces)
    capsys.readouterr()
    args = ["gate", str(gold), str(traces), "--judge", str(config), "--judge-out", str(tmp_path / "run")]
    code = run_cli([*args, "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == plain_code
    assert data["extra_metrics"]["judged_claim_accuracy"] == 1 / 3


def test_gate_judge_keeps_an_ordinary_run_of_the_task_and_resumes_it(tmp_path, monkeypatch, capsys):
    gold, traces = _files(tmp_path)
    (tmp_path / "judge.yaml").write_text("model: baseline\n")
    monkeypatch.chdir(tmp_path)
    args = ["gate", str(gold), str(traces), "--judge", "judge.yaml", "--json"]
    assert run_cli(args) == 1
    first = capsys.readouterr().out
    (run_dir,) = (tmp_path / ".jurist_cache" / "gate-judge").iterdir()
    manifest = json.loads((run_dir / MANIFEST).read_text(encoding="utf-8"))
    assert manifest["task"] == "gates" and manifest["task_options"]["gold"] == str(gold)
    assert task_of_run(run_dir).name == "gates"
    assert json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))["gate"] == json.loads(first)
    assert run_cli(args) == 1  # resumed: the same directory, nothing judged again
    assert capsys.readouterr().out == first
    assert [found.name for found in (tmp_path / ".jurist_cache" / "gate-judge").iterdir()] == [run_dir.name]
    assert run_cli(["gate", str(tmp_path / "missing.json"), str(traces), "--judge", "judge.yaml"]) == 2
    assert "missing.json: file not found" in capsys.readouterr().err


def test_the_claim_run_is_scored_by_the_task_s_score_with_the_traces_the_loop_read(
    tmp_path, monkeypatch, capsys
):
    from jurist.tasks import get_task
    from jurist.tasks._read_once import DATASET, already_read
    from jurist.tasks.gates import task as gates_task

    collected = []
    original = gates_task.collect_claims

    def counted(*args, **kwargs):
        collected.append(args[1])
        return original(*args, **kwargs)

    monkeypatch.setattr(gates_task, "collect_claims", counted)
    gold, traces = _files(tmp_path)
    run_dir = tmp_path / "run"
    first = _judged(gold, traces, run_dir)
    assert collected == [traces]  # the loop's read: its scoring is handed the claim items
    written = (run_dir / "summary.json").read_text(encoding="utf-8")
    _judged(gold, traces, run_dir)  # resumed: read once again, scored the same
    assert len(collected) == 2 and (run_dir / "summary.json").read_text(encoding="utf-8") == written
    # `jurist score gates RUN_DIR` reads the traces the run judged once, with the run's options.
    assert run_cli(["score", "gates", str(run_dir), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(written)
    assert collected == [traces] * 3
    # The task's one score, with the claim items in hand, scores the run from its verdicts.
    task = get_task("gates")
    options = task.options({"gold": gold})
    (run_dir / "summary.json").write_text("{}", encoding="utf-8")
    with already_read(DATASET, traces, task.read(traces, options)):
        scores = task.score(run_dir, options, gold=traces, write=True)
    assert (run_dir / "summary.json").read_text(encoding="utf-8") == written
    assert scores.report == first.report == (run_dir / "report.md").read_text(encoding="utf-8")


def test_score_of_a_claim_run_is_an_ordinary_score_with_the_run_s_options(tmp_path, capsys):
    gold, traces = _files(tmp_path)
    run_dir = tmp_path / "run"
    options = ["--gold", str(gold), "--precision-min", "0.5", "--refusal-token", "Z is a letter."]
    assert run_cli(["judge", "gates", str(traces), "--out", str(run_dir), "--no-progress", *options]) == 0
    capsys.readouterr()
    written = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    assert written["gate"]["thresholds"]["precision_min"] == 0.5
    assert written["gate"]["inputs"]["refusal_token"] == "z is a letter."
    for name in ("results.jsonl", "items.csv", "items.parquet", "report.md", "report.html"):
        assert (run_dir / name).is_file(), name
    # No option given: the QA set, thresholds and refusal token the run was judged with.
    assert run_cli(["score", "gates", str(run_dir), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == written
    assert run_cli(["score", "gates", str(run_dir)]) == 0
    assert capsys.readouterr().out.rstrip("\n") == (run_dir / "report.md").read_text(encoding="utf-8").rstrip(
        "\n"
    )
    # An option given wins over the recorded one.
    assert run_cli(["score", "gates", str(run_dir), "--json", "--precision-min", "0.9"]) == 0
    assert json.loads(capsys.readouterr().out)["gate"]["thresholds"]["precision_min"] == 0.9
    # The trace file the run judged is gone: one line naming what is missing, exit 2.
    traces.unlink()
    assert run_cli(["score", "gates", str(run_dir)]) == 2
    assert "the trace file this claim run judged is not found" in capsys.readouterr().err
