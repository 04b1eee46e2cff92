"""How the pairwise judge is optimized against gold preference labels: its examples and score.

The program compiled is the task's own (``PairwiseJudgeProgram``) and outputs are the
task's postprocessed choices; this module says how a pairs file becomes examples
(:func:`gold_examples`) and how one choice scores (:func:`example_score`).

Every gold pair becomes two examples, one per order (``{id}|12`` with response 1 in
position 1, ``{id}|21`` swapped, its gold label swapped too), so a compiled judge is
trained and scored on both positions; the two stay in the same split. The score of one
example is :func:`jurist.metrics.gold_agreement.accuracy` of the judge's mapped choice
(A → response 1, B → response 2, C/D → tie) against the gold label: 1 or 0. With 2
options a tie cannot be chosen, so tie-labelled pairs are left out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dspy

from jurist.datasets.pairwise.tables import load_pairs
from jurist.datasets.samples import resolve_input
from jurist.errors import InputError
from jurist.metrics.gold_agreement import accuracy
from jurist.optimization import MetricResult, content_key
from jurist.signatures.pairwise import INPUT_NAMES, PairwiseInputs
from jurist.tasks.pairwise.lengths import word_count

_MEANING = {"A": "1", "B": "2", "C": "tie", "D": "tie"}
_SWAP = {"1": "2", "2": "1", "tie": "tie"}

__all__ = ["METRIC_NAME", "example_score", "gold_examples"]


METRIC_NAME = "order_accuracy"
"""The name of :func:`example_score`."""


def gold_examples(path: str | Path, num_options: int) -> list[dspy.Example]:
    """Two examples (one per order) per pair with a gold label; with 2 options, ties are left out.

    Raises:
        InputError: No pair carries a usable gold label.
    """
    file = resolve_input(path)
    pairs = load_pairs(file)
    examples = []
    for row in pairs.itertuples(index=False):
        if row.label is None or (row.label == "tie" and num_options == 2):
            continue
        key = content_key(row.question, sorted([row.response_1, row.response_2]), row.reference)
        first = PairwiseInputs(
            question=row.question,
            response_1=row.response_1,
            response_2=row.response_2,
            reference_answer=str(row.reference or ""),
        )
        for order, inputs, gold in (("12", first, row.label), ("21", first.swapped(), _SWAP[row.label])):
            example = dspy.Example(
                **inputs.as_inputs(),
                gold_label=gold,
                example_id=f"{row.id}|{order}",
                example_key=key,
                example_group=key,
            )
            examples.append(example.with_inputs(*INPUT_NAMES))
    if not examples:
        usable = "'1' or '2'" if num_options == 2 else "'1', '2' or 'tie'"
        raise InputError(f"no pair carries a gold label ({usable})", path=file, field="label")
    return examples


def example_score(example: dspy.Example, output: dict[str, Any]) -> MetricResult:
    """1 when the judge's mapped choice equals the gold label, else 0, with feedback in words."""
    gold = str(example.gold_label)
    choice = str(output.get("choice"))
    predicted = _MEANING.get(choice)
    correct = accuracy([gold], [predicted])
    return MetricResult(correct, _feedback(example, gold, choice, predicted), {"correct": correct})


def _feedback(example: dspy.Example, gold: str, choice: str, predicted: str | None) -> str:
    better = f"Response {gold} is better" if gold != "tie" else "the two responses are equally good (a tie)"
    if predicted == gold:
        return f"Correct: {better}, and the judge chose {choice}."
    first, second = word_count(example.response_1), word_count(example.response_2)
    lines = [f"Wrong: according to the gold label {better}, but the judge chose {choice}."]
    if predicted in ("1", "2") and first != second:
        longer = "1" if first > second else "2"
        kind = "longer" if predicted == longer else "shorter"
        lines.append(
            f"Response 1 has {first} words and Response 2 has {second}; the judge preferred the "
            f"{kind} one. Length is not quality: check which response follows the instruction."
        )
    if predicted == "1":
        lines.append("The judge chose the response shown first; the order must not matter.")
    return " ".join(lines)
