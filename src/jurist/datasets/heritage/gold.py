"""The heritage gold standard: schema, validated loading, stratified splits, derived gold.

One gold entry (JSON object, one per line of a JSONL file or items of a JSON list) is the
framework's sample entry::

    {"id": "eval_001", "text": "...", "language": "nl", "country": "NL",
     "ner_annotations": [{"text": "Rijksmuseum Amsterdam", "type": "GRP.HER.MUS", "start": 4, "end": 25}],
     "type_classification": {"primary_type": "M", "secondary_types": [], "rationale": "..."},
     "entity_linking": {"Rijksmuseum Amsterdam": {"wikidata_id": "Q190804", "isil_code": "NL-RIJ"}},
     "qa_pairs": [{"question": "...", "answer": "...", "answer_type": "temporal",
                   "supporting_facts": ["opgericht in 1800"]}]}

Loading checks what a metric relies on and names the entry and span of any problem:
offsets inside the text, ``text[start:end]`` equal to the annotation's text, no two gold
spans overlapping (token metrics give each token one type), every linked mention the text
of an annotation, every supporting fact present in the text. ``entity_linking`` maps a
mention to its ids, or to ``null`` for a NIL mention (an institution the KB lacks).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from jurist.datasets.heritage.conll import TagDecoding, is_token_tag_file, token_tag_records
from jurist.datasets.io import iter_records, normalise_id, sha256_file
from jurist.datasets.samples import resolve_input
from jurist.errors import InputError
from jurist.metrics.heritage.taxonomy import CustodianType
from jurist.safe_load import quote

__all__ = [
    "GOLD_SAMPLE",
    "DEFAULT_SPLITS",
    "HeritageGold",
    "HeritageGoldEntry",
    "LinkTarget",
    "LinkingGold",
    "NerAnnotation",
    "QAPair",
    "SpanError",
    "TypeClassification",
    "linking_gold",
    "load_heritage_gold",
    "resolve_heritage_input",
    "retrieval_qrels",
    "split_gold",
    "stratum_value",
]

GOLD_SAMPLE = "heritage_gold.jsonl"
"""The bundled gold set in ``jurist/datasets/samples`` (``sample:heritage``)."""

DEFAULT_SPLITS: dict[str, float] = {"train": 0.70, "dev": 0.15, "test": 0.15}
"""The framework's split ratios."""

AnswerType = Literal["factual", "comparative", "relationship", "temporal"]


class SpanError(ValueError):
    """A gold entry whose annotations do not fit its text; names the entry and the field."""

    def __init__(self, entry_id: str, field: str, message: str) -> None:
        super().__init__(f"entry {entry_id!r}, {field}: {message}")
        self.entry_id = entry_id
        self.field = field
        self.reason = message


class NerAnnotation(BaseModel):
    """One gold entity span: ``text == entry.text[start:end]`` (``end`` exclusive)."""

    model_config = ConfigDict(extra="forbid")

    text: str
    type: str
    start: int = Field(ge=0)
    end: int = Field(gt=0)


class TypeClassification(BaseModel):
    """The custodian type of the institution a text is about."""

    model_config = ConfigDict(extra="forbid")

    primary_type: CustodianType
    secondary_types: list[CustodianType] = Field(default_factory=list)
    rationale: str = ""


class LinkTarget(BaseModel):
    """The knowledge-base ids of a linked mention (``wikidata_id`` is the KB key)."""

    model_config = ConfigDict(extra="forbid")

    wikidata_id: str | None = None
    isil_code: str | None = None
    gnd_id: str | None = None
    viaf_id: str | None = None
    ghcid: str | None = None


class QAPair(BaseModel):
    """A question about the text, its gold answer and the text passages that support it.

    ``relevance`` optionally grades documents (gold entry ids) for this question as a
    retrieval query (0-3); by default the entry itself is grade 3 (see :func:`retrieval_qrels`).
    """

    model_config = ConfigDict(extra="forbid")

    question: str
    answer: str
    answer_type: AnswerType = "factual"
    supporting_facts: list[str] = Field(default_factory=list)
    relevance: dict[str, int] = Field(default_factory=dict)


class HeritageGoldEntry(BaseModel):
    """One annotated text; validated so that every offset and quote fits the text."""

    model_config = ConfigDict(extra="forbid")

    id: str
    text: str
    language: str | None = None
    country: str | None = None
    data_tier: int | None = None
    source_type: str | None = None
    ner_annotations: list[NerAnnotation] = Field(default_factory=list)
    type_classification: TypeClassification | None = None
    entity_linking: dict[str, LinkTarget | None] = Field(default_factory=dict)
    qa_pairs: list[QAPair] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("id")
    @classmethod
    def _id_nfc(cls, value: str) -> str:
        return normalise_id(value)

    @model_validator(mode="after")
    def _check_offsets(self) -> HeritageGoldEntry:
        check_entry(self)
        return self

    @property
    def custodian_type(self) -> str | None:
        """The primary custodian type, or ``None`` when the entry has no classification."""
        return self.type_classification.primary_type if self.type_classification else None

    def spans(self) -> list[tuple[int, int, str]]:
        """The gold entity spans as ``(start, end, type)``."""
        return [(a.start, a.end, a.type) for a in self.ner_annotations]


def check_entry(entry: HeritageGoldEntry) -> None:
    """Raise :class:`SpanError` for the first annotation that does not fit the entry's text."""
    text = entry.text
    ordered = sorted(enumerate(entry.ner_annotations), key=lambda pair: (pair[1].start, pair[1].end))
    for index, ann in enumerate(entry.ner_annotations):
        where = f"ner_annotations[{index}]"
        if ann.end <= ann.start:
            raise SpanError(entry.id, where, f"span {ann.text!r} at [{ann.start}, {ann.end}) is empty")
        if ann.end > len(text):
            raise SpanError(
                entry.id,
                where,
                f"span {ann.text!r} at [{ann.start}, {ann.end}) ends past the text ({len(text)} characters)",
            )
        found = text[ann.start : ann.end]
        if found != ann.text:
            raise SpanError(
                entry.id,
                where,
                f"span {ann.text!r} at [{ann.start}, {ann.end}) does not match the text there ({found!r})",
            )
    for (i, a), (j, b) in zip(ordered, ordered[1:], strict=False):
        if b.start < a.end:
            raise SpanError(
                entry.id,
                f"ner_annotations[{j}]",
                f"span {b.text!r} at [{b.start}, {b.end}) overlaps ner_annotations[{i}] {a.text!r} "
                f"at [{a.start}, {a.end}); gold spans must not overlap",
            )
    annotated = {a.text for a in entry.ner_annotations}
    for mention in entry.entity_linking:
        if mention not in annotated:
            raise SpanError(
                entry.id, f"entity_linking[{mention!r}]", "the mention is not the text of any ner annotation"
            )
    lowered = text.lower()
    for q, pair in enumerate(entry.qa_pairs):
        for f, fact in enumerate(pair.supporting_facts):
            if fact.lower() not in lowered:
                raise SpanError(
                    entry.id, f"qa_pairs[{q}].supporting_facts[{f}]", f"{fact!r} does not occur in the text"
                )


@dataclass
class HeritageGold:
    """A loaded gold set: its entries, and where they came from."""

    entries: list[HeritageGoldEntry]
    path: Path | None = None
    sha256: str | None = None
    tags: TagDecoding | None = None
    """How a token-tag gold file was decoded (``None`` for a JSON/JSONL gold file)."""

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Any:
        return iter(self.entries)

    def by_id(self) -> dict[str, HeritageGoldEntry]:
        """Entries by id."""
        return {entry.id: entry for entry in self.entries}

    def describe(self) -> dict[str, Any]:
        """``{"path", "sha256", "items"}`` for a run manifest (and ``tags`` for a token-tag file)."""
        described: dict[str, Any] = {
            "path": str(self.path) if self.path else None,
            "sha256": self.sha256,
            "items": len(self.entries),
        }
        if self.tags is not None:
            described["tags"] = self.tags.describe()
        return described


def resolve_heritage_input(path: str | Path) -> Path:
    """A gold path; ``sample:heritage`` is the bundled gold set, other ``sample:`` names as usual."""
    return resolve_input(path)


def _input_error(exc: ValidationError, path: Path, line: int, entry_id: Any) -> InputError:
    first = exc.errors()[0]
    original = (first.get("ctx") or {}).get("error")
    if isinstance(original, SpanError):
        return InputError(str(original), path=path, line=line, field=original.field)
    field = ".".join(str(part) for part in first["loc"]) or None
    prefix = f"entry {quote(entry_id)}: " if entry_id is not None else ""
    return InputError(prefix + first["msg"], path=path, line=line, field=field)


def load_heritage_gold(
    path: str | Path = "sample:heritage", *, tags: TagDecoding | None = None
) -> HeritageGold:
    """Load and validate a heritage gold file (JSONL, JSON, any format of ``iter_records``,
    or a token-tag file).

    A file ending in ``.conll``, ``.bio``, ``.iob``, ``.iob1``, ``.iob2``, ``.iobes`` or
    ``.bilou`` is a token-tag file (:mod:`jurist.datasets.heritage.conll`): each sentence becomes an
    entry ``s1``, ``s2``, ... with NER gold only, its text the tokens joined by spaces and
    its spans decoded by ``tags`` (default: seqeval's lenient decoding).

    Raises:
        InputError: A record does not validate; the message names the file, line, entry id
            and the field or span at fault (e.g. ``ner_annotations[2]``).
    """
    file = resolve_heritage_input(path)
    used: TagDecoding | None = None
    records: Iterable[tuple[int, dict[str, Any]]]
    if is_token_tag_file(file):
        records, used = token_tag_records(file, tags)
    else:
        records = iter_records(file)
    entries: list[HeritageGoldEntry] = []
    seen: dict[str, int] = {}
    for line, record in records:
        try:
            entry = HeritageGoldEntry.model_validate(record)
        except ValidationError as exc:
            raise _input_error(exc, file, line, record.get("id")) from None
        if entry.id in seen:
            raise InputError(
                f"entry id {quote(entry.id)} repeats line {seen[entry.id]}", path=file, line=line, field="id"
            )
        seen[entry.id] = line
        entries.append(entry)
    return HeritageGold(entries=entries, path=file, sha256=sha256_file(file), tags=used)


def stratum_value(entry: HeritageGoldEntry, name: str) -> Any:
    """The value of a stratification field: ``custodian_type``, an entry field, or a metadata key."""
    if name == "custodian_type":
        return entry.custodian_type
    if name in HeritageGoldEntry.model_fields and name not in {
        "ner_annotations",
        "entity_linking",
        "qa_pairs",
    }:
        return getattr(entry, name)
    return entry.metadata.get(name)


def split_gold(
    entries: Sequence[HeritageGoldEntry],
    *,
    ratios: Mapping[str, float] = DEFAULT_SPLITS,
    stratify: Sequence[str] = ("custodian_type",),
    seed: int = 0,
) -> dict[str, list[HeritageGoldEntry]]:
    """Split entries into named parts (70/15/15 by default), stratified by the named fields.

    Entries are grouped by the tuple of their ``stratify`` values (:func:`stratum_value`;
    e.g. ``("custodian_type", "language")``). Each group is shuffled with ``seed`` and cut
    by the ratios with largest-remainder rounding; the remainders are given out so that
    each part's total stays as close to its share of all entries as possible. The same
    inputs and seed always give the same split.

    Raises:
        ValueError: Ratios are not positive or a named field is set on no entry.
    """
    if not ratios or any(r <= 0 for r in ratios.values()):
        raise ValueError("split ratios must be positive")
    for name in stratify:
        if entries and all(stratum_value(e, name) is None for e in entries):
            raise ValueError(f"no entry has a value for the stratification field {name!r}")
    total_ratio = sum(ratios.values())
    shares = {name: r / total_ratio for name, r in ratios.items()}
    groups: dict[tuple[str, ...], list[HeritageGoldEntry]] = defaultdict(list)
    for entry in entries:
        groups[tuple(str(stratum_value(entry, name)) for name in stratify)].append(entry)
    rng = random.Random(seed)
    parts: dict[str, list[HeritageGoldEntry]] = {name: [] for name in shares}
    assigned = dict.fromkeys(shares, 0.0)
    expected = dict.fromkeys(shares, 0.0)
    for key in sorted(groups):
        members = sorted(groups[key], key=lambda e: e.id)
        rng.shuffle(members)
        n = len(members)
        counts = {name: int(n * share) for name, share in shares.items()}
        for name in shares:
            expected[name] += n * shares[name]
        leftover = n - sum(counts.values())
        # Give the remaining items to the parts furthest below their expected totals.
        for _ in range(leftover):
            name = max(shares, key=lambda s: (expected[s] - assigned[s] - counts[s], shares[s]))
            counts[name] += 1
        start = 0
        for name in shares:
            parts[name].extend(members[start : start + counts[name]])
            start += counts[name]
            assigned[name] += counts[name]
    return parts


@dataclass(frozen=True)
class LinkingGold:
    """One gold linking decision: a mention in an entry and its KB id, or NIL."""

    id: str
    entry_id: str
    mention: str
    start: int
    end: int
    type: str
    gold_kb_id: str | None
    target: LinkTarget | None

    @property
    def is_nil(self) -> bool:
        """True when the mention has no KB entry."""
        return self.gold_kb_id is None


def linking_gold(entries: Iterable[HeritageGoldEntry]) -> list[LinkingGold]:
    """The linking gold of entries: one record per ``entity_linking`` mention.

    The mention's offsets are those of its first annotation; its id is
    ``"{entry_id}@{start}-{end}"`` (unique even when two texts name the same institution).
    """
    records: list[LinkingGold] = []
    for entry in entries:
        for mention, target in entry.entity_linking.items():
            ann = next(a for a in entry.ner_annotations if a.text == mention)
            records.append(
                LinkingGold(
                    id=f"{entry.id}@{ann.start}-{ann.end}",
                    entry_id=entry.id,
                    mention=mention,
                    start=ann.start,
                    end=ann.end,
                    type=ann.type,
                    gold_kb_id=target.wikidata_id if target is not None else None,
                    target=target,
                )
            )
    return records


def retrieval_qrels(entries: Sequence[HeritageGoldEntry]) -> dict[str, dict[str, int]]:
    """Graded relevance judgments of every QA question, as a retrieval query over the entries.

    Query ``"{entry_id}#q{i}"`` judges its own entry grade 3 and every other entry that
    links one of the same KB ids grade 1 (another text about the same institution);
    a pair's explicit ``relevance`` grades override these.
    """
    ids_of = {
        entry.id: {t.wikidata_id for t in entry.entity_linking.values() if t is not None and t.wikidata_id}
        for entry in entries
    }
    qrels: dict[str, dict[str, int]] = {}
    for entry in entries:
        for index, pair in enumerate(entry.qa_pairs):
            judged = {
                other.id: 1
                for other in entries
                if other.id != entry.id and ids_of[entry.id] & ids_of[other.id]
            }
            judged[entry.id] = 3
            judged.update(pair.relevance)
            qrels[f"{entry.id}#q{index}"] = judged
    return qrels
