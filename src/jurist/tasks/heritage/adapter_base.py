"""What the heritage optimization targets share: gold loading, the program part they fill,
and the stratified train/dev/test files ``jurist optimize`` needs."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from jurist.atomic import atomic_write_text
from jurist.datasets.conll import TagDecoding
from jurist.datasets.heritage import DEFAULT_SPLITS, HeritageGoldEntry, load_heritage_gold, split_gold
from jurist.errors import InputError
from jurist.metrics.heritage_taxonomy import ENTITY_LABELS
from jurist.optimization import TaskAdapter

__all__ = ["HeritageAdapter", "Span", "listing", "span_text", "write_heritage_splits"]

Span = tuple[int, int, str]


def listing(items: Sequence[str], limit: int = 8) -> str:
    """Up to ``limit`` items joined by ``; ``, with how many more were left out."""
    shown = "; ".join(items[:limit])
    return shown + (f" (+{len(items) - limit} more)" if len(items) > limit else "")


def span_text(text: str, span: Span) -> str:
    """A span as ``'text' (TYPE) at [start, end)``."""
    start, end, label = span
    return f"{text[start:end]!r} ({label}) at [{start}, {end})"


def write_heritage_splits(
    gold: str | Path,
    out_dir: str | Path,
    *,
    ratios: Mapping[str, float] = DEFAULT_SPLITS,
    stratify: Sequence[str] = ("custodian_type",),
    seed: int = 0,
) -> dict[str, Path]:
    """Write the stratified splits of a heritage gold file as gold files ``{out_dir}/{part}.jsonl``.

    The split is :func:`~jurist.datasets.heritage.split_gold` (70/15/15 by default), so
    ``jurist judge heritage --split dev`` judges the same texts as ``dev.jsonl``.

    Returns:
        ``{part: path}`` (``train``, ``dev``, ``test`` by default).
    """
    entries = load_heritage_gold(gold).entries
    parts = split_gold(entries, ratios=ratios, stratify=stratify, seed=seed)
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    written = {}
    for name, members in parts.items():
        path = folder / f"{name}.jsonl"
        lines = [
            json.dumps(e.model_dump(mode="json", exclude_none=True), ensure_ascii=False) for e in members
        ]
        atomic_write_text(path, "".join(line + "\n" for line in lines))
        written[name] = path
    return written


class HeritageAdapter(TaskAdapter):
    """What the heritage adapters share: gold loading, and which part of the judge they fill.

    Class attributes:
        subtask: The heritage sub-task (``--tasks`` of ``jurist judge heritage``).
        program_attribute: The attribute of :class:`~jurist.programs.heritage.HeritageProgram`
            holding this program; an artifact of the task loads there.
    """

    subtask: ClassVar[str]
    program_attribute: ClassVar[str]
    tags: TagDecoding | None = None
    """How token-tag gold files are decoded (``None``: lenient)."""

    @classmethod
    def program_options(cls, labels: Sequence[str] = ENTITY_LABELS) -> dict[str, Any]:
        """The options of this program in a heritage judge run with ``labels``."""
        return {}

    def _entries(self, path: str | Path) -> tuple[list[HeritageGoldEntry], Path | None]:
        gold = load_heritage_gold(path, tags=self.tags)
        return gold.entries, gold.path

    @staticmethod
    def _none_found(path: Path | None, what: str, field: str) -> InputError:
        return InputError(f"no entry carries {what}", path=path, field=field)
