"""What ``jurist optimize`` takes from a task, gathered once into an optimization target.

Optimization is driven by the task's own parts (:class:`jurist.tasks.Task`): the program it
compiles and how a prediction becomes the task's output (:meth:`Task.optimization_program`,
by default the task's ``program`` and ``postprocess``), how a gold file becomes examples
(:meth:`Task.gold_examples`), how one judged example scores against its gold, with words
for GEPA (:meth:`Task.example_score`), and what the score is called
(:attr:`Task.optimized_metric`). :class:`Target` reads those parts for one set of task
options; the DSPy metric (:func:`jurist.optimization.task_metric`), the evaluations and the
artifact are derived from it. The optimizer code never branches on a task, and never
looks one up: it is handed the task.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel

if TYPE_CHECKING:
    import dspy

__all__ = ["MetricResult", "OptimizableTask", "Target", "content_key"]

Postprocess = Callable[[Any, dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class MetricResult:
    """The score of one judged example against its gold labels (what :meth:`Task.example_score` returns).

    Attributes:
        score: In [0, 1]; higher is better. This is what optimizers maximize.
        feedback: What went right or wrong, in words (GEPA's reflection step reads it).
        details: The metric's components (e.g. ``{"support_correct": 1.0, "relevant_f1": 0.5}``),
            columns of the per-example evaluation tables.
    """

    score: float
    feedback: str
    details: dict[str, Any] = field(default_factory=dict)


def content_key(*parts: Any) -> str:
    """A short hash of an example's content, to tell whether two splits share an example."""
    text = json.dumps(parts, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


class OptimizableTask(Protocol):
    """The parts of a task optimization uses (every :class:`jurist.tasks.Task` has them; a task
    that cannot be optimized raises :class:`~jurist.errors.ConfigError` from them)."""

    name: str
    optimized_metric: str
    demo_threshold: float

    def options(self, values: dict[str, Any] | BaseModel | None = None) -> BaseModel: ...

    def optimization_program(self, options: BaseModel) -> tuple[dspy.Module, Postprocess]: ...

    def program_options(self, options: BaseModel) -> dict[str, Any]: ...

    def gold_examples(self, path: str | Path, options: BaseModel) -> list[dspy.Example]: ...

    def example_score(self, example: dspy.Example, output: dict[str, Any], options: BaseModel) -> Any: ...


class Target:
    """A task's optimization parts, read once and bound to one set of options.

    Attributes:
        task: The task's name (recorded in artifacts; an artifact loads only into it).
        metric_name: The name of the score reported before and after optimization.
        demo_threshold: The score a trace needs to become a few-shot demo (bootstrap, MIPRO).
    """

    def __init__(self, task: OptimizableTask, options: dict[str, Any] | BaseModel | None = None) -> None:
        self._task = task
        self._options = task.options(options)
        self.task = task.name
        self.metric_name = task.optimized_metric
        self.demo_threshold = float(task.demo_threshold)

    def options(self) -> dict[str, Any]:
        """The program's options, recorded in the artifact (it loads only into the same)."""
        return self._task.program_options(self._options)

    def make_program(self) -> dspy.Module:
        """A fresh uncompiled program."""
        program, _ = self._task.optimization_program(self._options)
        return program

    @cached_property
    def _postprocess(self) -> Postprocess:
        return self._task.optimization_program(self._options)[1]

    def postprocess(self, prediction: Any, inputs: dict[str, Any]) -> dict[str, Any]:
        """The task's validated output of a prediction (``ValueError``: not usable)."""
        return self._postprocess(prediction, inputs)

    def examples(self, path: str | Path) -> list[dspy.Example]:
        """The gold examples of a file (``sample:NAME`` allowed)."""
        return self._task.gold_examples(path, self._options)

    def score(self, example: dspy.Example, output: dict[str, Any]) -> MetricResult:
        """The task's score of one output against the example's gold."""
        found = self._task.example_score(example, output, self._options)
        if isinstance(found, MetricResult):
            return found
        score, feedback, *rest = found
        return MetricResult(float(score), str(feedback), dict(rest[0]) if rest else {})
