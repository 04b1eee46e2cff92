"""Optimize judges against gold labels with DSPy optimizers, and load what they compile.

- :func:`optimize` compiles a task's LLM judge (``bootstrap``, ``mipro`` or ``gepa``)
  against gold labels, scoring it on a held-out dev split before and after, and writes a
  versioned artifact (:class:`Artifact`) that ``jurist judge TASK --program`` runs.
- It is driven by the task's own parts (see :class:`jurist.tasks.Task`, "optimization"):
  its program and postprocess, its gold examples, and :meth:`~jurist.tasks.Task.example_score`
  (a :class:`MetricResult`: score and feedback in words).
- :func:`task_metric` is the DSPy metric built from those parts: a plain function
  ``metric(example, prediction, trace=None)`` returning the score (for GEPA, with
  ``feedback=True``, a score with textual feedback).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist._lazy import lazy_exports

if TYPE_CHECKING:
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
    from jurist.optimization._metric import GuardedProgram, Tally, task_metric
    from jurist.optimization._optimizers import OPTIMIZERS, OptimizerSettings, split_train
    from jurist.optimization._run import Evaluation, OptimizeResult, evaluate_program, optimize
    from jurist.optimization._target import MetricResult, OptimizableTask, content_key

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "OPTIMIZERS",
    "Artifact",
    "DataSplit",
    "Evaluation",
    "GuardedProgram",
    "MetricResult",
    "OptimizableTask",
    "OptimizeResult",
    "OptimizerSettings",
    "SplitScore",
    "Tally",
    "content_key",
    "evaluate_program",
    "load_judge_program",
    "load_program",
    "optimize",
    "read_artifact",
    "split_train",
    "task_metric",
    "write_artifact",
]

# Imported on first use (:mod:`jurist._lazy`): most of this package loads DSPy, and
# ``jurist optimize --help`` needs only the optimizers' names and settings.
__getattr__, __dir__ = lazy_exports(__name__)
