"""Optimizing the heritage programs with one example per text: entity extraction and
custodian type classification (see :mod:`jurist.tasks.heritage.optimization`): their gold
examples, the output check of an answer, and the score of one example with feedback."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dspy

from jurist.datasets.heritage.conll import TagDecoding
from jurist.metrics.heritage.classification import classification_example_score
from jurist.metrics.heritage.ner import as_span, entity_example_f1, match_entities
from jurist.metrics.heritage.taxonomy import CUSTODIAN_TYPE_NAMES, TYPE_CATEGORY
from jurist.optimization import MetricResult, content_key
from jurist.programs.heritage.program import anchor_entities, classification_output
from jurist.tasks.heritage.optimization import gold_entries, listing, none_found, span_text

__all__ = [
    "classification_examples",
    "classification_output_of",
    "classification_score",
    "ner_examples",
    "ner_output",
    "ner_score",
]


def ner_examples(path: str | Path, labels: Sequence[str], tags: TagDecoding | None) -> list[dspy.Example]:
    """One example per text, with its gold spans of the ``labels`` types (others left out).

    Raises:
        InputError: The gold file holds no text.
    """
    entries, file = gold_entries(path, tags)
    allowed = set(labels)
    examples = [
        dspy.Example(
            text=entry.text,
            gold_spans=[list(span) for span in entry.spans() if span[2] in allowed],
            example_id=entry.id,
            example_key=content_key(entry.text),
            example_group=entry.id,
        ).with_inputs("text")
        for entry in entries
    ]
    if not examples:
        raise none_found(file, "a text", "text")
    return examples


def ner_output(prediction: Any, inputs: dict[str, Any], labels: Sequence[str]) -> dict[str, Any]:
    """The extractor's answer anchored in the text (:func:`~jurist.programs.heritage.anchor_entities`)."""
    stated = getattr(prediction, "entities", None) or []
    return anchor_entities(inputs["text"], stated, tuple(labels)).model_dump(mode="json")


def ner_score(example: dspy.Example, output: dict[str, Any]) -> MetricResult:
    """Strict entity F1 of the kept spans, with missed, spurious, mistyped and misbounded spans."""
    gold = [as_span(span) for span in example.gold_spans]
    pred = [as_span(entity) for entity in output.get("entities") or []]
    f1 = entity_example_f1(gold, pred)
    matched = match_entities(pred, gold)
    free_pred = [i for i in range(len(pred)) if i not in {p for p, _ in matched}]
    free_gold = [j for j in range(len(gold)) if j not in {g for _, g in matched}]
    mistyped, bounds, spurious = [], [], []
    for i in free_pred:
        p = pred[i]
        same = next((j for j in free_gold if gold[j][:2] == p[:2]), None)
        near = next((j for j in free_gold if gold[j][0] < p[1] and p[0] < gold[j][1]), None)
        j = same if same is not None else near
        if j is None:
            spurious.append(span_text(example.text, p))
            continue
        free_gold.remove(j)
        g = gold[j]
        if same is not None:
            mistyped.append(f"{example.text[g[0] : g[1]]!r} at [{g[0]}, {g[1]}) is {g[2]}, not {p[2]}")
        else:
            bounds.append(f"{span_text(example.text, p)} should be {span_text(example.text, g)}")
    missed = [span_text(example.text, gold[j]) for j in free_gold]
    flagged = output.get("flagged") or []
    moved = sum(e.get("anchoring") == "re-anchored" for e in output.get("entities") or [])
    details = {
        "entity_f1": f1,
        "true_positives": len(matched),
        "missed": len(missed),
        "spurious": len(spurious),
        "mistyped": len(mistyped),
        "wrong_boundaries": len(bounds),
        "flagged": len(flagged),
        "reanchored": moved,
    }
    if not gold and not pred:
        lines = ["Correct: the text has no entity of the allowed types, and none was returned."]
    elif len(matched) == len(gold) == len(pred):
        lines = [f"Correct: all {len(gold)} gold entities found exactly, nothing extra."]
    else:
        lines = [
            f"Entity F1 {f1:.2f}: {len(matched)} of {len(gold)} gold entities found exactly "
            f"(same span, same type); {len(pred)} entities kept from the answer."
        ]
    if missed:
        lines.append(f"Missed gold entities: {listing(missed)}.")
    if mistyped:
        lines.append(f"Wrong type: {listing(mistyped)}.")
    if bounds:
        lines.append(f"Wrong boundaries: {listing(bounds)}.")
    if spurious:
        lines.append(f"Not entities in gold (spurious): {listing(spurious)}.")
    if flagged:
        reasons = [f"{f.get('text')!r} ({f.get('type')}): {f.get('reason')}" for f in flagged]
        lines.append(
            f"Stated but discarded by the output check: {listing(reasons)}. Use only the allowed "
            "types, copy each entity's text exactly, and do not return overlapping or repeated spans."
        )
    if moved:
        lines.append(
            f"{moved} entit{'y' if moved == 1 else 'ies'} had offsets that did not hold their text; "
            "start and end must satisfy text[start:end] == the entity."
        )
    return MetricResult(f1, "\n".join(lines), details)


def _type_name(letter: str) -> str:
    return (
        f"{letter} ({CUSTODIAN_TYPE_NAMES.get(letter, 'unknown letter')}, {TYPE_CATEGORY.get(letter, '?')})"
    )


def classification_examples(path: str | Path, tags: TagDecoding | None) -> list[dspy.Example]:
    """One example per text with a gold custodian type.

    Raises:
        InputError: No entry carries a type classification.
    """
    entries, file = gold_entries(path, tags)
    examples = [
        dspy.Example(
            text=entry.text,
            gold_type=entry.type_classification.primary_type,
            gold_secondary=list(entry.type_classification.secondary_types),
            gold_rationale=entry.type_classification.rationale,
            example_id=entry.id,
            example_key=content_key(entry.text),
            example_group=entry.id,
        ).with_inputs("text")
        for entry in entries
        if entry.type_classification is not None
    ]
    if not examples:
        raise none_found(file, "a type_classification", "type_classification")
    return examples


def classification_output_of(prediction: Any, inputs: dict[str, Any]) -> dict[str, Any]:
    """The classifier's checked answer (:func:`~jurist.programs.heritage.classification_output`)."""
    return classification_output(prediction).model_dump(mode="json")


def classification_score(
    example: dspy.Example, output: dict[str, Any], category_credit: float = 0.5
) -> MetricResult:
    """1 for the gold type, ``category_credit`` for another type of its category, else 0."""
    gold, pred = str(example.gold_type), str(output.get("primary_type"))
    score = classification_example_score(gold, pred, category_credit=category_credit)
    details = {"type_correct": float(gold == pred), "type_score": score}
    if gold == pred:
        lines = [f"Correct: the institution is {_type_name(gold)}."]
    else:
        lines = [f"Wrong: the gold type is {_type_name(gold)}, but the judge said {_type_name(pred)}."]
        if score:
            lines.append(f"Same category: partial credit {score:g}.")
    if example.get("gold_rationale"):
        lines.append(f"Gold rationale: {str(example.gold_rationale).rstrip('.')}.")
    gold_more = ", ".join(sorted(example.gold_secondary or [])) or "none"
    pred_more = ", ".join(sorted(output.get("secondary_types") or [])) or "none"
    if gold_more != pred_more:
        lines.append(f"Secondary types: gold {gold_more}, judge {pred_more}.")
    return MetricResult(score, " ".join(lines), details)
