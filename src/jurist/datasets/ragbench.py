"""RAGBench rows: loading, validation and the gold labels they may carry.

Field names are RAGBench's (``id``, ``question``, ``documents``, ``response``, and the gold
``all_relevant_sentence_keys``, ``all_utilized_sentence_keys``, ``adherence_score``,
``relevance_score``, ``utilization_score``, ``completeness_score``). When a row carries
RAGBench's own ``documents_sentences`` / ``response_sentences`` (lists of ``[key, text]``),
the judge sees exactly those keys, so its labels compare key for key with the gold ones.

Rows normalised like the ``ragbench_covidqa`` export (``source_id``, ``candidate_answer``,
``gold_context`` with documents separated by blank lines, ``supporting_chunk_ids``,
``risk_type``) are read too; :data:`ALIASES` gives the mapping.

Gold sentence keys (``all_relevant_sentence_keys``, ``all_utilized_sentence_keys``) are
normalised on reading with :func:`jurist.sentences.normalise_key`: RAGBench's published
labels spell some keys ``"0b."`` (13 of the 263 keys of the bundled covidqa sample), and
files written by hand add whitespace or capitals. A key is replaced by its canonical
spelling, a key that repeats after normalising is kept once, and every change is recorded
(:attr:`RagbenchRow.key_fixes`, :attr:`RagbenchDataset.key_fixes`) so a report can say how
many keys were fixed. A key that is empty once normalised (``"."``) is an error.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from jurist.datasets.io import decode_list, iter_records, normalise_id, sha256_file
from jurist.errors import InputError
from jurist.safe_load import quote
from jurist.sentences import normalise_key

ALIASES = {
    "source_id": "id",
    "candidate_answer": "response",
    "supporting_chunk_ids": "all_relevant_sentence_keys",
}
"""Fields of the covidqa export and the RAGBench field each one stands for."""

LIST_FIELDS = (
    "documents",
    "all_relevant_sentence_keys",
    "all_utilized_sentence_keys",
    "documents_sentences",
    "response_sentences",
)

GOLD_KEY_FIELDS = ("all_relevant_sentence_keys", "all_utilized_sentence_keys")
"""The gold fields whose sentence keys are normalised on reading."""


@dataclass(frozen=True)
class KeyFix:
    """One gold sentence key whose spelling was changed on reading.

    Attributes:
        id: The row's id.
        field: ``all_relevant_sentence_keys`` or ``all_utilized_sentence_keys``.
        key: The key as written in the file (``"0b."``).
        normalised: The key it was read as (``"0b"``).
        duplicate: The normalised key was already in the list, so this one was not kept.
    """

    id: str
    field: str
    key: str
    normalised: str
    duplicate: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "field": self.field,
            "key": self.key,
            "normalised": self.normalised,
            "duplicate": self.duplicate,
        }


class RagbenchRow(BaseModel):
    """One RAGBench example: the judge's inputs and, optionally, gold labels."""

    model_config = ConfigDict(extra="ignore")

    id: str
    question: str = Field(min_length=1)
    documents: list[str] = Field(min_length=1)
    response: str
    documents_sentences: list[list[tuple[str, str]]] | None = None
    response_sentences: list[tuple[str, str]] | None = None
    all_relevant_sentence_keys: list[str] | None = None
    all_utilized_sentence_keys: list[str] | None = None
    adherence_score: bool | None = None
    relevance_score: float | None = None
    utilization_score: float | None = None
    completeness_score: float | None = None
    _key_fixes: tuple[KeyFix, ...] = PrivateAttr(default=())

    @property
    def key_fixes(self) -> tuple[KeyFix, ...]:
        """The gold sentence keys of this row whose spelling was changed on reading."""
        return self._key_fixes

    @property
    def gold_key_count(self) -> int:
        """The number of gold sentence keys of this row as written (before removing repeats)."""
        kept = sum(len(getattr(self, name) or []) for name in GOLD_KEY_FIELDS)
        return kept + sum(1 for fix in self._key_fixes if fix.duplicate)

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, value: Any) -> Any:
        if isinstance(value, str):
            return normalise_id(value)
        return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value

    def judge_inputs(self) -> dict[str, Any]:
        """The keyword inputs of a RAGBench judge for this row."""
        inputs: dict[str, Any] = {
            "question": self.question,
            "documents": self.documents,
            "response": self.response,
        }
        if self.documents_sentences is not None and self.response_sentences is not None:
            inputs["document_sentences"] = [list(pair) for doc in self.documents_sentences for pair in doc]
            inputs["response_sentences"] = [list(pair) for pair in self.response_sentences]
        return inputs


def _normalise_keys(
    row: dict[str, Any], *, path: Path, line: int, written: dict[str, str]
) -> list[tuple[str, str, str, bool]]:
    """Replace the gold keys of ``row`` by their canonical spelling; return the changes made
    as ``(field, key, normalised, duplicate)``. ``written`` maps a field to the name the file
    gave it (for error messages)."""
    fixes: list[tuple[str, str, str, bool]] = []
    for name in GOLD_KEY_FIELDS:
        keys = row.get(name)
        if not isinstance(keys, list):
            continue
        kept: list[Any] = []
        for key in keys:
            if not isinstance(key, str):
                kept.append(key)  # the schema reports the wrong type
                continue
            canonical = normalise_key(key)
            if not canonical:
                raise InputError(
                    f"sentence key {key!r} is empty once normalised",
                    path=path,
                    line=line,
                    field=written.get(name, name),
                )
            duplicate = canonical in kept
            if canonical != key or duplicate:
                fixes.append((name, key, canonical, duplicate))
            if not duplicate:
                kept.append(canonical)
        row[name] = kept
    return fixes


def _normalise(
    record: dict[str, Any], *, path: Path, line: int
) -> tuple[dict[str, Any], list[tuple[str, str, str, bool]]]:
    row = dict(record)
    written: dict[str, str] = {}
    for alias, name in ALIASES.items():
        if alias in row and name not in row:
            row[name] = row.pop(alias)
            written[name] = alias
    if "documents" not in row and "gold_context" in row:
        context = row.pop("gold_context")
        if not isinstance(context, str):
            raise InputError("expected text", path=path, line=line, field="gold_context")
        row["documents"] = [part.strip() for part in context.split("\n\n") if part.strip()]
    if "adherence_score" not in row and "risk_type" in row:
        risk = str(row.pop("risk_type")).strip().lower()
        if risk not in ("supported", "unsupported"):
            raise InputError(
                f"expected 'supported' or 'unsupported', got {risk!r}",
                path=path,
                line=line,
                field="risk_type",
            )
        row["adherence_score"] = risk == "supported"
    for name in LIST_FIELDS:
        value = row.get(name)
        if value is None or (isinstance(value, str) and not value.strip()):
            row.pop(name, None)
            continue
        row[name] = decode_list(value, path=path, line=line, field=written.get(name, name))
    if "id" not in row:
        row["id"] = f"row-{line}"
    return row, _normalise_keys(row, path=path, line=line, written=written)


def _row(record: dict[str, Any], *, path: Path, line: int) -> RagbenchRow:
    values, fixes = _normalise(record, path=path, line=line)
    try:
        row = RagbenchRow.model_validate(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        message = "missing" if first["type"] == "missing" else first["msg"]
        raise InputError(message, path=path, line=line, field=field) from None
    row._key_fixes = tuple(KeyFix(row.id, *fix) for fix in fixes)
    return row


@dataclass(frozen=True)
class RagbenchDataset:
    """A validated RAGBench file: its path, hash and row count; rows are read on demand.

    Attributes:
        path: The file.
        sha256: Its hash.
        rows: The number of rows.
        gold_keys: The gold sentence keys of all rows, as written in the file.
        key_fixes: Every gold key whose spelling was normalised on reading, in file order.
    """

    path: Path
    sha256: str
    rows: int
    gold_keys: int = 0
    key_fixes: tuple[KeyFix, ...] = ()

    def __iter__(self) -> Iterator[RagbenchRow]:
        for line, record in iter_records(self.path):
            yield _row(record, path=self.path, line=line)

    def describe(self) -> dict[str, Any]:
        return {"path": str(self.path), "sha256": self.sha256, "items": self.rows}


def load_ragbench(path: str | Path) -> RagbenchDataset:
    """Validate every row of a RAGBench file (without keeping them) and return the dataset.

    Raises:
        InputError: A row is malformed, misses a field, has a wrong type, repeats an id, or has
            a gold sentence key that is empty once normalised;
            the message names the file, the line and the field.
    """
    file = Path(path)
    seen: dict[str, int] = {}
    gold_keys = 0
    fixes: list[KeyFix] = []
    for line, record in iter_records(file):
        row = _row(record, path=file, line=line)
        if row.id in seen:
            raise InputError(
                f"id {quote(row.id)} already used on line {seen[row.id]}", path=file, line=line, field="id"
            )
        seen[row.id] = line
        gold_keys += row.gold_key_count
        fixes.extend(row.key_fixes)
    return RagbenchDataset(
        path=file, sha256=sha256_file(file), rows=len(seen), gold_keys=gold_keys, key_fixes=tuple(fixes)
    )
