"""A task's calibration is a declared part (``Task.calibration``); the ``calibrate`` verb judges.

A Python task that declares only that part (which items of a gold file to judge, its run
folder, and how the run compares with gold) gets every common leaderboard column from the
verb: ``task``, ``dataset``, ``judge``, ``model``, the counts, ``run_dir``, the per-class
rates of its per-label table and the usage of its results. No task package judges a gold
file itself (checked on the source).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from jurist.metrics.gold_agreement import agreement_by_label
from jurist.runner import iter_run_results
from jurist.tasks import CalibrationPlan, GoldAgreement, JudgeRun, get_task, register_task
from metric_task import ROWS, CapsMetricTask, Texts, write_texts
from support import run_cli

SRC = Path(__file__).resolve().parents[2] / "src" / "jurist" / "tasks"
LABELLED = ("a", "b", "c")
"""The texts the task below has gold for: ``d`` is left out, so it is never judged."""


class CapsCalibrationTask(CapsMetricTask):
    """The capitals task with no declared metric: calibrated through its own part only."""

    name = "test-caps-calibration-part"
    metrics = {}  # noqa: RUF012 - no metric: only the part makes it calibratable

    def calibration(self, gold: Path, settings: Mapping[str, Any]) -> CalibrationPlan:
        truth = {str(row["id"]): bool(row["caps"]) for row in Texts(gold).rows if row["id"] in LABELLED}

        def compare(run: JudgeRun) -> GoldAgreement:
            verdicts = dict(zip(run.items["id"], run.items["verdict"], strict=True))
            said = ["caps" if verdicts[item] else "plain" for item in truth]
            gold_labels = ["caps" if value else "plain" for value in truth.values()]
            hits = sum(s == g for s, g in zip(said, gold_labels, strict=True))
            return GoldAgreement(
                items=len(truth),
                failed=0,
                results=list(iter_run_results(run.run_dir)),
                figures={"caps_hits": hits},
                by_label=agreement_by_label(gold_labels, said, confidence=settings["confidence"]),
                settings={"caps_rule": "every letter a capital"},
            )

        return CalibrationPlan(
            options=self.options(), compare=compare, folder="{dataset}.caps", only=list(truth)
        )


def test_a_python_task_with_only_the_calibration_part_gets_the_common_columns_from_the_verb(tmp_path: Path):
    register_task(CapsCalibrationTask)
    assert "calibrate" in get_task(CapsCalibrationTask.name).verbs
    texts = write_texts(tmp_path / "texts.jsonl")
    out = tmp_path / "cal"
    args = ["calibrate", CapsCalibrationTask.name, "--gold", str(texts), "--out", str(out), "--format", "csv"]
    assert run_cli(args) == 0

    board = pd.read_csv(out / "leaderboard.csv")
    assert len(board) == 1
    row = board.iloc[0]
    run_dir = Path(row["run_dir"])
    # The run folder the part names, under the judge's folder the verb picks.
    assert run_dir.name == "texts.caps" and run_dir.parent.name.startswith("baseline-")
    assert run_dir.parent.parent == out / "runs"
    # The verb judged only the items the part names.
    assert sorted(result.id for result in iter_run_results(run_dir)) == list(LABELLED)
    common = ("task", "dataset", "judge", "model", "items", "judgments", "failed", "failed_rate")
    assert [row[name] for name in common] == [
        CapsCalibrationTask.name,
        "texts",
        "baseline",
        "baseline",
        3,
        3,
        0,
        0.0,
    ]
    # The baseline says STOP is in capitals; gold says not: 2 of the 3 labelled texts agree.
    assert row["caps_hits"] == 2
    assert (row["recall_caps"], row["recall_plain"]) == (1.0, 0.5)
    assert (row["precision_caps"], row["precision_plain"]) == (0.5, 1.0)
    assert (row["calls"], row["cache_hits"], row["tokens_per_judgment"]) == (0, 0, 0.0)

    by_label = pd.read_csv(out / "by_label.csv")
    assert set(by_label["dataset"]) == {"texts"} and set(by_label["judge"]) == {"baseline"}
    assert sorted(zip(by_label["side"], by_label["label"], by_label["n"], strict=True)) == [
        ("gold", "caps", 1),
        ("gold", "plain", 2),
        ("judge", "caps", 2),
        ("judge", "plain", 1),
    ]
    settings = json.loads((out / "calibration.json").read_text(encoding="utf-8"))["settings"]
    assert settings["caps_rule"] == "every letter a capital"
    assert len(ROWS) == 4  # the unlabelled text exists in the file, and was not judged


def _names(path: Path) -> set[str]:
    """The names a module's code uses (not its docstrings): imports, names and attributes."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
    return found


@pytest.mark.parametrize("package", ["ragbench", "pairwise", "rgb", "gates", "heritage", "declarative"])
def test_no_task_package_judges_a_gold_file_for_calibration(package: str):
    judging = {"call_blocking", "JudgeBy", "judge_by", "one_judge"}
    used = {
        f"{path.relative_to(SRC)}: {name}"
        for path in sorted((SRC / package).rglob("*.py"))
        for name in _names(path) & judging
    }
    assert used == set()
