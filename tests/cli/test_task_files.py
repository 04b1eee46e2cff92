"""``jurist tasks`` lists the YAML task files of the current folder (or ``--path``) and its
immediate sub-folders beside the registered tasks; other YAML files are not listed, and an
invalid task file is listed with its one-line error instead of stopping the command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support import run_cli

GOOD = """\
name: tone-check
instructions: Is the answer polite?
inputs: [answer]
output: {kind: bool}
"""
BAD = """\
name: broken-task
instructions: Rate it.
inputs: [answer]
output: {kind: grade}
"""
JUDGE_CONFIG = "model: openai/gpt-4o-mini\ntemperature: 0\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "tone.yaml").write_text(GOOD, encoding="utf-8")
    (tmp_path / "judge.yaml").write_text(JUDGE_CONFIG, encoding="utf-8")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "task.yml").write_text(BAD, encoding="utf-8")
    (tmp_path / "examples" / "too-deep").mkdir(parents=True)
    (tmp_path / "examples" / "too-deep" / "task.yaml").write_text(
        GOOD.replace("tone-check", "too-deep"), encoding="utf-8"
    )
    return tmp_path


def test_tasks_path_lists_the_sub_folders_of_examples(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(["tasks", "--path", str(folder / "examples")]) == 0
    path = folder / "examples" / "too-deep" / "task.yaml"
    out = capsys.readouterr().out
    assert f"too-deep  [judge, score, calibrate, optimize, prompt, label]  ({path})" in out


def test_tasks_lists_task_files_of_the_current_folder(
    folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(folder)
    assert run_cli(["tasks"]) == 0
    out = capsys.readouterr().out
    assert "ragbench  [" in out  # the built-in tasks are still there
    assert "tone-check  [judge, score, calibrate, optimize, prompt, label]  (tone.yaml)" in out
    assert "judge.yaml" not in out  # a judge config is no task file
    assert "too-deep" not in out  # only the folder and its immediate sub-folders
    invalid = [line for line in out.splitlines() if "broken" in line]
    assert invalid == [
        "invalid task file: broken/task.yml, line 4, field 'output.kind': "
        "Input should be 'label', 'labels', 'score', 'bool' or 'pairwise'"
    ]


def test_tasks_path_and_json(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["tasks", "--json", "--path", str(folder)]) == 0
    entries = json.loads(capsys.readouterr().out)
    by_path = {entry["path"]: entry for entry in entries if "path" in entry}
    assert set(by_path) == {str(folder / "tone.yaml"), str(folder / "broken" / "task.yml")}
    good = by_path[str(folder / "tone.yaml")]
    assert good["name"] == "tone-check" and good["outputs"]["verdict"] == "true or false"
    broken = by_path[str(folder / "broken" / "task.yml")]
    assert broken["name"] is None and "field 'output.kind'" in broken["error"]
    assert any(entry["name"] == "ragbench" for entry in entries)
    assert run_cli(["tasks", "--path", str(folder / "tone.yaml")]) == 2
    assert "not a folder" in capsys.readouterr().err
