"""Two parts of the task contract a run directory is scored with: :meth:`Task.run_options` (the
options given, completed by those the run was judged with: :func:`recorded_options`) and
:meth:`Task.extras` (values of the scored run besides its tables, in ``Scores.extra``,
which the task's report reads)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict

import jurist
from jurist.judges.judge import BaselineJudge, Judge
from jurist.runner import Item
from jurist.tasks import Task, read_once, register_task
from jurist.tasks._contract import Scores, recorded_options
from support import run_cli


class _Options(BaseModel):
    model_config = ConfigDict(extra="forbid")
    unit: str = "chars"
    long_from: int = 10


class _Rows:
    def __init__(self, path: str | Path) -> None:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
        self.path, self.rows = str(path), [json.loads(line) for line in lines if line.strip()]

    def describe(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": "rows", "items": len(self.rows)}


class _Lengths(Task):
    """How long is each text? Its report names the longest text, an object of the scored run."""

    name = "test-run-options-lengths"
    Options = _Options
    gold_from_run = True

    def read(self, path: str | Path, options: BaseModel) -> _Rows:
        return _Rows(path)

    def items(self, dataset: _Rows, options: BaseModel) -> list[Item]:
        return [Item(id=str(row["id"]), inputs={"text": row["text"]}) for row in dataset.rows]

    def baseline(self, options: BaseModel) -> Judge:
        return BaselineJudge(lambda text: {"length": len(text)}, name="length", version="1")

    def run_options(self, run: Path, options: BaseModel) -> BaseModel:
        return recorded_options(self, run, options)

    def summarize(self, items: pd.DataFrame, options: BaseModel, gold: str | Path | None) -> dict[str, Any]:
        long_from = _Options.model_validate(options.model_dump()).long_from
        return {"long": int((items["length"] >= long_from).sum()), "long_from": long_from}

    def extras(self, items: pd.DataFrame, gold: str | Path | None, options: BaseModel) -> dict[str, Any]:
        assert gold is not None
        dataset = read_once("dataset", gold, lambda: self.read(gold, options))
        longest = max(dataset.rows, key=lambda row: len(row["text"]))
        return {"longest": longest}

    def report(self, scores: Scores) -> str:
        longest = scores.extra["longest"]
        return f"# lengths\n\nlongest: {longest['id']} ({scores.summary['long']} long)\n"


def _data(tmp_path: Path) -> Path:
    path = tmp_path / "rows.jsonl"
    texts = {"a": "short", "b": "a rather long text", "c": "mid-length"}
    path.write_text(
        "".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in texts.items()), encoding="utf-8"
    )
    return path


def test_a_run_is_scored_with_the_options_it_was_judged_with_unless_given(tmp_path):
    register_task(_Lengths)
    run = jurist.judge(_Lengths.name, _data(tmp_path), out=tmp_path / "run", options={"long_from": 11})
    assert run.summary["long"] == 1 and run.summary["long_from"] == 11
    again = jurist.score(_Lengths.name, tmp_path / "run")  # no options given: the run's
    assert again.summary["long"] == 1 and again.summary["long_from"] == 11
    given = jurist.score(_Lengths.name, tmp_path / "run", options={"long_from": 5})
    assert given.summary["long"] == 3 and given.summary["long_from"] == 5
    # The command line likewise.
    assert run_cli(["score", _Lengths.name, str(tmp_path / "run"), "--json"]) == 0


def test_recorded_options_take_only_values_other_than_the_defaults(tmp_path):
    task = _Lengths()
    options = task.options({})
    assert recorded_options(task, tmp_path, options) is options  # no manifest
    (tmp_path / "manifest.json").write_text(
        json.dumps({"task": task.name, "task_options": {"unit": "chars", "long_from": 3, "other": 1}}),
        encoding="utf-8",
    )
    completed = recorded_options(task, tmp_path, options)
    assert completed.model_dump() == {"unit": "chars", "long_from": 3}
    assert completed.model_fields_set == {"long_from"}
    assert recorded_options(task, tmp_path, task.options({"long_from": 8})).model_dump()["long_from"] == 8
    (tmp_path / "manifest.json").write_text(json.dumps({"task": "another", "task_options": {"long_from": 3}}))
    assert recorded_options(task, tmp_path, options) is options  # another task's run


def test_extras_reach_the_report_and_scores_extra(tmp_path):
    register_task(_Lengths)
    run = jurist.judge(_Lengths.name, _data(tmp_path), out=tmp_path / "run")
    assert run.scores.extra["longest"]["id"] == "b"
    assert (tmp_path / "run" / "report.md").read_text(
        encoding="utf-8"
    ) == "# lengths\n\nlongest: b (2 long)\n"
    scored = jurist.score(_Lengths.name, tmp_path / "run")
    assert scored.extra["longest"]["id"] == "b" and scored.report == run.report
    assert Task().extras(pd.DataFrame(), None, Task().options()) == {}
    assert Task().run_options(tmp_path, Task().options()) == Task().options()
