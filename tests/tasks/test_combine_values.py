"""A recipe's part that hands its scored run's values to the combination
(:meth:`Task.combine_values`) instead of writing exports: the values reach ``combine`` through
``Scores.extra``, made of the run's results in the order of the data it judged (read once,
the loop's own), and the part's run directory holds no exports, ``write`` or not."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from pydantic import BaseModel

import jurist
from jurist.judges.judge import BaselineJudge, Judge
from jurist.runner import Item, iter_run_results
from jurist.tasks import Task, read_once, register_task
from jurist.tasks._contract import JudgeRun, NoOptions, Part, Recipe, Scores

read_paths: list[str] = []
EXPORTS = ("summary.json", "report.md", "items.csv", "items.parquet", "results.jsonl")


class _Rows:
    def __init__(self, path: str | Path, rows: list[dict[str, Any]]) -> None:
        self.path, self.rows = str(path), rows

    def describe(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": "rows", "items": len(self.rows)}


class _Lengths(Task):
    """A part: how long is each text? It hands the lengths, in the data's order, to the combination."""

    name = "test-handing-lengths"
    gold_from_run = True

    def read(self, path: str | Path, options: BaseModel) -> _Rows:
        read_paths.append(str(path))
        lines = Path(path).read_text(encoding="utf-8").splitlines()
        return _Rows(path, [json.loads(line) for line in lines if line.strip()])

    def items(self, dataset: _Rows, options: BaseModel) -> list[Item]:
        # Judged in reverse: the values follow the data's order, not the results'.
        return [Item(id=str(row["id"]), inputs={"text": row["text"]}) for row in reversed(dataset.rows)]

    def baseline(self, options: BaseModel) -> Judge:
        return BaselineJudge(lambda text: {"length": len(text)}, name="length", version="1")

    def combine_values(self, run: Path, gold: str | Path | None, options: BaseModel) -> dict[str, Any]:
        assert gold is not None
        dataset = read_once("dataset", gold, lambda: self.read(gold, options))
        results = {result.id: result for result in iter_run_results(run)}
        lengths = [(row["id"], results[str(row["id"])].output["length"]) for row in dataset.rows]
        return {"lengths": lengths}


class _Combined(Task):
    name = "test-handing"

    def plan(self, data: str | Path, options: BaseModel) -> Recipe:
        return Recipe(parts=[Part(name="lengths", task=_Lengths(), options=NoOptions(), data=data)])

    def combine(
        self, recipe: Recipe, runs: Mapping[str, JudgeRun], out: Path, config: Any, options: BaseModel
    ) -> Scores:
        part = runs["lengths"].scores
        summary = {"lengths": part.extra["lengths"], "items": part.summary["items"]}
        return Scores(items=pd.DataFrame(part.extra["lengths"]), summary=summary, report="# lengths\n")


@pytest.fixture
def texts(tmp_path: Path) -> Path:
    register_task(_Combined)
    data = tmp_path / "texts.jsonl"
    rows = [{"id": 1, "text": "a"}, {"id": 2, "text": "abc"}, {"id": 3, "text": "ab"}]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    read_paths.clear()
    return data


def test_a_part_hands_its_values_to_the_combination_and_writes_no_exports(texts: Path, tmp_path: Path):
    out = tmp_path / "run"
    run = jurist.judge("test-handing", texts, out=out, progress=False)
    assert run.summary == {"lengths": [(1, 1), (2, 3), (3, 2)], "items": 3}
    assert read_paths == [str(texts)]  # the part's scoring was handed the dataset the loop read
    part = out / "lengths"
    assert (part / "manifest.json").is_file()
    assert not [name for name in EXPORTS if (part / name).exists()]
    assert (out / "report.html").is_file()  # the combined run's views, as for any run


def test_a_part_scored_on_its_own_reads_its_data_once_and_still_writes_nothing(texts: Path, tmp_path: Path):
    out = tmp_path / "run"
    jurist.judge("test-handing", texts, out=out, progress=False)
    part = out / "lengths"
    before = {path.name: path.stat().st_mtime_ns for path in part.iterdir()}
    read_paths.clear()
    scores = _Lengths().score(part, NoOptions(), write=True)
    assert scores.extra["lengths"] == [(1, 1), (2, 3), (3, 2)]
    assert scores.summary["items"] == 3 and scores.summary["ok"] == 3  # the contract's summary
    assert read_paths == [str(texts)]  # the data file the manifest records (gold_from_run)
    assert {path.name: path.stat().st_mtime_ns for path in part.iterdir()} == before


def test_a_task_that_hands_nothing_writes_its_exports(texts: Path, tmp_path: Path):
    class _Plain(_Lengths):
        name = "test-handing-plain"

        def combine_values(self, run: Path, gold: str | Path | None, options: BaseModel) -> None:
            return None

    run = tmp_path / "plain"
    from jurist.jury.loop import run_judgment

    judged = run_judgment(_Plain(), texts, run, jurist.JudgeConfig(), NoOptions(), progress=False)
    assert "lengths" not in judged.scores.extra
    assert all((run / name).is_file() for name in ("summary.json", "report.md", "items.csv"))
