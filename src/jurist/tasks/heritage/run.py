"""Judge a heritage gold set into a run directory (:func:`judge_heritage`).

The run is cached, resumable and records failed items with their raw answers, like every
jurist run; its dataset fingerprint covers the gold file and the run's setup (sub-tasks,
entity types, split, knowledge base), so a run directory is never resumed with another setup.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurist.datasets.conll import TagDecoding
from jurist.datasets.heritage import HeritageGold, HeritageGoldEntry, load_heritage_gold, split_gold
from jurist.datasets.heritage_kb import load_knowledge_base
from jurist.errors import InputError
from jurist.judges.config import JudgeConfig, load_config
from jurist.metrics.heritage_taxonomy import ENTITY_LABELS
from jurist.runner import run_items
from jurist.tasks._contract import JudgeRun
from jurist.tasks.heritage.judging import ALL_TASKS, check_tasks, heritage_items, make_heritage_judge
from jurist.tasks.heritage.scoring import HeritageScores, score_heritage

__all__ = ["TASK", "HeritageRun", "judge_heritage", "run_heritage", "select_entries"]

TASK = "heritage"
"""The task name recorded in heritage run manifests (for every sub-task)."""


@dataclass
class HeritageRun(JudgeRun):
    """A finished :func:`judge_heritage` call: where it wrote, and its scores."""

    run_dir: Path
    scores: HeritageScores


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


def run_heritage(
    gold: str | Path,
    out_dir: str | Path,
    config: JudgeConfig,
    *,
    kb: str | Path | None = None,
    tasks: Sequence[str] = ALL_TASKS,
    labels: Sequence[str] = ENTITY_LABELS,
    split: str | None = None,
    stratify: Sequence[str] = ("custodian_type",),
    seed: int = 0,
    tags: TagDecoding | None = None,
    retry_failed: bool = False,
    progress: bool = True,
) -> Path:
    """Judge a gold set into ``out_dir`` (resumed if it exists) without scoring it.

    The arguments are those of :func:`judge_heritage`.

    Returns:
        The path of the gold file (what the run is scored against).
    """
    tasks = check_tasks(tasks)
    dataset = load_heritage_gold(gold, tags=tags)
    entries = select_entries(dataset, split, stratify, seed)
    knowledge = load_knowledge_base(kb) if "linking" in tasks else None
    documents = {entry.id: entry.text for entry in dataset.entries}
    judge = make_heritage_judge(config, kb=knowledge, documents=documents, labels=labels, tasks=tasks)
    setup = {
        "tasks": list(tasks),
        "labels": list(labels),
        "split": split,
        "stratify": list(stratify) if split else None,
        "seed": seed if split else None,
        "kb": {"path": str(knowledge.path), "sha256": knowledge.sha256} if knowledge else None,
    }
    described = {
        **dataset.describe(),
        "items": len(entries),
        "gold_sha256": dataset.sha256,
        "sha256": _hash(dataset.sha256, setup),
        "heritage": setup,
    }
    items = heritage_items(entries, tasks)
    run_items(
        items,
        judge,
        out_dir,
        task=TASK,
        dataset=described,
        config=config.model_dump(mode="json"),
        total=len(items),
        concurrency=config.concurrency,
        retry_failed=retry_failed,
        progress=progress,
    )
    return dataset.path or Path(gold)


def judge_heritage(
    gold: str | Path = "sample:heritage",
    out_dir: str | Path = "heritage-run",
    config: JudgeConfig | str | Path | None = None,
    *,
    kb: str | Path | None = None,
    tasks: Sequence[str] = ALL_TASKS,
    labels: Sequence[str] = ENTITY_LABELS,
    split: str | None = None,
    stratify: Sequence[str] = ("custodian_type",),
    seed: int = 0,
    tags: TagDecoding | None = None,
    retry_failed: bool = False,
    progress: bool = True,
) -> HeritageRun:
    """Run a heritage program over a gold set into ``out_dir``, then score it and write the exports.

    Args:
        gold: A heritage gold file, or ``sample:heritage`` (the bundled set).
        out_dir: The run directory; running again into it resumes.
        config: A ``JudgeConfig``, a YAML path, or ``None`` for the offline baseline.
        kb: A knowledge-base TSV for linking (default: the bundled subset).
        tasks: Sub-tasks to run (default: all of :data:`ALL_TASKS`).
        labels: Entity types to extract (default: the seven heritage types).
        split: Judge only this part (``train``, ``dev`` or ``test``) of a 70/15/15 split.
        stratify: Fields the split is stratified by.
        seed: Seed of the split.
        tags: How a token-tag gold file (``.conll``, ``.bio``, ...) is decoded (default: lenient);
            recorded in the run, and used again when it is scored.
        retry_failed: Judge items recorded as failed again.
        progress: Show a progress bar on stderr.
    """
    judge_config = config if isinstance(config, JudgeConfig) else load_config(config)
    gold_path = run_heritage(
        gold,
        out_dir,
        judge_config,
        kb=kb,
        tasks=tasks,
        labels=labels,
        split=split,
        stratify=stratify,
        seed=seed,
        tags=tags,
        retry_failed=retry_failed,
        progress=progress,
    )
    scores = score_heritage(out_dir, gold=gold_path, write=True, tags=tags)
    return HeritageRun(run_dir=Path(out_dir), scores=scores)
