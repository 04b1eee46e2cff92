"""How RGB's two LLM judges are optimized: Rej* (``rgb-rejection``) and ED*
(``rgb-error-detection``), against gold yes/no labels.

The programs compiled are the tasks' own (``RejectionJudge``, ``ErrorDetectionJudge``) with
their postprocess; this module says how a gold file becomes examples (:func:`gold_examples`)
and how one judged answer scores (:func:`example_score`).

Gold: a file of answers with a ``rejects`` and/or ``detects_error`` boolean
(:func:`jurist.datasets.rgb.load_rgb_judgments`; ``sample:rgb-judgments`` is bundled).
Each task uses the rows that carry its label (the judge's verdict field); a file may hold both.

Score of one example: :func:`jurist.metrics.rgb.judgment_score`,
``score = 1[predicted = gold]`` (its mean over a split is the judge's accuracy), with its
feedback in words ("wrong: judged that the answer rejects, but it does not") plus the
judge's stated reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dspy

from jurist.datasets.rgb.loader import load_rgb_judgments
from jurist.datasets.samples import resolve_input
from jurist.errors import InputError
from jurist.metrics.rgb import judgment_score
from jurist.optimization import MetricResult, content_key
from jurist.tasks.rgb.judges import RGB_JUDGE_LABELS, JudgeKind

__all__ = ["DEMO_THRESHOLD", "METRIC_NAMES", "example_score", "gold_examples"]

METRIC_NAMES: dict[str, str] = {
    "rejection": "rejection_accuracy",
    "error_detection": "error_detection_accuracy",
}
"""The name of :func:`example_score` per judge."""
DEMO_THRESHOLD = 1.0
"""The score a training trace needs to become a demo: a right judgment."""

_INPUTS = {"rejection": ("question", "answer"), "error_detection": ("answer",)}
"""The judge's input fields, taken from each gold row (ED* reads the answer only, as in RGB)."""


def gold_examples(path: str | Path, kind: JudgeKind) -> list[dspy.Example]:
    """One example per answer that carries the judge's gold label.

    Raises:
        InputError: No row carries the label.
    """
    file = resolve_input(path)
    label, names = RGB_JUDGE_LABELS[kind], _INPUTS[kind]
    examples = []
    for row in load_rgb_judgments(file):
        gold = row.label(label)
        if gold is None:
            continue
        inputs = {name: getattr(row, name) for name in names}
        example = dspy.Example(
            **inputs,
            gold=gold,
            example_id=str(row.id),
            example_key=content_key(*inputs.values()),
            example_group=str(row.id),
        )
        examples.append(example.with_inputs(*names))
    if not examples:
        raise InputError(f"no row carries a gold '{label}' label", path=file, field=label)
    return examples


def example_score(example: dspy.Example, output: dict[str, Any], kind: JudgeKind) -> MetricResult:
    """:func:`~jurist.metrics.rgb.judgment_score` of the verdict, with the judge's reason."""
    predicted = bool(output.get(RGB_JUDGE_LABELS[kind]))
    result = judgment_score(predicted, bool(example.gold), kind=kind)
    feedback = result.feedback
    reason = str(output.get("reason") or "").strip()
    if reason:
        feedback += f". The judge's reason: {reason}"
    return MetricResult(result.score, feedback, {"correct": result.score})
