"""The dry run of ``calibrate``: items, cached items, tokens and cost per judge and gold file,
calling nothing and writing nothing.

Each task's :meth:`~jurist.Task.calibration` chooses the items, the options and the run
directory of a gold file (some tasks judge a gold file's rows, others the pairs or subtasks
made from them). So the dry run starts calibrate's row
(:func:`jurist.jury.gold_row.calibration_row`) for every single judge calibration would run
(each judge; each juror of a jury; each stage of a cascade, which calibration judges on every
gold item) inside :func:`jurist.runner.plan.planning`: the runner hands back the judge, the
items and the run directory it was given, before it reads or writes anything, and each is
estimated as ``jurist judge --dry-run`` estimates a judge
(:func:`jurist.tasks._estimate.judge_row`).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from jurist.judges.config import JudgeConfig
from jurist.jury.gold_row import calibration_row
from jurist.jury.loop import one_judge
from jurist.runner.plan import Planned, PlannedRun, planning
from jurist.tasks._contract import Task
from jurist.tasks._estimate import Estimate, estimate_of, judge_row, offline_config
from jurist.tasks.calibration_rows import JudgeSpec, dataset_name
from jurist.verbs._data import Data, data_files, data_list, reading
from jurist.verbs._verbs import TaskRef, calibration_settings, calibration_task, judge_specs, single_judges

__all__ = ["estimate_calibration"]


def _planned(
    task: Task, gold: str | Path, spec: JudgeSpec, out: Path, settings: dict[str, Any]
) -> PlannedRun | None:
    """What ``spec``'s calibration row on ``gold`` would judge (``None``: it judges nothing)."""
    counting = JudgeSpec(spec.name, offline_config(spec.config))  # the same fingerprint, run directory
    with planning():
        try:
            calibration_row(
                task, gold, counting, out, dict(settings), False, one_judge(task, counting.config)
            )
        except Planned as planned:
            return planned.run
    return None


def estimate_calibration(
    task: TaskRef,
    gold: Data | Sequence[Data],
    configs: Sequence[str | Path | JudgeConfig | JudgeSpec | None] = (),
    *,
    out: str | Path,
    options: dict[str, Any] | BaseModel | None = None,
) -> Estimate:
    """What :func:`~jurist.verbs.calibrate` with the same arguments would judge and spend, calling
    nothing and writing nothing: one row per single judge (each juror, each stage) and gold file.

    Each row is what ``jurist judge --dry-run`` reports for a judge (items recorded in the run
    directory skipped, cached answers free, prompt tokens counted from the exact messages,
    completion tokens and cost estimated; ``docs/costs.md``), with the gold file's ``dataset``.

    Args:
        task, gold, configs, out, options: As for :func:`~jurist.verbs.calibrate`.

    Returns:
        An :class:`~jurist.tasks._estimate.Estimate`: ``.table`` (columns ``dataset``, then
        those of ``jurist.estimate``), ``.cost`` (``None`` if a model has no price) and
        ``.lines()`` (what ``jurist calibrate --dry-run`` prints).

    Raises:
        ConfigError: The task cannot be calibrated, or a config is invalid.
        InputError: A gold file is malformed or holds no gold label.
    """
    sets = data_list(gold)
    found, task_options = calibration_task(task, sets, options)
    settings = calibration_settings(task_options, n_resamples=1000, confidence=0.95, seed=0)
    singles = single_judges(judge_specs(list(configs)))
    rows = []
    with ExitStack() as stack:
        # Rows in memory: temporary files named as calibrate names its own (the same datasets).
        paths, files = data_files(found, sets, None, stack)
        with reading(files):
            for path in paths:
                for single in singles:
                    run = _planned(found, path, single, Path(out), settings)
                    if run is not None:
                        row = judge_row(
                            single.name, "exact", run.judge, run.items, run.run_dir, run.retry_failed
                        )
                        rows.append({"dataset": dataset_name(path), **row})
    return estimate_of(found.name, ", ".join(str(path) for path in paths), rows)
