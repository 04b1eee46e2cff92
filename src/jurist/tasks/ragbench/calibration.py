"""RAGBench calibration: the judge's support label against RAGBench's ``adherence_score``.

Classes ``supported`` / ``unsupported``; the judge's label is its adherence (every
response sentence fully supported); its score for AUROC is ``1 − adherence_fraction``
with ``unsupported`` as the positive class (RAGBench's hallucination AUROC). Rows without
a gold ``adherence_score`` are not compared; the row's ``no_gold_label`` column counts them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel

from jurist.datasets.ragbench import load_ragbench
from jurist.errors import InputError
from jurist.metrics.gold_agreement import agreement_by_label, auroc_from_counts
from jurist.tasks._calibration import CalibrationPlan, GoldAgreement
from jurist.tasks._results import JudgeRun
from jurist.tasks.calibration_rows import bootstrap, label_agreement, run_results

__all__ = ["calibration"]


def calibration(options: BaseModel, file: Path, settings: Mapping[str, Any]) -> CalibrationPlan:
    """Every row of the gold file judged with the task's ``options``; the comparison gives
    accuracy, kappa, AUROC (with intervals) and the per-class rates of the rows that carry a
    gold ``adherence_score``.

    Raises:
        InputError: No row carries a gold support label.
    """
    gold: dict[str, bool] = {}
    unlabeled = 0
    for gold_row in load_ragbench(file):
        if gold_row.adherence_score is None:
            unlabeled += 1
        else:
            gold[gold_row.id] = gold_row.adherence_score
    if not gold:
        raise InputError("no row carries a gold support label (adherence_score)", path=file)

    def compare(run: JudgeRun) -> GoldAgreement:
        return _agreement(run, gold, unlabeled, settings)

    return CalibrationPlan(options=options, compare=compare)


def _agreement(
    run: JudgeRun, gold: dict[str, bool], unlabeled: int, settings: Mapping[str, Any]
) -> GoldAgreement:
    items = run.items.set_index("id")
    results = [r for r in run_results(run.run_dir) if r.id in gold]
    labels = ("supported", "unsupported")
    gold_labels: list[str] = []
    predicted: list[str] = []
    scores: list[float] = []
    failed = 0
    for item_id, supported in gold.items():
        row = items.loc[item_id] if item_id in items.index else None
        verdict = None if row is None or row["status"] != "ok" else row.get("adherence")
        if row is None or verdict is None or (isinstance(verdict, float) and math.isnan(verdict)):
            failed += 1
            continue
        gold_labels.append(labels[0] if supported else labels[1])
        predicted.append(labels[0] if bool(verdict) else labels[1])
        scores.append(1.0 - float(row["adherence_fraction"]))
    stats = dict(settings)
    figures: dict[str, Any] = {"no_gold_label": unlabeled}
    figures.update(label_agreement(gold_labels, predicted, labels, stats))
    distinct = sorted(set(scores))
    position = {score: i for i, score in enumerate(distinct)}
    cells = np.zeros((len(scores), 2 * len(distinct)))
    for i, (g, score) in enumerate(zip(gold_labels, scores, strict=True)):
        offset = 0 if g == "unsupported" else len(distinct)
        cells[i, offset + position[score]] = 1
    figures["auroc"], figures["auroc_low"], figures["auroc_high"] = bootstrap(cells, auroc_from_counts, stats)
    by_label = agreement_by_label(gold_labels, predicted, confidence=settings["confidence"])
    return GoldAgreement(items=len(gold), failed=failed, results=results, figures=figures, by_label=by_label)
