"""Scoring against gold is one path (``Task.score``) composed of declared parts: how gold joins
the per-item table (``gold_columns``), the tables of units of several items (``extras``),
whether a given gold file is read at all (``reads_gold``), and whether a run is scored against
the data it judged when no gold file is given (``gold_from_run``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd
import pytest
from pydantic import BaseModel

import jurist
from jurist import Metric
from jurist.datasets.rgb import loader as rgb_loader
from jurist.datasets.samples import resolve_input
from jurist.tasks import register_task
from metric_task import CapsMetricTask, Texts, write_texts
from support import run_cli


def gold_agreement(items: pd.DataFrame, gold: Any) -> float | None:
    """Share of judged texts that agree with gold, read from the per-item table's ``agrees``."""
    if "agrees" not in items:
        raise AssertionError("the metric was given the table without its gold columns")
    agrees = items["agrees"].dropna()
    return float(agrees.mean()) if len(agrees) else None


class GoldJoinTask(CapsMetricTask):
    """Declares only how gold joins its per-item table; its metric reads the joined columns."""

    name = "test-gold-join"
    metrics: ClassVar[list[Metric]] = [
        Metric("gold_agreement", gold_agreement, "agrees with gold", needs_gold=True)
    ]

    def gold_columns(self, items: pd.DataFrame, gold: str | Path, options: BaseModel) -> pd.DataFrame:
        truth = {str(row["id"]): bool(row["caps"]) for row in Texts(Path(gold)).rows}
        table = items.copy()
        table["gold_caps"] = [truth.get(str(item)) for item in table["id"]]
        table["agrees"] = [
            None if value is None else bool(verdict) == value
            for verdict, value in zip(table["verdict"], table["gold_caps"], strict=True)
        ]
        return table

    def summarize(self, items: pd.DataFrame, options: BaseModel, gold: str | Path | None) -> dict[str, Any]:
        # What summarize is given: the table before the gold columns join it.
        return {"summarized_with_gold_columns": "gold_caps" in items, "summarized_gold": gold is not None}


class RunGoldTask(GoldJoinTask):
    """Its data carries its gold: scored without a gold file, against the data the run judged."""

    name = "test-gold-from-run"
    gold_from_run = True


class NoGoldTask(GoldJoinTask):
    """Reads no gold file: one given to scoring is ignored."""

    name = "test-no-gold"
    reads_gold = False


class UnitTableTask(GoldJoinTask):
    """Declares a table of units (here: the texts grouped by verdict) beside the per-item table."""

    name = "test-unit-table"

    def extras(self, items: pd.DataFrame, gold: str | Path | None, options: BaseModel) -> dict[str, Any]:
        grouped = items.groupby("verdict").agg(texts=("id", "count"))
        if "agrees" in items:
            grouped["agree"] = items.groupby("verdict")["agrees"].sum()
        return {"by_verdict": grouped.reset_index()}


def _judged(task: type[GoldJoinTask], tmp_path: Path) -> tuple[Path, Path]:
    register_task(task)
    texts = write_texts(tmp_path / "texts.jsonl")
    run = tmp_path / "run"
    assert run_cli(["judge", task.name, str(texts), "--out", str(run), "--no-progress"]) == 0
    return texts, run


def test_gold_columns_join_items_csv_and_the_metric_sees_them_through_score_gold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    texts, run = _judged(GoldJoinTask, tmp_path)
    # jurist judge scores against the data it judged: items.csv holds the gold columns.
    table = pd.read_csv(run / "items.csv")
    assert list(table["gold_caps"]) == [True, False, False, False]
    assert list(table["agrees"]) == [True, True, False, True]
    capsys.readouterr()

    assert run_cli(["score", "test-gold-join", str(run), "--gold", str(texts), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["gold_agreement"] == pytest.approx(0.75)  # the metric read the joined columns
    assert summary["summarized_with_gold_columns"] is False  # summarize saw the table before
    assert summary["summarized_gold"] is True

    # Scored again without gold and written: no gold columns, no gold metric.
    scores = jurist.score("test-gold-join", run, write=True)
    assert "gold_agreement" not in scores.summary
    assert "gold_caps" not in pd.read_csv(run / "items.csv")
    assert run_cli(["score", "test-gold-join", str(run), "--json"]) == 0
    assert "gold_agreement" not in json.loads(capsys.readouterr().out)


def test_gold_from_run_scores_against_the_judged_data_while_it_is_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    texts, run = _judged(RunGoldTask, tmp_path)
    capsys.readouterr()
    assert run_cli(["score", "test-gold-from-run", str(run), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["gold_agreement"] == pytest.approx(0.75)
    assert summary["summarized_gold"] is True
    assert list(jurist.score("test-gold-from-run", run).items["gold_caps"]) == [True, False, False, False]

    texts.unlink()  # the data is gone: scored without gold, no error
    assert run_cli(["score", "test-gold-from-run", str(run), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert "gold_agreement" not in summary and summary["summarized_gold"] is False


def test_a_task_that_reads_no_gold_ignores_a_given_gold_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    texts, run = _judged(NoGoldTask, tmp_path)
    assert "gold_caps" not in pd.read_csv(run / "items.csv")
    capsys.readouterr()
    assert run_cli(["score", "test-no-gold", str(run), "--gold", str(texts), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert "gold_agreement" not in summary and summary["summarized_gold"] is False


def test_extras_see_the_gold_columns_and_land_in_extra(tmp_path: Path) -> None:
    texts, run = _judged(UnitTableTask, tmp_path)
    scores = jurist.score("test-unit-table", run, gold=texts)
    table = scores.extra["by_verdict"]
    assert table.to_dict(orient="records") == [
        {"verdict": False, "texts": 2, "agree": 2},
        {"verdict": True, "texts": 2, "agree": 1},
    ]
    assert list(jurist.score("test-unit-table", run).extra["by_verdict"].columns) == ["verdict", "texts"]


def test_scoring_an_rgb_judgment_run_reads_its_gold_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "run"
    jurist.judge("rgb-rejection", "sample:rgb-judgments", out=run)
    opened: list[Path] = []
    original = rgb_loader.load_rgb_judgments

    def counted(path: Path, *args: Any, **kwargs: Any) -> Any:
        opened.append(Path(path))
        return original(path, *args, **kwargs)

    monkeypatch.setattr("jurist.tasks.rgb.judgments.load_rgb_judgments", counted)
    scores = jurist.score("rgb-rejection", run, gold="sample:rgb-judgments")
    assert opened == [Path(resolve_input("sample:rgb-judgments"))]
    # The summary's agreement and the per-item gold labels both come from that one read.
    assert scores.summary["agreement"]["matched"] == scores.items["gold_rejects"].notna().sum() > 0
    assert scores.items["agrees"].notna().any()
