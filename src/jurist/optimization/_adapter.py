"""The metric-adapter contract: what ``jurist optimize`` needs to know about a judge task.

A task (:class:`jurist.tasks.Task`) plugs into optimization by returning a
:class:`TaskAdapter` from its ``optimization`` hook. The adapter says how to build the
uncompiled program, how to read gold examples, how to turn a prediction into the task's
validated output, and how to score that output against gold with the task's pure metric
functions (:mod:`jurist.metrics`), with a feedback text for GEPA. The optimizer code
never branches on the task, and never looks a task up: it is handed the adapter.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import dspy

__all__ = ["MetricResult", "TaskAdapter", "content_key"]


@dataclass(frozen=True)
class MetricResult:
    """The score of one judged example against its gold labels.

    Attributes:
        score: In [0, 1]; higher is better. This is what optimizers maximize.
        feedback: What went right or wrong, in words (GEPA's reflection step reads it).
        details: The metric's components (e.g. ``{"support_correct": 1.0, "relevant_f1": 0.5}``).
    """

    score: float
    feedback: str
    details: dict[str, Any] = field(default_factory=dict)


def content_key(*parts: Any) -> str:
    """A short hash of an example's content, to tell whether two splits share an example."""
    text = json.dumps(parts, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


class TaskAdapter(ABC):
    """How one judge task is optimized and scored against gold.

    Class attributes:
        task: The task's name on the command line (``jurist optimize TASK``).
        metric_name: The name of the score reported before and after optimization.
        pass_threshold: The score an example needs for its trace to become a few-shot demo
            (bootstrap and MIPRO).

    An example returned by :meth:`load_examples` is a ``dspy.Example`` whose inputs (its
    ``with_inputs`` keys) are the program's keyword arguments, and which also carries
    the gold labels the adapter needs plus three bookkeeping fields:
    ``example_id`` (unique in the file), ``example_key`` (:func:`content_key` of the
    inputs, equal for the same content in two files) and ``example_group`` (examples that
    must stay in one split, e.g. the two orders of one pairwise comparison).
    """

    task: str
    metric_name: str
    pass_threshold: ClassVar[float] = 1.0

    def options(self) -> dict[str, Any]:
        """The options the program was built with (e.g. ``{"num_options": 2}``); stored in
        artifacts, and an artifact only loads into a program built with the same options."""
        return {}

    @abstractmethod
    def make_program(self) -> dspy.Module:
        """The uncompiled LLM program of the task."""

    @abstractmethod
    def load_examples(self, path: str | Path) -> list[dspy.Example]:
        """Read gold examples from a file (``sample:NAME`` allowed).

        Raises:
            InputError: The file is malformed or holds no example with a gold label.
        """

    @abstractmethod
    def postprocess(self, prediction: Any, inputs: dict[str, Any]) -> dict[str, Any]:
        """The validated, JSON-ready output of a prediction (the runner's postprocess).

        Raises:
            ValueError: The prediction is not a usable output (counts as a failed judgment).
        """

    @abstractmethod
    def score(self, example: dspy.Example, output: dict[str, Any]) -> MetricResult:
        """Score an output of :meth:`postprocess` against the example's gold labels."""

    def failure(self, example: dspy.Example, error: str) -> MetricResult:
        """The training score of an example the judge failed on: 0, with the reason as feedback."""
        return MetricResult(
            0.0,
            f"The judge's answer could not be used ({error}). Answer in exactly the requested "
            "fields and formats.",
            {"failed": 1.0},
        )
