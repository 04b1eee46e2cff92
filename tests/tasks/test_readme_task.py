"""The task file in the README's first screen runs as shown, and scores what it should."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from support import run_cli

README = Path(__file__).resolve().parents[2] / "README.md"


def _readme_task() -> str:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Judge your own data in 10 lines of YAML") :]
    match = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert match is not None
    return match.group(1)


def test_the_readme_task_file_is_ten_lines_and_judges_offline(tmp_path: Path, capsys):
    task_text = _readme_task()
    assert len([line for line in task_text.splitlines() if line.strip()]) <= 10
    task = tmp_path / "helpfulness.yaml"
    task.write_text(task_text, encoding="utf-8")
    rows = [
        {"id": "a", "prompt": "What is 2+2?", "response": "4.", "human_score": 9},
        {"id": "b", "prompt": "Capital of Peru?", "response": "I don't know.", "human_score": 1},
        {"id": "c", "prompt": "Name a prime.", "response": "7 is prime.", "human_score": 8},
        {"id": "d", "prompt": "Why is the sky blue?", "response": "I DON'T KNOW", "human_score": 2},
    ]
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    out = tmp_path / "runs" / "h"
    assert run_cli(["judge", str(task), str(data), "--out", str(out), "--no-progress"]) == 0
    assert "4 items: 4 scored, 0 failed" in capsys.readouterr().out
    assert run_cli(["score", str(task), str(out), "--gold", str(data), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    # The baseline gives 1 where the answer says "i don't know" (case-insensitive), else 5.
    predicted = {"a": 5, "b": 1, "c": 5, "d": 1}
    gold = {row["id"]: row["human_score"] for row in rows}
    mae = sum(abs(predicted[k] - gold[k]) for k in gold) / len(gold)
    assert json.dumps(summary).count("NaN") == 0
    assert _find(summary, "mae") == pytest.approx(mae)


def _find(summary: dict, name: str) -> float:
    """The value of a metric wherever the summary nests it (``{"mae": {"value": ...}}`` or flat)."""
    stack = [summary]
    while stack:
        node = stack.pop()
        for key, value in node.items():
            if key == name:
                return value["value"] if isinstance(value, dict) else value
            if isinstance(value, dict):
                stack.append(value)
    raise AssertionError(f"{name} not in the summary")


def test_the_python_task_of_docs_tasks_md_runs(tmp_path: Path):
    text = (README.parent / "docs" / "tasks.md").read_text(encoding="utf-8")
    section = text[text.index("## A task in Python") :]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None
    exec(compile(match.group(1), "docs/tasks.md", "exec"), {})  # registers the task "toxicity"
    import jurist

    rows = [
        {"id": 1, "comment_text": "you &amp; your\n\n idiot", "label": "toxic"},
        {"id": 2, "comment_text": "thanks, that helped", "label": "not_toxic"},
    ]
    data = tmp_path / "comments.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    items = jurist.judge("toxicity", data, out=tmp_path / "run", progress=False)
    assert list(items["verdict"]) == ["toxic", "not_toxic"]
    calls = jurist.prompt("toxicity", data, jurist.JudgeConfig(model="openai/x"))
    assert "you & your idiot" in calls[0]["messages"][-1]["content"]
