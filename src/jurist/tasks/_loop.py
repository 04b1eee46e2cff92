"""The one judging loop: read → items → judge with the batch runner → score → exports.

Every judged run goes through :func:`run_judgment`: the ``judge`` verb's single judge, each
juror and repeat of a panel, and each stage of a cascade. It is a function, not a hook, so a
task composes it from its parts (:meth:`~jurist.tasks.Task.read`, :meth:`~jurist.tasks.Task.items`,
:meth:`~jurist.tasks.Task.make_judge`, :meth:`~jurist.tasks.Task.score`) and cannot replace it.

A built-in task that still defines a ``judge`` method of its own (a pipeline of its own, being
moved onto this loop task by task) is run by that method.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Collection
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from jurist.tasks._contract import JudgeRun, Task

__all__ = ["overrides_judge", "run_judgment"]


def overrides_judge(task: Task) -> bool:
    """Whether ``task`` runs a judging pipeline of its own instead of this loop."""
    return callable(getattr(type(task), "judge", None))


def run_judgment(
    task: Task,
    data: str | Path,
    out: str | Path,
    config: Any,
    options: BaseModel,
    *,
    retry_failed: bool = False,
    progress: bool = True,
    only: Collection[str] | None = None,
) -> JudgeRun:
    """Judge the items of ``data`` into the run directory ``out`` (resumed if it exists), then
    score the run against the gold the data carries and write its exports.

    Args:
        task: The task whose parts read, judge and score.
        data: The rows (``sample:NAME`` allowed).
        out: The run directory.
        config: The judge config (:class:`~jurist.judges.config.JudgeConfig`).
        options: The task's validated options.
        retry_failed: Judge again the items recorded as failed.
        progress: Show the progress bar.
        only: Judge only the items with these ids (a cascade's later stage); all by default.

    Raises:
        RunDirectoryError: ``out`` holds a run of another task, judge or data, or one whose
            manifest records another value of the task's
            :meth:`~jurist.tasks.Task.run_identity` (e.g. other compared models).
    """
    if overrides_judge(task):
        if only is not None:
            task = _items_among(task, set(only))
        own: Any = getattr(task, "judge")  # noqa: B009 - not part of the contract
        return own(data, out, config, options, retry_failed=retry_failed, progress=progress)

    from jurist.datasets.samples import resolve_input
    from jurist.judges.judge import effective_config
    from jurist.runner import JudgeRecipe, run_items, run_lock

    path = resolve_input(data)
    dataset = task.read(path, options)
    judge = task.make_judge(config, options)
    effective = effective_config(judge, config)
    identity = task.run_identity(dataset, options)
    description = {**dataset.describe(), **identity}
    items = task.items(dataset, options)
    total = description.get("items")
    if only is not None:
        wanted = set(only)
        items = (item for item in items if item.id in wanted)
        total = len(wanted)
    # One lock over judging and the exports: no other process writes between them.
    with run_lock(out):
        _check_identity(Path(out), task.name, identity)
        run_items(
            items,
            judge,
            out,
            task=task.name,
            task_source=source_of(task),
            task_options=options.model_dump(mode="json"),
            dataset=description,
            config=effective.model_dump(mode="json"),
            total=total,
            concurrency=effective.concurrency,
            retry_failed=retry_failed,
            progress=progress,
            # Other processes (--workers, Ray) rebuild the same judge from this.
            recipe=JudgeRecipe(functools.partial(task.make_judge, options=options), config),
        )
        scores = task.score(Path(out), options, gold=path, write=True)
    return JudgeRun(run_dir=Path(out), scores=scores)


def source_of(task: Task) -> str:
    """The task's source as the manifest keeps it: a task file's absolute path, else as is."""
    path = Path(task.source)
    return str(path.resolve()) if task.source.endswith((".yaml", ".yml")) and path.is_file() else task.source


def _check_identity(run_dir: Path, task: str, identity: dict[str, Any]) -> None:
    """Refuse a run directory whose manifest records another value of a field of the task's
    :meth:`~jurist.tasks.Task.run_identity` (the runner checks the task, judge and data)."""
    from jurist.errors import RunDirectoryError
    from jurist.runner import MANIFEST

    manifest = run_dir / MANIFEST
    if not identity or not manifest.is_file():
        return
    try:
        recorded = json.loads(manifest.read_text(encoding="utf-8")).get("dataset") or {}
    except (ValueError, AttributeError):
        return  # the runner says what is wrong with the manifest
    for key, value in identity.items():
        if key in recorded and recorded[key] != value:
            raise RunDirectoryError(
                f"{run_dir} holds a {task} run with {key.replace('_', ' ')} {recorded[key]!r}, "
                f"now {value!r}; resume it with the same options, or write to another --out directory"
            )


def _items_among(task: Task, ids: set[str]) -> Task:
    """``task`` with its ``items`` limited to ``ids``, for a task with a pipeline of its own that
    reads its items through the hook (goes with the last such task)."""
    kind = type(task)

    def items(self: Task, dataset: Any, options: BaseModel) -> Any:
        return (item for item in kind.items(self, dataset, options) if item.id in ids)

    variant = type(kind.__name__, (kind,), {"items": items, "__doc__": kind.__doc__})
    clone: Task = object.__new__(variant)
    clone.__dict__.update(vars(task))
    return clone
