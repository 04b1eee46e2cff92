"""A metric declared once (``jurist.Metric``) reaches every place a task's figures go:
``summary.json``, ``jurist score --json``, ``report.md``, ``report.html``, ``jurist tasks
show``, the run comparison's headline figures, and the calibration leaderboard (CSV,
Markdown, HTML) that ``jurist calibrate`` builds without a ``calibration`` part of the task's.
(MLflow: ``tests/tracking/test_mlflow_tracking.py``.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import jurist
from jurist.errors import ConfigError
from jurist.judges.config import JudgeConfig
from jurist.jury.gold_row import calibration_row
from jurist.jury.loop import one_judge
from jurist.runner import iter_run_results
from jurist.tasks import get_task, register_task
from jurist.tasks._metric import MetricValue, metric_list, metric_values
from jurist.tasks.calibration_rows import JudgeSpec, judge_run_dir
from jurist.view.runs import headline_metrics
from metric_task import CapsMetricTask, write_texts
from support import run_cli

WILSON_3_OF_4 = (0.3006418, 0.9544127)


@pytest.fixture
def texts(tmp_path: Path) -> Path:
    register_task(CapsMetricTask)
    return write_texts(tmp_path / "texts.jsonl")


def test_a_declared_metric_reaches_summary_score_reports_and_comparison(texts: Path, tmp_path: Path, capsys):
    run = tmp_path / "run"
    assert run_cli(["judge", "test-caps-metric", str(texts), "--out", str(run), "--no-progress"]) == 0
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    assert summary["caps_agreement"] == pytest.approx(0.75)
    assert (summary["caps_agreement_low"], summary["caps_agreement_high"]) == pytest.approx(WILSON_3_OF_4)
    report = (run / "report.md").read_text(encoding="utf-8")
    assert "| caps_agreement | 0.750 [0.301, 0.954] | higher | share of texts judged as gold says |" in report
    html = (run / "report.html").read_text(encoding="utf-8")
    assert "caps_agreement" in html and "0.750 [0.301, 0.954]" in html
    assert headline_metrics(summary)["caps_agreement"] == pytest.approx(0.75)  # jurist view's compare
    capsys.readouterr()

    assert run_cli(["score", "test-caps-metric", str(run), "--gold", str(texts), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["caps_agreement"] == pytest.approx(0.75)
    # Without gold, a metric that needs gold is not computed (rather than guessed).
    assert "caps_agreement" not in jurist.score("test-caps-metric", run).summary

    assert run_cli(["tasks", "show", "test-caps-metric", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["metrics"] == {"caps_agreement": "share of texts judged as gold says"}
    assert "calibrate" in shown["verbs"]


def test_calibrate_puts_the_declared_metric_in_every_leaderboard_file(texts: Path, tmp_path: Path):
    out = tmp_path / "cal"
    assert run_cli(["calibrate", "test-caps-metric", "--gold", str(texts), "--out", str(out)]) == 0
    board = pd.read_csv(out / "leaderboard.csv")
    row = board.iloc[0]
    assert (row["task"], row["dataset"], row["judge"], row["items"], row["failed"]) == (
        "test-caps-metric",
        "texts",
        "baseline",
        4,
        0,
    )
    assert row["caps_agreement"] == pytest.approx(0.75)
    assert (row["caps_agreement_low"], row["caps_agreement_high"]) == pytest.approx(WILSON_3_OF_4)
    assert row["calls"] == 0 and row["failed_rate"] == 0.0
    markdown = (out / "leaderboard.md").read_text(encoding="utf-8")
    assert "| dataset | judge | caps agreement |" in markdown
    assert "| texts | baseline | 0.750 [0.301, 0.954] |" in markdown
    html = (out / "leaderboard.html").read_text(encoding="utf-8")
    assert "caps agreement" in html and "share of texts judged as gold says" in html
    assert "0.750 [0.301, 0.954]" in html
    saved = json.loads((out / "calibration.json").read_text(encoding="utf-8"))
    assert saved["settings"]["metrics"] == {"caps_agreement": "share of texts judged as gold says"}


def test_a_task_without_gold_metrics_still_cannot_be_calibrated(tmp_path: Path):
    class Plain(CapsMetricTask):
        name = "test-plain-metric"
        metrics = [jurist.Metric("judged", lambda items: float(len(items)), "items judged")]

    register_task(Plain)
    assert "calibrate" not in get_task("test-plain-metric").verbs
    data = write_texts(tmp_path / "texts.jsonl")
    with pytest.raises(ConfigError, match="cannot be calibrated"):
        jurist.calibrate("test-plain-metric", [data], out=tmp_path / "cal")
    run = jurist.judge("test-plain-metric", data, out=tmp_path / "run", progress=False)
    assert run.summary["judged"] == 4.0 and "judged_low" not in run.summary


def test_metric_declarations_and_values_are_checked():
    with pytest.raises(ConfigError, match="must not end in '_low'"):
        jurist.Metric("kappa_low", len)
    with pytest.raises(ConfigError, match="must start with a letter"):
        jurist.Metric("two words", len)
    with pytest.raises(ConfigError, match="'x' is declared twice"):
        metric_list([jurist.Metric("x", len), jurist.Metric("x", len)])
    assert [m.description for m in metric_list({"a": "the a"})] == ["the a"]
    items = pd.DataFrame({"id": ["1"], "status": ["ok"]})
    text = jurist.Metric("t", lambda items: "high")
    with pytest.raises(ConfigError, match="metric 't' returned str 'high'; expected a number"):
        metric_values([text], items, None, with_gold=False, taken={})
    with pytest.raises(ConfigError, match="the summary already has a figure of that name"):
        metric_values([jurist.Metric("items", len)], items, None, with_gold=False, taken={"items": 1})
    failing = jurist.Metric("boom", lambda items: 1 / 0)
    with pytest.raises(ConfigError, match="metric 'boom' failed: ZeroDivisionError"):
        metric_values([failing], items, None, with_gold=False, taken={})
    interval = jurist.Metric("m", lambda items: MetricValue(0.5, 0.25, float("nan")))
    assert metric_values([interval], items, None, with_gold=False, taken={}) == {
        "m": 0.5,
        "m_low": 0.25,
        "m_high": None,
    }


def test_a_yaml_task_subclass_keeps_its_figures_and_adds_its_metric_to_summary_and_leaderboard(
    tmp_path: Path,
):
    from jurist.tasks.declarative import DeclarativeTask

    spec = {
        "name": "test-yaml-metric",
        "instructions": "Is the text in capitals?",
        "inputs": ["text"],
        "output": {"kind": "bool"},
        "gold": "caps",
        "baseline": {"rules": [{"pattern": "^[A-Z]+$", "value": True}], "default": False},
    }

    def wrong(items: pd.DataFrame, gold: object) -> float:
        return float((items["correct"] == False).sum())  # noqa: E712 - the table's own column

    class Counted(DeclarativeTask):
        metrics = [
            jurist.Metric("wrong", wrong, "verdicts unlike gold", higher_is_better=False, needs_gold=True)
        ]

        def __init__(self) -> None:
            super().__init__(spec)

    register_task(Counted)
    data = write_texts(tmp_path / "texts.jsonl")
    run = jurist.judge("test-yaml-metric", data, out=tmp_path / "run", progress=False)
    assert run.summary["wrong"] == 1.0 and run.summary["agreement"]["accuracy"] == pytest.approx(0.75)
    assert "| wrong | 1.000 | lower | verdicts unlike gold |" in run.report
    assert {"accuracy", "kappa", "wrong"} <= set(get_task("test-yaml-metric").describe()["metrics"])
    board = jurist.calibrate("test-yaml-metric", [data], out=tmp_path / "cal").leaderboard
    assert board.loc[0, "wrong"] == 1.0 and board.loc[0, "accuracy"] == pytest.approx(0.75)
    assert "| texts | baseline | 1.000 |" in (tmp_path / "cal" / "leaderboard.md").read_text(encoding="utf-8")


def test_the_default_calibration_row_is_over_the_run_of_what_calibrate_judges_by(texts: Path, tmp_path: Path):
    task = get_task("test-caps-metric")
    spec = JudgeSpec("baseline", JudgeConfig())
    asked: list[tuple[Any, ...]] = []

    def two_items(data, out, options, retry_failed, progress, /, *, only=None):  # a JudgeBy
        asked.append((Path(data), out, retry_failed, progress, only))
        return one_judge(task, spec.config)(data, out, options, retry_failed, progress, only=["a", "c"])

    row, _ = calibration_row(task, texts, spec, tmp_path / "cal", {}, False, two_items)
    run_dir = judge_run_dir(tmp_path / "cal", spec) / "texts"
    assert asked == [(texts, run_dir, False, False, None)]
    # The row is over the run that judge_by wrote: the two texts it judged, not the file's four.
    assert (row["items"], row["failed"], row["run_dir"]) == (2, 0, str(run_dir))
    assert {result.id for result in iter_run_results(run_dir)} == {"a", "c"}
    # One judge alone (what calibrate hands for a single judge) judges the whole file.
    alone, _ = calibration_row(task, texts, spec, tmp_path / "solo", {}, False, one_judge(task, spec.config))
    assert alone["items"] == 4
