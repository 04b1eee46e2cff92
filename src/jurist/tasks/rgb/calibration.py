"""Calibration of RGB's two judges against gold yes/no labels: the ``calibration_row`` of the
tasks ``rgb-rejection`` (Rej*) and ``rgb-error-detection`` (ED*).

Gold: a file of answers with a ``rejects`` and/or ``detects_error`` boolean
(:func:`jurist.datasets.rgb.load_rgb_judgments`; ``sample:rgb-judgments`` is bundled); each
task uses the rows that carry its label. Each judge (the tiered keyword judge for the
baseline config, or the DSPy judge, compiled when the config names a ``program``) judges
every labelled answer as an ordinary run of its task (what ``jurist judge TASK`` runs, with
the run's exports), into ``OUT/runs/{judge}-{fingerprint}/{dataset}.{task}``, so a rerun
reads its judgments back.

Classes: ``rejects`` / ``answers`` (Rej*), ``detects_error`` / ``no_error_reported`` (ED*).
Leaderboard row: accuracy and Cohen's kappa with percentile-bootstrap intervals, per-class
precision and recall (Wilson intervals in ``by_label``; percentile-bootstrap intervals in
the ``precision_{class}_low``/``_high`` and ``recall_{class}_low``/``_high`` columns), the
failed-judgment rate, and tokens, cost and latency per judgment. A yes/no verdict is no
score, so AUROC is n/a. With ``C`` the confusion matrix (gold × judge) of the answered
items: ``recall_c = C[c, c] / Σ_p C[c, p]``, ``precision_c = C[c, c] / Σ_g C[g, c]``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from jurist.datasets.rgb.loader import load_rgb_judgments
from jurist.datasets.samples import resolve_input
from jurist.errors import InputError
from jurist.metrics.gold_agreement import agreement_by_label
from jurist.runner import call_blocking
from jurist.tasks._contract import JudgeBy, Task
from jurist.tasks.calibration_rows import (
    NAN,
    JudgeSpec,
    bootstrap,
    confusion_cells,
    dataset_name,
    judge_run_dir,
    label_agreement,
    leaderboard_row,
    ratio,
    run_results,
)
from jurist.tasks.rgb.judges import (
    RGB_JUDGE_CLASSES,
    RGB_JUDGE_LABELS,
    RGB_JUDGE_TASKS,
    JudgeKind,
)

__all__ = ["calibrate_rgb_judge"]


def _class_intervals(
    gold: list[str], predicted: list[str], classes: tuple[str, str], settings: dict[str, Any]
) -> dict[str, float]:
    """Percentile-bootstrap intervals of each class's precision and recall (items resampled)."""
    k = len(classes)
    index = {label: i for i, label in enumerate(classes)}
    cells = confusion_cells(gold, predicted, classes)
    out: dict[str, float] = {}
    for label, i in index.items():

        def recall(c: np.ndarray, i: int = i) -> np.ndarray:
            matrix = c.reshape(-1, k, k)
            return ratio(matrix[:, i, i], matrix[:, i, :].sum(axis=1))

        def precision(c: np.ndarray, i: int = i) -> np.ndarray:
            matrix = c.reshape(-1, k, k)
            return ratio(matrix[:, i, i], matrix[:, :, i].sum(axis=1))

        for name, statistic in (("recall", recall), ("precision", precision)):
            _, low, high = bootstrap(cells, statistic, settings)
            out[f"{name}_{label}_low"], out[f"{name}_{label}_high"] = low, high
    return out


def calibrate_rgb_judge(
    task: Task,
    kind: JudgeKind,
    gold_path: str | Path,
    spec: JudgeSpec,
    out: Path,
    settings: dict[str, Any],
    progress: bool,
    judge_by: JudgeBy,
) -> tuple[dict[str, Any], pd.DataFrame]:
    """One leaderboard row of the Rej* (``rejection``) or ED* (``error_detection``) judge of
    ``spec`` against the gold labels of ``gold_path``, and its per-label table (see the module).

    ``judge_by`` (what ``calibrate`` hands: one judge, as ``jurist judge`` runs ``task``, an
    ordinary run) judges the answers that carry a gold label."""
    name, label = RGB_JUDGE_TASKS[kind], RGB_JUDGE_LABELS[kind]
    file = resolve_input(gold_path)
    dataset = dataset_name(gold_path)
    rows = [row for row in load_rgb_judgments(file) if row.label(label) is not None]
    if not rows:
        raise InputError(f"no row carries a gold '{label}' label", path=file, field=label)
    run_dir = judge_run_dir(out, spec) / f"{dataset}.{name}"
    options = task.options(settings.get("options"))
    labelled = [str(row.id) for row in rows]
    judge = judge_by
    run = call_blocking(judge, file, run_dir, options, False, progress, only=labelled)
    wanted = {str(row.id) for row in rows}
    results = [result for result in run_results(run_dir) if result.id in wanted]
    verdicts = {
        result.id: bool(result.output[label])
        for result in results
        if result.status == "ok" and result.output is not None and label in result.output
    }
    yes, no = RGB_JUDGE_CLASSES[kind]
    gold_labels: list[str] = []
    predicted: list[str] = []
    for row in rows:
        verdict = verdicts.get(str(row.id))
        if verdict is None:
            continue
        gold_labels.append(yes if row.label(label) else no)
        predicted.append(yes if verdict else no)
    failed = len(rows) - len(predicted)
    own: dict[str, Any] = {"auroc": NAN, "auroc_low": NAN, "auroc_high": NAN}
    own.update(label_agreement(gold_labels, predicted, (yes, no), settings))
    by_label = agreement_by_label(gold_labels, predicted, confidence=settings["confidence"])
    own.update(_class_intervals(gold_labels, predicted, (yes, no), settings))
    row_out = leaderboard_row(
        name,
        dataset,
        spec,
        run_dir,
        items=len(rows),
        failed=failed,
        results=results,
        model=run.summary["run"]["model"],
        by_label=by_label,
        figures=own,
    )
    return row_out, by_label.assign(dataset=dataset, judge=spec.name)
