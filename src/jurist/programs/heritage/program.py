"""The heritage LLM programs and the checks that turn their answers into trusted outputs.

Each task is a small ``dspy.Module`` that can be run, optimized and saved on its own:

- :class:`HeritageEntityExtractor` (``text``) -> :class:`EntityExtraction` via
  :func:`anchor_entities`; per-example metric ``metrics.heritage.ner.entity_example_f1``.
- :class:`HeritageTypeClassifier` (``text``) -> :class:`CustodianTypeLabel` via
  :func:`classification_output`; metric
  ``metrics.heritage.classification.classification_example_score``.
- :class:`HeritageEntityLinker` (``mention``, ``context``) -> :class:`LinkDecision` via
  :func:`linking_output`; metric ``metrics.heritage.linking.linking_example_score``.
- :class:`HeritageQuestionAnswerer` (``question``, ``context``) -> :class:`QAAnswer` via
  :func:`qa_output`; metric ``metrics.heritage.qa.qa_example_score``.

:class:`HeritageProgram` runs them together over one gold text (what ``jurist judge
heritage`` calls). LLM offsets are not trusted: :func:`anchor_entities` keeps a span only
when its offsets hold its text, re-anchors it to the nearest occurrence of its text when
they do not, and flags what it cannot keep (unknown type, text not found, overlap,
duplicate) instead of dropping it silently.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import dspy
from pydantic import ValidationError

from jurist.judges.judge import OutputError
from jurist.metrics.heritage.taxonomy import CUSTODIAN_TYPES, ENTITY_LABEL_DESCRIPTIONS, ENTITY_LABELS
from jurist.programs.heritage.baseline import FuzzyLinker
from jurist.signatures.heritage import (
    CustodianTypeClassification,
    CustodianTypeLabel,
    Entity,
    EntityExtraction,
    ExtractedEntity,
    FlaggedEntity,
    HeritageEntityExtraction,
    HeritageEntityLinking,
    HeritageQuestionAnswering,
    LinkCandidate,
    LinkDecision,
    QAAnswer,
)

__all__ = [
    "HeritageEntityExtractor",
    "HeritageEntityLinker",
    "HeritageProgram",
    "HeritageQuestionAnswerer",
    "HeritageTypeClassifier",
    "anchor_entities",
    "classification_output",
    "entity_types_prompt",
    "format_candidates",
    "linking_output",
    "qa_output",
]

_EDGE = ' \t\n\r,;:!?"“”'


def entity_types_prompt(labels: Sequence[str], descriptions: Mapping[str, str] | None = None) -> str:
    """The allowed entity types as the extractor sees them: ``TYPE: meaning`` lines."""
    known = {**ENTITY_LABEL_DESCRIPTIONS, **(descriptions or {})}
    return "\n".join(f"{label}: {known.get(label, label)}" for label in labels)


def _as_extracted(value: Any) -> ExtractedEntity:
    if isinstance(value, ExtractedEntity):
        return value
    if isinstance(value, Mapping):
        return ExtractedEntity.model_validate(value)
    return ExtractedEntity.model_validate(value, from_attributes=True)


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """Offsets without surrounding spaces, quotes, separators and unbalanced brackets."""
    while start < end and text[start] in _EDGE:
        start += 1
    while end > start and text[end - 1] in _EDGE + "(":
        end -= 1
    span = text[start:end]
    if span.endswith(")") and span.count(")") > span.count("("):
        end -= 1
    if span.startswith("(") and span.count("(") > span.count(")"):
        start += 1
    return start, end


def _occurrences(text: str, needle: str) -> list[int]:
    found, position = [], text.find(needle)
    while position >= 0:
        found.append(position)
        position = text.find(needle, position + 1)
    return found


def anchor_entities(
    text: str, stated: Sequence[Any], labels: Sequence[str] = ENTITY_LABELS
) -> EntityExtraction:
    """Check stated entities against the text; keep, re-anchor, trim or flag each one.

    For each stated ``(text, type, start, end)``, in order:

    1. a type outside ``labels``, or an empty text, is flagged (``unknown_type``, ``empty``);
    2. the stated text is trimmed of surrounding spaces, quotes and stray punctuation;
    3. if ``source[start:end]`` holds it (after the same trim), the span is kept as stated
       (``exact``, or ``trimmed`` when the trim moved an offset);
    4. otherwise the text is searched in the source, exactly, then case-insensitively, and
       the occurrence nearest the stated start is taken (``re-anchored``, stated offsets
       kept); if it is nowhere in the source the entity is flagged ``not_in_text``;
    5. a span equal to a kept one is flagged ``duplicate``; spans overlapping a kept one are
       resolved longest first (ties: first stated) and the others flagged ``overlap``.

    Returns:
        Kept entities in text order, and every flagged one with its reason.
    """
    kept: list[Entity] = []
    flagged: list[FlaggedEntity] = []
    allowed = set(labels)
    for value in stated:
        item = _as_extracted(value)
        label = item.type.strip()
        if label not in allowed:
            flagged.append(
                FlaggedEntity(
                    text=item.text, type=label, start=item.start, end=item.end, reason="unknown_type"
                )
            )
            continue
        inner_start, inner_end = _trim(item.text, 0, len(item.text))
        wanted = item.text[inner_start:inner_end]
        if not wanted:
            flagged.append(
                FlaggedEntity(text=item.text, type=label, start=item.start, end=item.end, reason="empty")
            )
            continue
        start, end = max(0, item.start), min(len(text), item.end)
        if start < end:
            start, end = _trim(text, start, end)
        if text[start:end] == wanted:
            moved = (start, end) != (item.start, item.end)
            kept.append(
                Entity(
                    text=wanted,
                    type=label,
                    start=start,
                    end=end,
                    anchoring="trimmed" if moved else "exact",
                    stated_start=item.start if moved else None,
                    stated_end=item.end if moved else None,
                )
            )
            continue
        positions = _occurrences(text, wanted) or _occurrences(text.lower(), wanted.lower())
        if not positions:
            flagged.append(
                FlaggedEntity(
                    text=item.text,
                    type=label,
                    start=item.start,
                    end=item.end,
                    reason="not_in_text",
                    detail=f"the text there is {text[start:end]!r}"
                    if start < end
                    else "offsets outside the text",
                )
            )
            continue
        best = min(positions, key=lambda p: (abs(p - item.start), p))
        kept.append(
            Entity(
                text=text[best : best + len(wanted)],
                type=label,
                start=best,
                end=best + len(wanted),
                anchoring="re-anchored",
                stated_start=item.start,
                stated_end=item.end,
            )
        )
    order = sorted(range(len(kept)), key=lambda i: (-(kept[i].end - kept[i].start), i))
    chosen: list[Entity] = []
    for index in order:
        entity = kept[index]
        same = next(
            (c for c in chosen if (c.start, c.end, c.type) == (entity.start, entity.end, entity.type)), None
        )
        if same is not None:
            flagged.append(_flag(entity, "duplicate", f"repeats [{same.start}, {same.end})"))
            continue
        clash = next((c for c in chosen if entity.start < c.end and c.start < entity.end), None)
        if clash is not None:
            flagged.append(_flag(entity, "overlap", f"overlaps {clash.text!r} [{clash.start}, {clash.end})"))
            continue
        chosen.append(entity)
    return EntityExtraction(entities=sorted(chosen, key=lambda e: (e.start, e.end)), flagged=flagged)


def _flag(entity: Entity, reason: Any, detail: str) -> FlaggedEntity:
    return FlaggedEntity(
        text=entity.text, type=entity.type, start=entity.start, end=entity.end, reason=reason, detail=detail
    )


def classification_output(prediction: Any) -> CustodianTypeLabel:
    """The validated type label of a classifier's prediction; secondary types exclude the primary.

    Raises:
        OutputError: The primary type is not one of the 19 letters.
    """
    primary = str(getattr(prediction, "primary_type", "") or "").strip().upper()[:1]
    if primary not in CUSTODIAN_TYPES:
        raise OutputError(f"primary_type must be one of {''.join(CUSTODIAN_TYPES)}, got {primary!r}")
    secondary: list[str] = []
    for value in getattr(prediction, "secondary_types", None) or []:
        letter = str(value).strip().upper()[:1]
        if letter in CUSTODIAN_TYPES and letter != primary and letter not in secondary:
            secondary.append(letter)
    try:
        return CustodianTypeLabel(
            primary_type=primary,  # type: ignore[arg-type]
            secondary_types=secondary,  # type: ignore[arg-type]
            rationale=str(getattr(prediction, "rationale", "") or ""),
        )
    except ValidationError as exc:
        raise OutputError(str(exc)) from None


def format_candidates(
    candidates: Sequence[LinkCandidate], isil: Mapping[str, Sequence[str]] | None = None
) -> str:
    """Candidates as the linker sees them: ``id | name | ISIL codes`` lines."""
    lines = []
    for candidate in candidates:
        codes = ", ".join((isil or {}).get(candidate.kb_id, ()))
        lines.append(f"{candidate.kb_id} | {candidate.label}" + (f" | {codes}" if codes else ""))
    return "\n".join(lines) if lines else "(no candidates)"


def linking_output(
    prediction: Any, candidates: Sequence[LinkCandidate], *, id: str, mention: str
) -> LinkDecision:  # noqa: A002
    """The linker's ranking restricted to the offered candidates; ids it made up are listed as dropped.

    NIL when the linker says so or when no offered candidate remains.
    """
    offered = {c.kb_id: c for c in candidates}
    ranked: list[LinkCandidate] = []
    dropped: list[str] = []
    for value in getattr(prediction, "ranked_ids", None) or []:
        kb_id = str(value).strip()
        if kb_id in offered:
            if all(c.kb_id != kb_id for c in ranked):
                ranked.append(offered[kb_id])
        else:
            dropped.append(kb_id)
    nil = bool(getattr(prediction, "is_nil", False)) or not ranked
    return LinkDecision(
        id=id, mention=mention, candidates=[] if nil else ranked, nil=nil, dropped_ids=dropped
    )


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def qa_output(prediction: Any, context: str, *, id: str, question: str) -> QAAnswer:  # noqa: A002
    """The answer with its quotes checked: quotes not found in the context move to ``ungrounded_facts``.

    Raises:
        OutputError: The answer is missing.
    """
    answer = getattr(prediction, "answer", None)
    if not isinstance(answer, str) or not answer.strip():
        raise OutputError("the answer is empty")
    haystack = _norm(context)
    grounded: list[str] = []
    ungrounded: list[str] = []
    for fact in getattr(prediction, "supporting_facts", None) or []:
        quote = str(fact).strip()
        (grounded if quote and _norm(quote) in haystack else ungrounded).append(quote)
    return QAAnswer(
        id=id,
        question=question,
        answer=answer.strip(),
        supporting_facts=grounded,
        ungrounded_facts=ungrounded,
    )


class HeritageEntityExtractor(dspy.Module):
    """Typed entity spans with offsets, from an LM; check the answer with :func:`anchor_entities`."""

    def __init__(self, labels: Sequence[str] = ENTITY_LABELS) -> None:
        super().__init__()
        self.labels = tuple(labels)
        self.extract = dspy.Predict(HeritageEntityExtraction)

    def forward(self, text: str) -> dspy.Prediction:
        return self.extract(text=text, entity_types=entity_types_prompt(self.labels))

    async def aforward(self, text: str) -> dspy.Prediction:
        return await self.extract.acall(text=text, entity_types=entity_types_prompt(self.labels))


class HeritageTypeClassifier(dspy.Module):
    """The GLAMORCUBESFIXPHDNT type of a text's institution; check with :func:`classification_output`."""

    def __init__(self) -> None:
        super().__init__()
        self.classify = dspy.Predict(CustodianTypeClassification)

    def forward(self, text: str) -> dspy.Prediction:
        return self.classify(text=text)

    async def aforward(self, text: str) -> dspy.Prediction:
        return await self.classify.acall(text=text)


class HeritageEntityLinker(dspy.Module):
    """Ranks knowledge-base candidates for a mention, or answers NIL.

    Candidates come from a :class:`~jurist.programs.heritage.baseline.FuzzyLinker` (ISIL
    evidence, exact and fuzzy names); the LM only chooses among them. The returned
    prediction is a new one that also carries the offered ``candidates`` for
    :func:`linking_output`; the predictor's own prediction, which DSPy keeps in its trace
    and optimizers turn into demos, is left as the signature made it.
    """

    def __init__(self, candidate_source: FuzzyLinker | None = None) -> None:
        super().__init__()
        self.candidate_source = candidate_source
        self.link = dspy.Predict(HeritageEntityLinking)

    def _candidates(self, mention: str, context: str, start: int | None) -> tuple[list[LinkCandidate], str]:
        if self.candidate_source is None:
            raise OutputError("the linker has no knowledge base to draw candidates from")
        found = self.candidate_source.candidates(mention, context, start)
        kb = self.candidate_source.kb
        isil = {c.kb_id: kb.entries[c.kb_id].isil for c in found}
        return found, format_candidates(found, isil)

    def forward(self, mention: str, context: str, start: int | None = None) -> dspy.Prediction:
        found, listing = self._candidates(mention, context, start)
        prediction = self.link(mention=mention, context=context, candidates=listing)
        return dspy.Prediction(**prediction.toDict(), candidates=found)

    async def aforward(self, mention: str, context: str, start: int | None = None) -> dspy.Prediction:
        found, listing = self._candidates(mention, context, start)
        prediction = await self.link.acall(mention=mention, context=context, candidates=listing)
        return dspy.Prediction(**prediction.toDict(), candidates=found)


class HeritageQuestionAnswerer(dspy.Module):
    """A short answer with supporting quotes from the context; check with :func:`qa_output`."""

    def __init__(self) -> None:
        super().__init__()
        self.answer = dspy.Predict(HeritageQuestionAnswering)

    def forward(self, question: str, context: str) -> dspy.Prediction:
        return self.answer(question=question, context=context)

    async def aforward(self, question: str, context: str) -> dspy.Prediction:
        return await self.answer.acall(question=question, context=context)


class HeritageProgram(dspy.Module):
    """The heritage tasks over one gold text: extraction, classification, linking, QA.

    ``aforward`` runs the requested tasks' LM calls concurrently and returns a prediction
    with the raw sub-predictions (``extraction``, ``classification``, ``links``,
    ``answers``); the heritage task checks them with the ``*_output`` functions.
    """

    def __init__(
        self, *, labels: Sequence[str] = ENTITY_LABELS, candidate_source: FuzzyLinker | None = None
    ) -> None:
        super().__init__()
        self.extractor = HeritageEntityExtractor(labels)
        self.classifier = HeritageTypeClassifier()
        self.linker = HeritageEntityLinker(candidate_source)
        self.answerer = HeritageQuestionAnswerer()

    async def aforward(
        self,
        text: str,
        tasks: Sequence[str],
        mentions: Sequence[Mapping[str, Any]] = (),
        questions: Sequence[Mapping[str, Any]] = (),
        **_: Any,
    ) -> dspy.Prediction:
        calls: dict[str, Any] = {}
        if "ner" in tasks:
            calls["extraction"] = self.extractor.acall(text=text)
        if "classification" in tasks:
            calls["classification"] = self.classifier.acall(text=text)
        if "linking" in tasks:
            for m in mentions:
                calls[f"link:{m['id']}"] = self.linker.acall(
                    mention=m["mention"], context=text, start=m.get("start")
                )
        if "qa" in tasks:
            for q in questions:
                calls[f"qa:{q['id']}"] = self.answerer.acall(question=q["question"], context=text)
        values = await asyncio.gather(*calls.values())
        results = dict(zip(calls, values, strict=True))
        return dspy.Prediction(
            extraction=results.get("extraction"),
            classification=results.get("classification"),
            links={key[5:]: value for key, value in results.items() if key.startswith("link:")},
            answers={key[3:]: value for key, value in results.items() if key.startswith("qa:")},
        )

    def forward(self, **inputs: Any) -> dspy.Prediction:
        return asyncio.run(self.aforward(**inputs))
