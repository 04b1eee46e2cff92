"""Files another tool judged are declared kinds of ``pairwise`` (``Task.other_files``): AlpacaEval
annotations and SubEval record files; ``jurist score`` hands them to the kind that takes them.
``pairwise-gold`` declares none: a pairs file is data, judged first by the loop."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jurist.errors import ExitCode
from jurist.tasks import get_task
from support import run_cli

DATA = Path(__file__).parents[1] / "data"
RUN = (
    DATA
    / "devbench-subeval"
    / "output"
    / "DevBench_projects_example_infer_input_2680_record0_gpt-4-1106-preview_2"
)
RECORD = RUN / "record_gpt-4-1106-preview_2.tsv"
ANNOTATIONS = DATA / "alpacaeval" / "av1-annotations.json"


def _kind(task_name: str, path: Path) -> str | None:
    task = get_task(task_name)
    for kind in task.other_files(task.options()):
        if kind.takes(path):
            return kind.what
    return None


def test_pairwise_declares_alpaca_annotations_and_subeval_record_files(tmp_path: Path) -> None:
    assert _kind("pairwise", ANNOTATIONS) == "AlpacaEval annotations"
    assert _kind("pairwise", DATA / "alpacaeval" / "results") == "AlpacaEval annotations"
    assert _kind("pairwise", RECORD) == "SubEval record files"
    (tmp_path / "manifest.json").write_text("{}", encoding="utf-8")
    assert _kind("pairwise", tmp_path) is None  # a run directory is scored as any task's


def test_pairwise_gold_scores_no_file_another_tool_judged() -> None:
    task = get_task("pairwise-gold")
    assert list(task.other_files(task.options())) == []


def test_record_files_are_scored_one_at_a_time(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["score", "pairwise", str(RECORD), str(RECORD)]) == ExitCode.BAD_INPUT
    assert "scores one of its SubEval record files at a time" in capsys.readouterr().err


def test_scored_record_file_writes_subeval_files_into_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert run_cli(["score", "pairwise", str(RECORD), "--json", "--resamples", "0", "-o", str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["judge"] == "gpt-4-1106-preview"
    assert (out / "log.txt").read_bytes() == (RUN / "log.txt").read_bytes()


def test_alpaca_annotations_are_written_into_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert run_cli(["score", "pairwise", str(ANNOTATIONS), "--json", "--resamples", "0", "-o", str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["format"] == "alpaca_eval"
    assert (out / "report.html").is_file()
