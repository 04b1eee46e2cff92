"""Heritage custodian tasks: the DSPy signatures and the typed outputs of their programs.

Four judge tasks over texts about heritage institutions (museums, archives, libraries,
societies, ...):

- :class:`HeritageEntityExtraction`: typed entity spans with character offsets;
- :class:`CustodianTypeClassification`: the GLAMORCUBESFIXPHDNT type, with secondary types;
- :class:`HeritageEntityLinking`: rank knowledge-base candidates for a mention, or NIL;
- :class:`HeritageQuestionAnswering`: an answer with supporting facts quoted from the text.

The pydantic models below are the outputs every heritage program, LLM or baseline, records.
"""

from __future__ import annotations

from typing import Literal

import dspy
from pydantic import BaseModel, Field

from jurist.metrics.heritage.taxonomy import CUSTODIAN_TYPE_NAMES, CustodianType

__all__ = [
    "CustodianTypeClassification",
    "CustodianTypeLabel",
    "Entity",
    "EntityExtraction",
    "ExtractedEntity",
    "FlaggedEntity",
    "HeritageEntityExtraction",
    "HeritageEntityLinking",
    "HeritageOutput",
    "HeritageQuestionAnswering",
    "LinkCandidate",
    "LinkDecision",
    "QAAnswer",
    "RetrievalResult",
    "RetrievedDocument",
]


class ExtractedEntity(BaseModel):
    """An entity as an extractor states it: its text, type and character offsets."""

    text: str = Field(description="The entity exactly as written in the text.")
    type: str = Field(description="One of the allowed entity types.")
    start: int = Field(description="Character offset where the entity starts (0-based).")
    end: int = Field(description="Character offset just after the entity ends.")


class Entity(BaseModel):
    """A kept entity: ``text == source[start:end]`` always holds.

    ``anchoring`` says how its offsets were obtained: ``exact`` (as stated),
    ``re-anchored`` (the stated offsets did not hold the stated text, which was found
    elsewhere; ``stated_start``/``stated_end`` keep what was stated) or ``trimmed``
    (surrounding spaces or punctuation removed).
    """

    text: str
    type: str
    start: int
    end: int
    anchoring: Literal["exact", "re-anchored", "trimmed"] = "exact"
    stated_start: int | None = None
    stated_end: int | None = None


class FlaggedEntity(BaseModel):
    """A stated entity that was not kept, and why (never dropped silently)."""

    text: str
    type: str
    start: int | None = None
    end: int | None = None
    reason: Literal["unknown_type", "empty", "not_in_text", "overlap", "duplicate"]
    detail: str = ""


class EntityExtraction(BaseModel):
    """The entities kept, and the stated entities that were flagged instead."""

    entities: list[Entity] = Field(default_factory=list)
    flagged: list[FlaggedEntity] = Field(default_factory=list)


class CustodianTypeLabel(BaseModel):
    """The custodian type of the institution a text is mainly about."""

    primary_type: CustodianType
    secondary_types: list[CustodianType] = Field(default_factory=list)
    rationale: str = ""


class LinkCandidate(BaseModel):
    """A knowledge-base entry proposed for a mention."""

    kb_id: str
    label: str = ""
    score: float = 0.0


class LinkDecision(BaseModel):
    """The linking of one mention: ranked candidates (best first) or NIL.

    ``dropped_ids`` lists ids an LLM returned that were not among the offered candidates.
    """

    id: str
    mention: str
    candidates: list[LinkCandidate] = Field(default_factory=list)
    nil: bool = False
    dropped_ids: list[str] = Field(default_factory=list)


class QAAnswer(BaseModel):
    """An answer to one question with the facts it rests on.

    ``supporting_facts`` are quotes found in the context; quotes that are not in it are
    moved to ``ungrounded_facts``.
    """

    id: str
    question: str
    answer: str
    supporting_facts: list[str] = Field(default_factory=list)
    ungrounded_facts: list[str] = Field(default_factory=list)


class RetrievedDocument(BaseModel):
    """One retrieved document with its score and the retriever that found it."""

    doc_id: str
    score: float
    source: str = "bm25"


class RetrievalResult(BaseModel):
    """The ranked documents retrieved for one question."""

    id: str
    query: str
    results: list[RetrievedDocument] = Field(default_factory=list)


class HeritageOutput(BaseModel):
    """Everything a heritage program recorded for one gold text (tasks not run stay empty)."""

    tasks: list[str]
    entities: list[Entity] = Field(default_factory=list)
    flagged_entities: list[FlaggedEntity] = Field(default_factory=list)
    classification: CustodianTypeLabel | None = None
    links: list[LinkDecision] = Field(default_factory=list)
    answers: list[QAAnswer] = Field(default_factory=list)
    retrieval: list[RetrievalResult] = Field(default_factory=list)


_TYPE_LIST = "\n".join(f"- {letter}: {name}" for letter, name in CUSTODIAN_TYPE_NAMES.items())


class HeritageEntityExtraction(dspy.Signature):
    """Extract the named entities of a text about heritage institutions.

    Return every entity of the allowed types, each with its exact text as written, its
    type, and its character offsets: `start` is the 0-based index of its first character
    and `end` the index just after its last, so that text[start:end] is the entity.
    Do not return overlapping entities: a place name inside an institution's name is part
    of the institution.
    """

    text: str = dspy.InputField(desc="The text.")
    entity_types: str = dspy.InputField(desc="The allowed entity types, one per line: TYPE: meaning.")
    entities: list[ExtractedEntity] = dspy.OutputField(desc="The entities, in text order.")


class CustodianTypeClassification(dspy.Signature):
    __doc__ = f"""Classify the heritage institution a text is mainly about into one of the 19
    GLAMORCUBESFIXPHDNT custodian types, and list any further types it also has.

    Types:
{_TYPE_LIST}
    """

    text: str = dspy.InputField(desc="A text about a heritage institution.")
    primary_type: CustodianType = dspy.OutputField(desc="The one letter that fits best.")
    secondary_types: list[CustodianType] = dspy.OutputField(
        desc="Other letters that also apply (may be empty); never the primary type."
    )
    rationale: str = dspy.OutputField(desc="One sentence on why.")


class HeritageEntityLinking(dspy.Signature):
    """Link a mention of a heritage institution to a knowledge base.

    Rank the candidate entries that could be the institution meant, best first, by their
    ids. Names may be in another language than the text (e.g. a Dutch archive listed under
    its English or German name). If no candidate is the institution meant, answer NIL
    (is_nil true) and rank nothing.
    """

    mention: str = dspy.InputField(desc="The institution's name as written in the text.")
    context: str = dspy.InputField(desc="The text the mention comes from.")
    candidates: str = dspy.InputField(desc="Knowledge-base entries, one per line: id | name | ISIL codes.")
    ranked_ids: list[str] = dspy.OutputField(desc="Ids of the matching candidates, best first.")
    is_nil: bool = dspy.OutputField(desc="True if no candidate is the institution meant.")


class HeritageQuestionAnswering(dspy.Signature):
    """Answer a question about heritage institutions from the context alone.

    Give a short answer, and quote the passages of the context that support it, word for
    word. If the context does not answer the question, say so.
    """

    question: str = dspy.InputField()
    context: str = dspy.InputField(desc="The text to answer from.")
    answer: str = dspy.OutputField(desc="A short answer, in the language of the question.")
    supporting_facts: list[str] = dspy.OutputField(
        desc="Exact quotes from the context that support the answer."
    )
