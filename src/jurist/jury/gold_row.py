"""One leaderboard row of ``jurist calibrate``: one judge (or jury, or cascade) on one gold file.

The pipeline is the same for every task, so it is written once, here: resolve the gold file,
name its dataset, ask the task what to judge (:meth:`jurist.Task.calibration`), judge it into
``OUT/runs/{judge}-{fingerprint}/{folder}`` by what the verb hands (a
:class:`~jurist.tasks._contract.JudgeBy`: one judge, a jury's panel, a cascade's run), hand
the run to the task's comparison, and build the row's common columns
(:func:`~jurist.tasks.calibration_rows.leaderboard_row`) and its per-label table. The task
judges nothing itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from jurist.datasets.samples import resolve_input
from jurist.runner import call_blocking
from jurist.tasks._contract import JudgeBy, Task
from jurist.tasks.calibration_rows import JudgeSpec, dataset_name, judge_run_dir, label_table, leaderboard_row

__all__ = ["calibration_row"]


def calibration_row(
    task: Task,
    gold: str | Path,
    spec: JudgeSpec,
    out: Path,
    settings: dict[str, Any],
    progress: bool,
    judge_by: JudgeBy,
) -> tuple[dict[str, Any], pd.DataFrame]:
    """The leaderboard row of ``spec`` on the gold file ``gold``, and its per-label table.

    Args:
        task: The task calibrated (its :meth:`~jurist.Task.calibration` says what to judge
            and compares the run with gold).
        gold: The gold file (``sample:NAME`` allowed).
        spec: The judge's name on the leaderboard and its config (its run directory).
        out: The calibration's directory.
        settings: ``n_resamples``, ``confidence``, ``seed`` and ``options`` (and each option
            by name); the settings the task's comparison records are added to it.
        progress: Show the runner's progress bar.
        judge_by: What judges the gold file (one judge, a jury, a cascade).

    Returns:
        The row (the columns every row has, the task's figures, the per-class rates, the
        usage of the compared items) and the per-label table with ``dataset`` and ``judge``.

    Raises:
        InputError: The gold file is malformed or holds no gold label.
        ConfigError: The task cannot be calibrated.
    """
    file = resolve_input(gold)
    dataset = dataset_name(gold)
    plan = task.calibration(file, settings)
    run_dir = judge_run_dir(out, spec) / plan.run_folder(dataset)
    run = call_blocking(judge_by, file, run_dir, plan.options, False, progress, only=plan.only)
    agreement = plan.compare(run)
    for key, value in agreement.settings.items():
        if settings.get(key) is None:
            settings[key] = value
    row = leaderboard_row(
        task.name,
        dataset,
        spec,
        run_dir,
        items=agreement.items,
        judgments=agreement.judgments,
        failed=agreement.failed,
        results=agreement.results,
        model=agreement.model,
        by_label=agreement.by_label,
        figures=agreement.figures,
    )
    table = label_table() if agreement.by_label is None else agreement.by_label
    return row, table.assign(dataset=dataset, judge=spec.name)
