"""Files another tool judged are scored by a kind the task declares (``Task.other_files``),
not by a ``score`` of its own: ``jurist score`` hands the paths to the first kind that takes
them all, and a run directory of jurist's is scored as any task's."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from pydantic import BaseModel

from jurist.errors import ExitCode
from jurist.tasks import OtherFiles, Scores, register_task
from metric_task import CapsMetricTask, write_texts
from support import run_cli


def _verdict_share(paths: list[Path], options: BaseModel, gold: str | Path | None) -> Scores:
    """A made-up tool's verdict files: one ``{"id", "caps"}`` line per text."""
    rows = [json.loads(line) for path in paths for line in path.read_text(encoding="utf-8").splitlines()]
    share = sum(bool(row["caps"]) for row in rows) / len(rows)
    summary = {"files": len(paths), "texts": len(rows), "caps_share": share, "gold": gold is not None}
    return Scores(items=pd.DataFrame(rows), summary=summary, report=f"caps share {share:.2f}\n")


def _is_verdicts(path: Path) -> bool:
    return path.name.endswith(".verdicts")


class ToolFilesTask(CapsMetricTask):
    name = "test-tool-files"

    def other_files(self, options: BaseModel) -> list[OtherFiles]:
        return [OtherFiles("verdict files", _is_verdicts, _verdict_share, several=True)]


class OneAtATimeTask(CapsMetricTask):
    name = "test-tool-file"

    def other_files(self, options: BaseModel) -> list[OtherFiles]:
        return [OtherFiles("verdict files", _is_verdicts, _verdict_share)]


def _verdicts(path: Path, caps: list[bool]) -> Path:
    lines = [json.dumps({"id": str(i), "caps": c}) + "\n" for i, c in enumerate(caps)]
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_other_tools_files_are_scored_by_the_kind_that_takes_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    register_task(ToolFilesTask)
    one = _verdicts(tmp_path / "a.verdicts", [True, False])
    two = _verdicts(tmp_path / "b.verdicts", [True, True])
    capsys.readouterr()
    assert run_cli(["score", "test-tool-files", str(one), str(two), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"files": 2, "texts": 4, "caps_share": 0.75, "gold": False}

    # A run directory of jurist's is not theirs: it is scored as any task's run.
    run, texts = tmp_path / "run", write_texts(tmp_path / "t.jsonl")
    assert run_cli(["judge", "test-tool-files", str(texts), "--out", str(run)]) == 0
    capsys.readouterr()
    assert run_cli(["score", "test-tool-files", str(run), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["items"] == 4


def test_a_kind_that_takes_one_file_at_a_time_refuses_several(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    register_task(OneAtATimeTask)
    one = _verdicts(tmp_path / "a.verdicts", [True])
    two = _verdicts(tmp_path / "b.verdicts", [False])
    assert run_cli(["score", "test-tool-file", str(one), str(two)]) == ExitCode.BAD_INPUT
    assert "scores one of its verdict files at a time" in capsys.readouterr().err
