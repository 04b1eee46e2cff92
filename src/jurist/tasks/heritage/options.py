"""The options of the heritage tasks (``jurist judge heritage --tasks ner,qa --split dev``).

Every field is named after the flag of the old ``jurist judge heritage`` / ``jurist score
heritage`` commands, so their command lines keep working through the generic commands.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from jurist.datasets.heritage.conll import TagDecoding
from jurist.metrics.heritage.taxonomy import ENTITY_LABELS
from jurist.tasks.heritage.judging import ALL_TASKS

__all__ = [
    "ClassificationOptions",
    "HeritageOptions",
    "LinkingOptions",
    "NerOptions",
    "QAOptions",
    "RunOptions",
    "TagOptions",
    "documents_of",
    "tag_decoding",
    "with_documents",
]


def _labels(value: list[str]) -> list[str]:
    if not value:
        raise ValueError("name at least one entity type")
    return value


class RunOptions(BaseModel):
    """What every heritage task takes: which texts a run judges, and the run to compare with."""

    model_config = ConfigDict(extra="forbid")
    _documents: dict[str, str] | None = PrivateAttr(default=None)
    """The texts BM25 retrieval searches (set by :func:`with_documents` for a run; not an option)."""
    _kb_sha256: str | None = PrivateAttr(default=None)
    """The SHA-256 of the knowledge base linking searches (set by :func:`with_documents` for a
    run; not an option): a knowledge base edited in place keys its verdicts apart."""

    split: str | None = Field(
        None, description="judge: only train, dev or test of a 70/15/15 split (default: every text)."
    )
    stratify: list[str] = Field(
        ["custodian_type"], description="judge: comma-separated fields the split is stratified by."
    )
    seed: int = Field(0, description="judge: seed of the split.")
    compare: Path | None = Field(
        None, description="score: another run of the same gold; paired significance tests against it."
    )


class TagOptions(RunOptions):
    """How a token-tag gold (or predictions) file is decoded (``.conll``, ``.bio``, ``.iob``, ...)."""

    tag_mode: Literal["lenient", "strict"] | None = Field(
        None,
        description="token-tag files: lenient (seqeval's default) or strict (seqeval's mode='strict') "
        "decoding of the tags (default: lenient, or what the scored run recorded).",
    )
    tag_scheme: Literal["IOB1", "IOB2", "IOBES", "BILOU"] | None = Field(
        None,
        description="token-tag files, strict decoding: the tag scheme (default: detected from the gold's "
        "prefixes as seqeval does; IOB1 must be named).",
    )


def tag_decoding(options: Any) -> TagDecoding | None:
    """The decoding an option set asks for, or ``None`` when it names neither mode nor scheme."""
    mode = getattr(options, "tag_mode", None)
    scheme = getattr(options, "tag_scheme", None)
    if mode is None and scheme is None:
        return None
    return TagDecoding(mode or ("strict" if scheme else "lenient"), scheme)


class HeritageOptions(TagOptions):
    """The options of ``heritage``: the sub-tasks, entity types and knowledge base of a run."""

    kb: Path | None = Field(
        None, description="judge: knowledge-base TSV for linking (default: the bundled subset)."
    )
    tasks: list[str] = Field(
        list(ALL_TASKS), description=f"judge: comma-separated sub-tasks (default: {','.join(ALL_TASKS)})."
    )
    labels: list[str] = Field(
        list(ENTITY_LABELS),
        description="judge: comma-separated entity types to extract (default: the seven heritage types).",
    )
    empty_queries: Literal["zero", "drop"] = Field(
        "zero",
        description="score: retrieval queries without a relevant document are counted as 0 on P/R/MRR "
        "(zero, ir-measures' convention) or left out of every mean (drop).",
    )

    @field_validator("tasks")
    @classmethod
    def _known_tasks(cls, value: list[str]) -> list[str]:
        unknown = [task for task in value if task not in ALL_TASKS]
        if unknown or not value:
            raise ValueError(f"unknown heritage tasks {unknown}; choose from {', '.join(ALL_TASKS)}")
        return value

    @field_validator("labels")
    @classmethod
    def _some_labels(cls, value: list[str]) -> list[str]:
        return _labels(value)


class NerOptions(TagOptions):
    """The options of ``heritage-ner``."""

    labels: list[str] = Field(
        list(ENTITY_LABELS),
        description="entity types to extract (default: the seven heritage types); optimize: gold spans "
        "of other types are left out, and the artifact loads only into a judge with the same labels.",
    )

    @field_validator("labels")
    @classmethod
    def _some_labels(cls, value: list[str]) -> list[str]:
        return _labels(value)


class ClassificationOptions(RunOptions):
    """The options of ``heritage-classification``."""

    category_credit: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="optimize: score of a wrong custodian type of the gold type's category (in [0, 1]).",
    )


class LinkingOptions(RunOptions):
    """The options of ``heritage-linking``."""

    kb: Path | None = Field(
        None, description="knowledge-base TSV to link against (default: the bundled subset)."
    )


class QAOptions(RunOptions):
    """The options of ``heritage-qa``."""


def with_documents(
    options: BaseModel, documents: dict[str, str] | None, kb_sha256: str | None = None
) -> BaseModel:
    """A copy of heritage ``options`` carrying the texts BM25 retrieval searches and the hash
    of the knowledge base linking searches (see :meth:`jurist.tasks.Task.judge_options`)."""
    copy = options.model_copy()
    if isinstance(copy, RunOptions):
        copy._documents = dict(documents) if documents is not None else None
        copy._kb_sha256 = kb_sha256
    return copy


def documents_of(options: BaseModel) -> dict[str, str] | None:
    """The texts :func:`with_documents` gave ``options``, or ``None``."""
    return options._documents if isinstance(options, RunOptions) else None
