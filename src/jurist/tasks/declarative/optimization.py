"""How a YAML task is optimized: its gold examples and the score of one example, with feedback.

The program compiled is the task's own, with its postprocess; the examples come from the
task's own ``read`` and items (so a subclass that normalises rows trains on them too).

Per output kind, the score of one judged example (in [0, 1]) is:

- label, bool: 1 when the verdict equals gold, else 0;
- score: ``1 − |verdict − gold| / (high − low)``;
- labels: the Jaccard index ``|J ∩ G| / |J ∪ G|`` of the judged and gold label sets (1
  when both are empty);
- pairwise: 1 when the order's answer names the gold winner's position (for a ``tie``
  gold, when it answers ``tie``), else 0. Both orders of a row are examples of one group,
  so they stay in the same split.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import dspy

from jurist.datasets.samples import resolve_input
from jurist.errors import InputError
from jurist.metrics import preference
from jurist.optimization import MetricResult, content_key
from jurist.tasks.declarative.data import pair_items
from jurist.tasks.declarative.verdicts import verdict_text

if TYPE_CHECKING:
    from jurist.tasks._contract import Task
    from jurist.tasks.declarative.spec import TaskFile

__all__ = ["example_score", "gold_examples"]


def gold_examples(task: Task, spec: TaskFile, path: str | Path) -> list[dspy.Example]:
    """The rows with a gold verdict, through the task's ``read``; a pairwise row gives its two orders.

    Raises:
        InputError: No row carries a gold verdict.
    """
    file = resolve_input(path)
    rows = [row for row in task.read(file, task.options()).rows if row.gold is not None]
    if not rows:
        raise InputError("no row carries a gold verdict", path=file, field=spec.gold or "gold")
    examples = []
    for row in rows:
        if spec.kind == "pairwise":
            for item in pair_items(row):
                example = dspy.Example(
                    **item.inputs,
                    gold=row.gold,
                    example_id=item.id,
                    example_key=content_key(spec.name, item.inputs),
                    example_group=row.id,
                )
                examples.append(example.with_inputs(*item.inputs))
        else:
            example = dspy.Example(
                **row.inputs,
                gold=row.gold,
                example_id=row.id,
                example_key=content_key(spec.name, row.inputs),
                example_group=row.id,
            )
            examples.append(example.with_inputs(*row.inputs))
    return examples


def example_score(spec: TaskFile, example: dspy.Example, output: dict[str, Any]) -> MetricResult:
    """The score of one judged example by output kind (see the module docstring)."""
    kind = spec.kind
    gold: Any = example.gold
    verdict: Any = output.get("verdict")
    if kind == "score":
        low, high = spec.output.range or (0, 1)
        error = abs(float(verdict) - float(gold))
        value = 1.0 - error / (high - low)
        if error == 0:
            feedback = f"Correct: the score {verdict} equals the gold score."
        else:
            direction = "too high" if float(verdict) > float(gold) else "too low"
            feedback = f"The score {verdict} is {direction}: the gold score is {verdict_text(gold)}."
        return MetricResult(value, feedback, {"abs_error": error})
    if kind == "labels":
        judged, expected = set(verdict or []), set(gold or [])
        union = judged | expected
        value = len(judged & expected) / len(union) if union else 1.0
        missing, extra = sorted(expected - judged), sorted(judged - expected)
        if not missing and not extra:
            return MetricResult(value, "Correct: the labels equal the gold labels.", {"jaccard": value})
        parts = []
        if missing:
            parts.append(f"missed {', '.join(missing)}")
        if extra:
            parts.append(f"wrongly added {', '.join(extra)}")
        return MetricResult(value, f"The labels {'; '.join(parts)}.", {"jaccard": value})
    if kind == "pairwise":
        order = str(example.get("order", "AB"))
        expected_position = preference.winner(gold, order)
        right = verdict == expected_position
        if right:
            return MetricResult(1.0, f"Correct: {verdict} is the better response here.", {"correct": 1.0})
        if gold == "tie":
            feedback = f"Answered {verdict}, but the two responses are equally good: the answer is tie."
        else:
            feedback = (
                f"Answered {verdict}, but response {expected_position} is the better one in this order."
            )
        return MetricResult(0.0, feedback, {"correct": 0.0})
    right = verdict == gold
    if right:
        return MetricResult(1.0, f"Correct: {verdict_text(verdict)}.", {"correct": 1.0})
    return MetricResult(
        0.0,
        f"Answered {verdict_text(verdict)}, but the gold verdict is {verdict_text(gold)}.",
        {"correct": 0.0},
    )
