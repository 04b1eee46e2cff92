"""Calibration of RGB's two judges against gold yes/no labels: the ``calibration`` part of the
tasks ``rgb-rejection`` (Rej*) and ``rgb-error-detection`` (ED*).

Gold: a file of answers with a ``rejects`` and/or ``detects_error`` boolean
(:func:`jurist.datasets.rgb.load_rgb_judgments`; ``sample:rgb-judgments`` is bundled); each
task uses the rows that carry its label. The ``calibrate`` verb has each judge (the tiered
keyword judge for the baseline config, or the DSPy judge, compiled when the config names a
``program``) judge every labelled answer as an ordinary run of its task (what ``jurist judge
TASK`` runs, with the run's exports), into ``OUT/runs/{judge}-{fingerprint}/{dataset}.{task}``,
so a rerun reads its judgments back.

Classes: ``rejects`` / ``answers`` (Rej*), ``detects_error`` / ``no_error_reported`` (ED*).
Leaderboard row: accuracy and Cohen's kappa with percentile-bootstrap intervals, per-class
precision and recall (Wilson intervals in ``by_label``; percentile-bootstrap intervals in
the ``precision_{class}_low``/``_high`` and ``recall_{class}_low``/``_high`` columns), the
failed-judgment rate, and tokens, cost and latency per judgment. A yes/no verdict is no
score, so AUROC is n/a. With ``C`` the confusion matrix (gold × judge) of the answered
items: ``recall_c = C[c, c] / Σ_p C[c, p]``, ``precision_c = C[c, c] / Σ_g C[g, c]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from jurist.datasets.rgb.loader import RGBJudgmentRow, load_rgb_judgments
from jurist.errors import InputError
from jurist.metrics.gold_agreement import agreement_by_label
from jurist.tasks._calibration import DATASET, CalibrationPlan, GoldAgreement
from jurist.tasks._contract import Task
from jurist.tasks._results import JudgeRun
from jurist.tasks.calibration_rows import (
    NAN,
    bootstrap,
    confusion_cells,
    label_agreement,
    ratio,
    run_results,
)
from jurist.tasks.rgb.judges import (
    RGB_JUDGE_CLASSES,
    RGB_JUDGE_LABELS,
    RGB_JUDGE_TASKS,
    JudgeKind,
)

__all__ = ["rgb_calibration"]


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


def rgb_calibration(task: Task, kind: JudgeKind, file: Path, settings: Mapping[str, Any]) -> CalibrationPlan:
    """The answers of ``file`` that carry the gold label of the Rej* (``rejection``) or ED*
    (``error_detection``) judge, judged with the task's options; the comparison gives the row's
    figures and per-label table (see the module).

    Raises:
        InputError: No answer carries the judge's gold label.
    """
    name, label = RGB_JUDGE_TASKS[kind], RGB_JUDGE_LABELS[kind]
    rows = [row for row in load_rgb_judgments(file) if row.label(label) is not None]
    if not rows:
        raise InputError(f"no row carries a gold '{label}' label", path=file, field=label)

    def compare(run: JudgeRun) -> GoldAgreement:
        return _agreement(kind, rows, run, settings)

    return CalibrationPlan(
        options=task.options(settings.get("options")),
        compare=compare,
        folder=f"{DATASET}.{name}",
        only=[str(row.id) for row in rows],
    )


def _agreement(
    kind: JudgeKind, rows: list[RGBJudgmentRow], run: JudgeRun, settings: Mapping[str, Any]
) -> GoldAgreement:
    label = RGB_JUDGE_LABELS[kind]
    wanted = {str(row.id) for row in rows}
    results = [result for result in run_results(run.run_dir) if result.id in wanted]
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
    stats = dict(settings)
    own: dict[str, Any] = {"auroc": NAN, "auroc_low": NAN, "auroc_high": NAN}
    own.update(label_agreement(gold_labels, predicted, (yes, no), stats))
    by_label = agreement_by_label(gold_labels, predicted, confidence=settings["confidence"])
    own.update(_class_intervals(gold_labels, predicted, (yes, no), stats))
    return GoldAgreement(
        items=len(rows),
        failed=len(rows) - len(predicted),
        results=results,
        model=run.summary["run"]["model"],
        by_label=by_label,
        figures=own,
    )
