"""Judge a heritage gold set into a run directory (:func:`judge_heritage`).

The run is cached, resumable and records failed items with their raw answers, like every
jurist run; its dataset fingerprint covers the gold file and the run's setup (sub-tasks,
entity types, split, knowledge base), so a run directory is never resumed with another setup.
Its manifest records the task it was judged as (``heritage``, or a sub-task's own name such
as ``heritage-classification``), so the viewer finds that task again; a directory an older
jurist made for a sub-task, which recorded ``heritage``, is resumed under the sub-task's name.
Other processes (``--workers``, Ray) rebuild the judge from the same setup.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurist.atomic import atomic_write_text
from jurist.datasets.conll import TagDecoding
from jurist.datasets.heritage import HeritageGold, HeritageGoldEntry, load_heritage_gold, split_gold
from jurist.datasets.heritage_kb import load_knowledge_base
from jurist.errors import InputError
from jurist.judges.config import JudgeConfig, load_config
from jurist.metrics.heritage_taxonomy import ENTITY_LABELS
from jurist.runner import MANIFEST, JudgeRecipe, run_items, run_lock
from jurist.tasks._contract import JudgeRun
from jurist.tasks.heritage.judging import ALL_TASKS, check_tasks, heritage_items, make_heritage_judge
from jurist.tasks.heritage.scoring import HeritageScores, score_heritage

__all__ = ["TASK", "HeritageRun", "judge_heritage", "run_heritage", "select_entries"]

TASK = "heritage"
"""The task name recorded in the manifest of a run of several sub-tasks (and of every heritage
run an older jurist made)."""


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
    task: str = TASK,
    task_source: str | None = None,
    task_options: dict[str, Any] | None = None,
) -> Path:
    """Judge a gold set into ``out_dir`` (resumed if it exists) without scoring it.

    The other arguments are those of :func:`judge_heritage`.

    Args:
        task: The task name the manifest records (a sub-task's own, e.g.
            ``heritage-classification``, when judged as one).
        task_source: Where that task comes from, recorded in the manifest.
        task_options: Its options as JSON-ready data, recorded in the manifest.

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
    make = functools.partial(
        make_heritage_judge, kb=knowledge, documents=documents, labels=labels, tasks=tasks
    )
    with run_lock(out_dir):
        _adopt_older_run(Path(out_dir), task, described["sha256"])
        run_items(
            items,
            judge,
            out_dir,
            task=task,
            task_source=task_source,
            task_options=task_options,
            dataset=described,
            config=config.model_dump(mode="json"),
            total=len(items),
            concurrency=config.concurrency,
            retry_failed=retry_failed,
            progress=progress,
            # Other processes (--workers, Ray) rebuild the same judge from this.
            recipe=JudgeRecipe(make, config),
        )
    return dataset.path or Path(gold)


def _adopt_older_run(run_dir: Path, task: str, sha256: str) -> None:
    """Let a sub-task resume the run directory an older jurist made for it.

    An older jurist recorded every heritage run as ``heritage`` (and no ``task_source``). When
    such a manifest holds this very run (its dataset hash covers the gold file, the sub-tasks
    and the rest of the setup), its task is renamed to ``task``, so the runner resumes it and
    records the sub-task from now on. Any other directory is left to the runner's identity check.
    """
    path = run_dir / MANIFEST
    if task == TASK or not path.is_file():
        return
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # the runner says what is wrong with it
    if (
        isinstance(manifest, dict)
        and manifest.get("task") == TASK
        and manifest.get("task_source") is None
        and manifest.get("dataset_sha256") == sha256
    ):
        atomic_write_text(path, json.dumps({**manifest, "task": task}, indent=2))


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
