"""The Rej* and ED* judges on their own: answers with (optional) gold yes/no labels, judged
through the batch runner, and what a run of judgments sums to.

Data: a file of answers (:func:`jurist.datasets.rgb.load_rgb_judgments`; the bundled
``sample:rgb-judgments``). Rej* (``rgb-rejection``) reads the question and the answer and
says whether the answer ``rejects``; ED* (``rgb-error-detection``) reads the answer only and
says whether it ``detects_error`` (reports factual errors in the documents).

Summary of a run: the judged rate ``count / nums`` of ``true`` verdicts over the items
judged (:func:`jurist.metrics.rgb.judged_rate`) and, against the gold labels of the rows
that carry one, accuracy, Cohen's kappa, the confusion counts and per-class recall and
precision (:mod:`jurist.metrics.gold_agreement`). Failed items are counted, never scored.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from jurist.datasets.io import sha256_file
from jurist.datasets.rgb.loader import RGBJudgmentRow, load_rgb_judgments
from jurist.datasets.samples import resolve_input
from jurist.metrics.gold_agreement import accuracy, agreement_by_label, cohens_kappa, confusion_matrix
from jurist.metrics.rgb import judged_rate
from jurist.runner import Item
from jurist.tasks._read_once import read_once
from jurist.tasks.calibration_rows import per_class_columns
from jurist.tasks.rgb.judges import RGB_JUDGE_CLASSES, RGB_JUDGE_LABELS, JudgeKind, judge_inputs

__all__ = ["RGBJudgments", "gold_judgments", "judgment_items", "read_judgments", "summarize_judgments"]


@dataclass(frozen=True)
class RGBJudgments:
    """A read file of answers to judge (with their gold labels, where given)."""

    path: Path
    rows: list[RGBJudgmentRow]
    sha256: str

    def __iter__(self) -> Iterator[RGBJudgmentRow]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def describe(self) -> dict[str, Any]:
        """The dataset identity a run directory records (path, content hash, items)."""
        return {"path": str(self.path), "sha256": self.sha256, "items": len(self.rows)}


def read_judgments(path: str | Path) -> RGBJudgments:
    """Read a file of answers (``sample:NAME`` allowed); errors name the file, line and field."""
    file = resolve_input(path)
    return RGBJudgments(path=file, rows=load_rgb_judgments(file), sha256=sha256_file(file))


def gold_judgments(path: str | Path) -> RGBJudgments:
    """The gold file's answers (:func:`read_judgments`), read once inside
    :func:`~jurist.tasks._read_once.reading_once` for the summary and the gold columns."""
    return read_once("rgb judgments", path, lambda: read_judgments(path))


def judgment_items(kind: JudgeKind, dataset: RGBJudgments) -> list[Item]:
    """One runner item per answer: its id and the judge's inputs."""
    return [Item(id=str(row.id), inputs=judge_inputs(kind, row.question, row.answer)) for row in dataset]


def _gold_agreement(kind: JudgeKind, items: pd.DataFrame, gold: str | Path) -> dict[str, Any]:
    label = RGB_JUDGE_LABELS[kind]
    yes, no = RGB_JUDGE_CLASSES[kind]
    labels = {str(row.id): row.label(label) for row in gold_judgments(gold) if row.label(label) is not None}
    gold_labels: list[str] = []
    predicted: list[str] = []
    if label in items:
        ok = items[items["status"] == "ok"]
        for item_id, verdict in zip(ok["id"].astype(str), ok[label], strict=True):
            if item_id in labels:
                gold_labels.append(yes if labels[item_id] else no)
                predicted.append(yes if bool(verdict) else no)
    result: dict[str, Any] = {"gold_items": len(labels), "matched": len(gold_labels)}
    if gold_labels:
        matrix = confusion_matrix(gold_labels, predicted, (yes, no))
        result["accuracy"] = accuracy(gold_labels, predicted)
        result["kappa"] = cohens_kappa(gold_labels, predicted, (yes, no))
        result["confusion"] = {
            "tp": int(matrix[0, 0]),
            "fn": int(matrix[0, 1]),
            "fp": int(matrix[1, 0]),
            "tn": int(matrix[1, 1]),
        }
        result.update(per_class_columns(agreement_by_label(gold_labels, predicted)))
    return result


def summarize_judgments(kind: JudgeKind, items: pd.DataFrame, gold: str | Path | None) -> dict[str, Any]:
    """The judged rate over the judged items and, with ``gold``, agreement with its labels."""
    label = RGB_JUDGE_LABELS[kind]
    flags = [bool(value) for value in items[items["status"] == "ok"][label]] if label in items else []
    rate = judged_rate(flags)
    summary: dict[str, Any] = {label: {"rate": rate.rate, "count": rate.count, "nums": rate.total}}
    if gold is not None:
        summary["agreement"] = _gold_agreement(kind, items, gold)
    return summary
