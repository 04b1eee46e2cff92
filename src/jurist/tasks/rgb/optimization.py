"""RGB's two LLM judges as optimization targets: Rej* (``rgb-rejection``) and ED*
(``rgb-error-detection``), against gold yes/no labels.

Gold: a file of answers with a ``rejects`` and/or ``detects_error`` boolean
(:func:`jurist.datasets.rgb.load_rgb_judgments`; ``sample:rgb-judgments`` is bundled).
Each task uses the rows that carry its label; a file may hold both.

Score of one example: :func:`jurist.metrics.rgb.judgment_score`,
``score = 1[predicted = gold]`` (its mean over a split is the judge's accuracy), with its
feedback in words ("wrong: judged that the answer rejects, but it does not") plus the
judge's stated reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import dspy

from jurist.datasets.rgb import load_rgb_judgments
from jurist.datasets.samples import resolve_input
from jurist.errors import InputError
from jurist.metrics.rgb import judgment_score
from jurist.optimization import MetricResult, TaskAdapter, content_key
from jurist.programs.rgb import (
    ErrorDetectionJudge,
    RejectionJudge,
    error_detection_postprocess,
    rejection_postprocess,
)

__all__ = ["RGBErrorDetectionAdapter", "RGBJudgmentAdapter", "RGBRejectionAdapter"]


class RGBJudgmentAdapter(TaskAdapter):
    """The shared part of the Rej* and ED* adapters (not a task itself).

    Class attributes:
        kind: ``rejection`` or ``error_detection`` (words the feedback).
        label: The gold field and the verdict field: ``rejects`` or ``detects_error``.
        inputs: The judge's input fields, taken from each gold row.
    """

    kind: ClassVar[str]
    label: ClassVar[str]
    inputs: ClassVar[tuple[str, ...]]
    pass_threshold = 1.0

    def load_examples(self, path: str | Path) -> list[dspy.Example]:
        file = resolve_input(path)
        examples = []
        for row in load_rgb_judgments(file):
            gold = row.label(self.label)
            if gold is None:
                continue
            inputs = {name: getattr(row, name) for name in self.inputs}
            example = dspy.Example(
                **inputs,
                gold=gold,
                example_id=str(row.id),
                example_key=content_key(*inputs.values()),
                example_group=str(row.id),
            )
            examples.append(example.with_inputs(*self.inputs))
        if not examples:
            raise InputError(f"no row carries a gold '{self.label}' label", path=file, field=self.label)
        return examples

    def score(self, example: dspy.Example, output: dict[str, Any]) -> MetricResult:
        predicted = bool(output.get(self.label))
        result = judgment_score(predicted, bool(example.gold), kind=self.kind)
        feedback = result.feedback
        reason = str(output.get("reason") or "").strip()
        if reason:
            feedback += f". The judge's reason: {reason}"
        return MetricResult(result.score, feedback, {"correct": result.score})


class RGBRejectionAdapter(RGBJudgmentAdapter):
    """Optimizes :class:`~jurist.programs.rgb.RejectionJudge` (Rej*) against gold ``rejects``."""

    task = "rgb-rejection"
    metric_name = "rejection_accuracy"
    kind = "rejection"
    label = "rejects"
    inputs = ("question", "answer")

    def make_program(self) -> dspy.Module:
        return RejectionJudge()

    def postprocess(self, prediction: Any, inputs: dict[str, Any]) -> dict[str, Any]:
        return rejection_postprocess(prediction, inputs).model_dump(mode="json")


class RGBErrorDetectionAdapter(RGBJudgmentAdapter):
    """Optimizes :class:`~jurist.programs.rgb.ErrorDetectionJudge` (ED*) against gold
    ``detects_error``; the judge reads the answer only, as in RGB."""

    task = "rgb-error-detection"
    metric_name = "error_detection_accuracy"
    kind = "error_detection"
    label = "detects_error"
    inputs = ("answer",)

    def make_program(self) -> dspy.Module:
        return ErrorDetectionJudge()

    def postprocess(self, prediction: Any, inputs: dict[str, Any]) -> dict[str, Any]:
        return error_detection_postprocess(prediction, inputs).model_dump(mode="json")
