"""Judge tasks: the contract every task fulfils, the registry, and the verbs over any task.

Start with :class:`Task` (``jurist/tasks/_contract.py``): the one object that says, for one
kind of judgment, how rows are read, how it is judged (LLM program and offline baseline),
how a verdict is validated and scored, what calibration compares with gold and how one
gold example scores for optimization (:meth:`Task.example_score`). The verbs :func:`judge`,
:func:`score`, :func:`calibrate`, :func:`optimize` and :func:`prompt` work on any task:
built-in (one package each under ``jurist/tasks/``), registered in Python
(:func:`register_task`), published by a package under the entry-point group ``jurist.tasks``,
or written as a YAML file (``get_task("file.yaml")``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist._lazy import lazy_exports

if TYPE_CHECKING:
    from jurist.tasks._calibration import CalibrationPlan, GoldAgreement
    from jurist.tasks._contract import (
        JudgeBy,
        JudgedItems,
        JudgeRun,
        NoOptions,
        Scores,
        Task,
    )
    from jurist.tasks._estimate import Estimate
    from jurist.tasks._metric import Metric, MetricValue
    from jurist.tasks._other_files import OtherFiles
    from jurist.tasks._read_once import read_once
    from jurist.tasks._recorded_run import RecordedRun, recorded_run
    from jurist.tasks._registry import (
        ENTRY_POINT_GROUP,
        get_task,
        register_task,
        run_task,
        task_names,
        task_of_run,
    )
    from jurist.tasks._task_files import FoundTaskFile, find_task_files

__all__ = [
    "ENTRY_POINT_GROUP",
    "CalibrationPlan",
    "GoldAgreement",
    "JudgeBy",
    "JudgeRun",
    "JudgedItems",
    "Metric",
    "MetricValue",
    "NoOptions",
    "OtherFiles",
    "RecordedRun",
    "Scores",
    "Task",
    "Estimate",
    "FoundTaskFile",
    "find_task_files",
    "get_task",
    "read_once",
    "recorded_run",
    "register_task",
    "run_task",
    "task_names",
    "task_of_run",
]

# Imported on first use (:mod:`jurist._lazy`): the contract and the verbs load pandas and DSPy,
# and a task package (``jurist.tasks.gates``) or the command line may need neither.
__getattr__, __dir__ = lazy_exports(__name__)
