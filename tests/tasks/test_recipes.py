"""A task judged as several ordinary runs (:meth:`Task.plan`, :meth:`Task.combine`): each part
is a run of the judging loop in its own sub-directory, a later part reads an earlier one's run,
and the task combines them into one report; nothing is judged again when the run resumes."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from pydantic import BaseModel

import jurist
from jurist.errors import ConfigError
from jurist.judges.judge import BaselineJudge, Judge
from jurist.jury.loop import run_judgment, run_recipe
from jurist.runner import Item, iter_run_results
from jurist.tasks import Task, register_task
from jurist.tasks._contract import JudgeRun, NoOptions, Part, Recipe, Scores

CALLS: list[str] = []


class _Rows:
    def __init__(self, rows: list[dict[str, Any]], sha256: str) -> None:
        self.rows, self.sha256 = rows, sha256

    def describe(self) -> dict[str, Any]:
        return {"path": "rows", "sha256": self.sha256, "items": len(self.rows)}


class _Caps(Task):
    """Part one: is a text written in capitals?"""

    name = "test-recipe-caps"

    def read(self, path: str | Path, options: BaseModel) -> _Rows:
        text = Path(path).read_text(encoding="utf-8")
        return _Rows([json.loads(line) for line in text.splitlines() if line.strip()], str(hash(text)))

    def items(self, dataset: _Rows, options: BaseModel) -> list[Item]:
        return [Item(id=str(row["id"]), inputs={"text": row["text"]}) for row in dataset.rows]

    def baseline(self, options: BaseModel) -> Judge:
        def caps(text: str) -> dict[str, Any]:
            CALLS.append(text)
            return {"verdict": text.isupper()}

        return BaselineJudge(caps, name="caps", version="1")


class _Loud(Task):
    """Part two: reads the verdicts of a part-one run and says which are loud."""

    name = "test-recipe-loud"

    def read(self, path: str | Path, options: BaseModel) -> _Rows:
        rows = [{"id": r.id, "verdict": r.output["verdict"]} for r in iter_run_results(path) if r.output]
        return _Rows(rows, f"of {Path(path).name}")

    def items(self, dataset: _Rows, options: BaseModel) -> list[Item]:
        return [Item(id=row["id"], inputs={"verdict": row["verdict"]}) for row in dataset.rows]

    def baseline(self, options: BaseModel) -> Judge:
        return BaselineJudge(lambda verdict: {"loud": bool(verdict)}, name="loud", version="1")


class _Both(Task):
    """Caps, then loud over the caps run; one report at the top."""

    name = "test-recipe"

    def plan(self, data: str | Path, options: BaseModel) -> Recipe:
        caps = Part(name="parts/caps", task=_Caps(), options=NoOptions(), data=data, says="caps")
        loud = Part(name="parts/loud", task=_Loud(), options=NoOptions(), reads="parts/caps")
        return Recipe(parts=[caps, loud], notes=["two parts"], about=str(data))

    def combine(
        self, recipe: Recipe, runs: Mapping[str, JudgeRun], out: Path, config: Any, options: BaseModel
    ) -> Scores:
        loud = runs["parts/loud"].scores.items
        summary = {"data": recipe.about, "loud": int(loud["loud"].sum()), "parts": sorted(runs)}
        (out / "combined.json").write_text(json.dumps(summary), encoding="utf-8")
        return Scores(items=pd.DataFrame(loud), summary=summary, report="# both\n")


@pytest.fixture
def texts(tmp_path: Path) -> Path:
    register_task(_Both)
    data = tmp_path / "texts.jsonl"
    rows = [{"id": 1, "text": "HELLO"}, {"id": 2, "text": "hello"}, {"id": 3, "text": "STOP"}]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    CALLS.clear()
    return data


def test_a_recipe_runs_its_parts_as_ordinary_runs_and_combines_them(texts: Path, tmp_path: Path, capsys):
    out = tmp_path / "run"
    run = jurist.judge("test-recipe", texts, out=out)
    assert run.summary == {"data": str(texts), "loud": 2, "parts": ["parts/caps", "parts/loud"]}
    assert json.loads((out / "combined.json").read_text()) == run.summary
    assert (out / "report.html").is_file()  # the verb's views, as for any run
    for part, task in (("caps", "test-recipe-caps"), ("loud", "test-recipe-loud")):
        manifest = json.loads((out / "parts" / part / "manifest.json").read_text())
        assert manifest["task"] == task and manifest["status"] == "finished"
        assert (out / "parts" / part / "items.csv").is_file()  # each part's own exports
    assert (
        json.loads((out / "parts" / "loud" / "manifest.json").read_text())["dataset"]["sha256"] == "of caps"
    )
    err = capsys.readouterr().err
    assert err.index("two parts") < err.index("caps")
    assert len(CALLS) == 3
    again = jurist.judge("test-recipe", texts, out=out, progress=False)
    assert again.summary == run.summary and len(CALLS) == 3  # resumed: nothing judged again


def test_a_recipe_is_not_a_cascade_stage_and_reads_only_parts_run_before(texts: Path, tmp_path: Path):
    task = _Both()
    with pytest.raises(ConfigError, match="judged as several runs"):
        run_judgment(
            task, texts, tmp_path / "a", jurist.JudgeConfig(), NoOptions(), only={"1"}, progress=False
        )
    backwards = Recipe(parts=[Part(name="loud", task=_Loud(), options=NoOptions(), reads="caps")])
    with pytest.raises(ConfigError, match="part 'loud' reads 'caps', which has not run before it"):
        run_recipe(task, backwards, tmp_path / "b", jurist.JudgeConfig(), NoOptions(), progress=False)


def test_no_task_defines_a_judge_of_its_own():
    from jurist.tasks import get_task, task_names

    for name in task_names():
        assert not hasattr(type(get_task(name)), "judge"), name
