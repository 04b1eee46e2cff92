"""Optimize judges against gold labels with DSPy optimizers, and load what they compile.

- :func:`optimize` compiles a task's LLM judge (``bootstrap``, ``mipro`` or ``gepa``)
  against gold labels, scoring it on a held-out dev split before and after, and writes a
  versioned artifact (:class:`Artifact`) that ``jurist judge TASK --program`` runs.
- :class:`TaskAdapter` is what a task's ``optimization`` hook returns to be optimizable
  (see :class:`jurist.tasks.Task`).
- :class:`JudgeMetric` serves a task's pure metric in DSPy's metric contracts (a score;
  for GEPA a score with textual feedback).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist._lazy import lazy_exports

if TYPE_CHECKING:
    from jurist.optimization._adapter import MetricResult, TaskAdapter, content_key
    from jurist.optimization._artifact import (
        FORMAT,
        FORMAT_VERSION,
        Artifact,
        DataSplit,
        SplitScore,
        load_judge_program,
        load_program,
        read_artifact,
        write_artifact,
    )
    from jurist.optimization._metric import GuardedProgram, JudgeMetric, Tally
    from jurist.optimization._optimizers import OPTIMIZERS, OptimizerSettings, split_train
    from jurist.optimization._run import Evaluation, OptimizeResult, evaluate_program, optimize

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "OPTIMIZERS",
    "Artifact",
    "DataSplit",
    "Evaluation",
    "GuardedProgram",
    "JudgeMetric",
    "MetricResult",
    "OptimizeResult",
    "OptimizerSettings",
    "SplitScore",
    "Tally",
    "TaskAdapter",
    "content_key",
    "evaluate_program",
    "load_judge_program",
    "load_program",
    "optimize",
    "read_artifact",
    "split_train",
    "write_artifact",
]

# Imported on first use (:mod:`jurist._lazy`): most of this package loads DSPy, and
# ``jurist optimize --help`` needs only the optimizers' names and settings.
__getattr__, __dir__ = lazy_exports(__name__)
