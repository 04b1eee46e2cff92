"""How the RAGBench/TRACe judge is optimized: its gold examples and the score of one example.

The program compiled is the task's own (``RagbenchJudge``) and outputs are the task's
postprocessed outputs; this module says only how a gold file becomes examples
(:func:`gold_examples`) and how one output scores against them (:func:`example_score`).

Score of one example, from the gold labels the row carries (RAGBench's
``adherence_score``, ``all_relevant_sentence_keys``, ``all_utilized_sentence_keys``):

- ``support_correct``: 1 if the judge's adherence (every response sentence fully
  supported, :func:`jurist.metrics.trace.adherence`) equals ``adherence_score``, else 0;
- ``relevant_f1`` / ``utilized_f1``: F1 of the judge's keys against the gold keys
  (:func:`jurist.metrics.key_overlap.key_overlap`). Gold keys are read in their canonical
  spelling (``"0b."`` is ``"0b"``, see :mod:`jurist.datasets.ragbench`). Gold keys that
  name no sentence of the item (another sentence keying) are left out; when none is left,
  the component is not computed (``details["<kind>_gold_keys_unknown"]``).

``score = w · support_correct + (1 − w) · mean(key F1s)`` with ``w = support_weight``
(default 0.5); when only one kind of gold label is present, the score is that part alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurist.datasets.ragbench import load_ragbench
from jurist.datasets.samples import resolve_input
from jurist.errors import InputError
from jurist.metrics.key_overlap import key_overlap
from jurist.optimization import MetricResult, content_key
from jurist.sentences import keyed_inputs

if TYPE_CHECKING:
    import dspy

__all__ = ["DEMO_THRESHOLD", "METRIC_NAME", "SUPPORT_WEIGHT", "example_score", "gold_examples"]

_KEY_FIELDS = (
    ("relevant", "gold_relevant", "all_relevant_sentence_keys"),
    ("utilized", "gold_utilized", "all_utilized_sentence_keys"),
)


def _keyed(inputs: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    return keyed_inputs(
        inputs["documents"],
        inputs["response"],
        inputs.get("document_sentences"),
        inputs.get("response_sentences"),
    )


def _list(keys: Any, limit: int = 12) -> str:
    keys = list(keys)
    shown = ", ".join(keys[:limit])
    return shown + (f" (+{len(keys) - limit} more)" if len(keys) > limit else "") if keys else "none"


METRIC_NAME = "support_and_keys"
"""The name of :func:`example_score`."""
DEMO_THRESHOLD = 0.75
"""The score a training trace needs to become a demo."""
SUPPORT_WEIGHT = 0.5
"""Weight ``w`` of ``support_correct`` in the score (see the module docstring)."""


def gold_examples(path: str | Path) -> list[dspy.Example]:
    """One example per row that carries a gold label, with the judge's inputs of the row.

    Raises:
        InputError: No row carries a gold label.
    """
    import dspy

    file = resolve_input(path)
    examples = []
    for row in load_ragbench(file):
        gold = (row.adherence_score, row.all_relevant_sentence_keys, row.all_utilized_sentence_keys)
        if all(value is None for value in gold):
            continue
        inputs = row.judge_inputs()
        example = dspy.Example(
            **inputs,
            gold_supported=row.adherence_score,
            gold_relevant=row.all_relevant_sentence_keys,
            gold_utilized=row.all_utilized_sentence_keys,
            example_id=row.id,
            example_key=content_key(row.question, row.documents, row.response),
            example_group=row.id,
        )
        examples.append(example.with_inputs(*inputs))
    if not examples:
        raise InputError(
            "no row carries a gold label (adherence_score, all_relevant_sentence_keys or "
            "all_utilized_sentence_keys)",
            path=file,
        )
    return examples


def _not_supported(output: dict[str, Any]) -> list[str]:
    """The response sentence keys the output does not mark fully supported, in response order."""
    support = {
        item.get("response_sentence_key"): item.get("fully_supported")
        for item in output.get("sentence_support_information") or []
    }
    return [key for key, _ in output.get("response_sentences") or [] if not support.get(key, False)]


def example_score(
    example: dspy.Example, output: dict[str, Any], support_weight: float = SUPPORT_WEIGHT
) -> MetricResult:
    """Score a postprocessed judge output against the example's gold (see the module docstring)."""
    details: dict[str, Any] = {}
    lines: list[str] = []
    predicted = (output.get("scores") or {}).get("adherence")
    if predicted is None:
        predicted = bool(output.get("overall_supported"))
    gold_supported = example.get("gold_supported")
    if gold_supported is not None:
        correct = bool(predicted) == bool(gold_supported)
        details["support_correct"] = float(correct)
        lines.append(_support_text(bool(gold_supported), bool(predicted), _not_supported(output)))
    docs, _ = _keyed(example.inputs().toDict())
    doc_keys = {sentence.key for sentence in docs}
    key_scores = []
    for kind, gold_field, output_field in _KEY_FIELDS:
        gold = example.get(gold_field)
        if gold is None:
            continue
        known = [key for key in gold if key in doc_keys]
        if gold and not known:
            details[f"{kind}_gold_keys_unknown"] = len(gold)
            continue
        overlap = key_overlap(output.get(output_field) or [], known)
        details[f"{kind}_f1"] = overlap.f1
        key_scores.append(overlap.f1)
        lines.append(
            f"{kind.capitalize()} document-sentence keys: F1 {overlap.f1:.2f} "
            f"(precision {overlap.precision:.2f}, recall {overlap.recall:.2f}); "
            f"missed gold keys: {_list(overlap.missed)}; keys not in gold: {_list(overlap.extra)}."
        )
    if "support_correct" in details and key_scores:
        score = support_weight * details["support_correct"] + (1 - support_weight) * (
            sum(key_scores) / len(key_scores)
        )
    elif "support_correct" in details:
        score = details["support_correct"]
    elif key_scores:
        score = sum(key_scores) / len(key_scores)
    else:
        details["unscored"] = 1.0
        return MetricResult(0.0, "No gold label of this example could be compared.", details)
    return MetricResult(score, "\n".join(lines), details)


def _support_text(gold: bool, predicted: bool, not_supported: list[str]) -> str:
    flagged = _list(not_supported)
    if gold and predicted:
        return "Correct: the response is fully supported by the documents, as the judge said."
    if not gold and not predicted:
        return (
            "Correct: the response is not fully supported by the documents, as the judge said "
            f"(sentences it marked not fully supported: {flagged})."
        )
    if gold:
        return (
            "Wrong: the gold label says the response IS fully supported by the documents, but the "
            f"judge marked sentences as not fully supported: {flagged}. Check whether those "
            "sentences' information is stated in, or follows from, the documents."
        )
    return (
        "Wrong: the gold label says the response is NOT fully supported by the documents (at "
        "least one claim is not backed by them), but the judge marked every sentence as fully "
        "supported. Check each claim of each response sentence against the documents."
    )
