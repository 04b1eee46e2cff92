"""What a heritage run judges: the texts of a gold set its setup selects (:class:`HeritageRun`).

A heritage run is an ordinary jurist run (:func:`jurist.jury.loop.run_judgment`): cached,
resumable, failed items recorded with their raw answers. Its dataset fingerprint covers the
gold file and the run's setup (sub-tasks, entity types, split, knowledge base), so a run
directory is never resumed with another setup; the setup is recorded in the manifest
(``dataset.heritage``), where scoring finds it again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurist.datasets.heritage.conll import TagDecoding
from jurist.datasets.heritage.gold import HeritageGold, HeritageGoldEntry, load_heritage_gold, split_gold
from jurist.datasets.heritage.kb import load_knowledge_base
from jurist.errors import InputError
from jurist.tasks.heritage.judging import check_tasks

__all__ = ["HeritageRun", "read_heritage_run", "select_entries"]


def _hash(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def select_entries(
    gold: HeritageGold, split: str | None, stratify: Sequence[str] = ("custodian_type",), seed: int = 0
) -> list[HeritageGoldEntry]:
    """The entries of ``gold`` a run judges: all, or one part of the 70/15/15 split.

    Raises:
        InputError: ``split`` names no part of the split.
    """
    if split is None:
        return gold.entries
    parts = split_gold(gold.entries, stratify=stratify, seed=seed)
    if split not in parts:
        raise InputError(f"unknown split {split!r}; choose from {', '.join(parts)}", field="split")
    return parts[split]


@dataclass(frozen=True)
class HeritageRun:
    """The dataset of a heritage run: the gold set, the entries judged and the run's setup.

    Attributes:
        gold: The whole gold set (retrieval searches every text of it).
        entries: The entries judged (all, or one part of the split).
        setup: The sub-tasks, entity types, split and knowledge base, as the manifest records them.
    """

    gold: HeritageGold
    entries: list[HeritageGoldEntry]
    setup: dict[str, Any]

    @property
    def documents(self) -> dict[str, str]:
        """``{entry id: text}`` of the whole gold set, the corpus of BM25 retrieval."""
        return {entry.id: entry.text for entry in self.gold.entries}

    def describe(self) -> dict[str, Any]:
        """The manifest's dataset: the gold file's, with the entries judged and the setup; its
        ``sha256`` covers both (``gold_sha256`` is the file's)."""
        return {
            **self.gold.describe(),
            "items": len(self.entries),
            "gold_sha256": self.gold.sha256,
            "sha256": _hash(self.gold.sha256, self.setup),
            "heritage": self.setup,
        }


def read_heritage_run(
    path: str | Path,
    *,
    tasks: Sequence[str],
    labels: Sequence[str],
    kb: str | Path | None,
    split: str | None,
    stratify: Sequence[str],
    seed: int,
    tags: TagDecoding | None,
) -> HeritageRun:
    """Read a heritage gold file (``sample:heritage`` allowed) for a run of ``tasks``.

    Raises:
        InputError: A bad gold row, knowledge base, sub-task or split (naming file, row and field).
    """
    tasks = check_tasks(tasks)
    gold = load_heritage_gold(path, tags=tags)
    knowledge = load_knowledge_base(kb) if "linking" in tasks else None
    setup = {
        "tasks": list(tasks),
        "labels": list(labels),
        "split": split,
        "stratify": list(stratify) if split else None,
        "seed": seed if split else None,
        "kb": {"path": str(knowledge.path), "sha256": knowledge.sha256} if knowledge else None,
    }
    return HeritageRun(gold=gold, entries=select_entries(gold, split, stratify, seed), setup=setup)
