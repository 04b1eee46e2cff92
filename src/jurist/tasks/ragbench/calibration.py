"""RAGBench calibration: the judge's support label against RAGBench's ``adherence_score``.

Classes ``supported`` / ``unsupported``; the judge's label is its adherence (every
response sentence fully supported); its score for AUROC is ``1 − adherence_fraction``
with ``unsupported`` as the positive class (RAGBench's hallucination AUROC). Rows without
a gold ``adherence_score`` are not compared; the row's ``no_gold_label`` column counts them.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel

from jurist.datasets.ragbench import load_ragbench
from jurist.datasets.samples import resolve_input
from jurist.errors import InputError
from jurist.metrics.gold_agreement import agreement_by_label, auroc_from_counts
from jurist.runner import call_blocking
from jurist.tasks._contract import JudgeBy
from jurist.tasks.calibration_rows import (
    JudgeSpec,
    bootstrap,
    dataset_name,
    judge_run_dir,
    label_agreement,
    leaderboard_row,
    run_results,
)


def calibration_row(
    judge_by: JudgeBy,
    options: BaseModel,
    gold_path: str | Path,
    spec: JudgeSpec,
    out: Path,
    settings: dict[str, Any],
    progress: bool,
) -> tuple[dict[str, Any], pd.DataFrame]:
    """One leaderboard row: accuracy, kappa, AUROC (with intervals), per-class rates, usage,
    of the run ``judge_by`` judges the gold file into (with the task's ``options``)."""
    dataset = dataset_name(gold_path)
    file = resolve_input(gold_path)
    gold: dict[str, bool] = {}
    unlabeled = 0
    for gold_row in load_ragbench(file):
        if gold_row.adherence_score is None:
            unlabeled += 1
        else:
            gold[gold_row.id] = gold_row.adherence_score
    if not gold:
        raise InputError("no row carries a gold support label (adherence_score)", path=file)
    run_dir = judge_run_dir(out, spec) / dataset
    run = call_blocking(judge_by, file, run_dir, options, False, progress)
    items = run.items.set_index("id")
    results = [r for r in run_results(run_dir) if r.id in gold]
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
    figures: dict[str, Any] = {"no_gold_label": unlabeled}
    figures.update(label_agreement(gold_labels, predicted, labels, settings))
    distinct = sorted(set(scores))
    position = {score: i for i, score in enumerate(distinct)}
    cells = np.zeros((len(scores), 2 * len(distinct)))
    for i, (g, score) in enumerate(zip(gold_labels, scores, strict=True)):
        offset = 0 if g == "unsupported" else len(distinct)
        cells[i, offset + position[score]] = 1
    figures["auroc"], figures["auroc_low"], figures["auroc_high"] = bootstrap(
        cells, auroc_from_counts, settings
    )
    by_label = agreement_by_label(gold_labels, predicted, confidence=settings["confidence"])
    row_out = leaderboard_row(
        "ragbench",
        dataset,
        spec,
        run_dir,
        items=len(gold),
        failed=failed,
        results=results,
        by_label=by_label,
        figures=figures,
    )
    return row_out, by_label.assign(dataset=dataset, judge=spec.name)
