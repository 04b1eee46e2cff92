"""The one judging loop: read → items → judge with the batch runner → score → exports.

Every judged run goes through :func:`run_judgment`: the ``judge`` verb's single judge, each
juror and repeat of a panel, each stage of a cascade, a calibration's judge and each part of a
task's recipe. It is a function, not a hook, so a task composes it from its parts (``read``,
``items``, ``make_judge``, ``score``; ``plan`` and ``combine`` for a judgment made of
several runs, :func:`run_recipe`) and cannot replace it. The run is scored by the task's one
``score``, as ``jurist score`` scores it, with the dataset the loop read already in hand
(:func:`~jurist.tasks._read_once.already_read`): no part reads the data twice. It lives with
the judge kinds (one judge here; juries, repeats and cascades beside it, each made of runs of
this loop): no task package calls the runner, and a task's calibration judges its gold file
through the :class:`~jurist.tasks._contract.JudgeBy` the ``calibrate`` verb hands it
(:func:`one_judge` for one judge).
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from jurist.errors import ConfigError, RunDirectoryError
from jurist.runner import Item
from jurist.tasks._contract import JudgeBy, JudgeRun, Recipe, Task
from jurist.tasks._read_once import DATASET, already_read, reading_once
from jurist.tasks._selection import SELECTED, Selection, blank_warning, judged_description

__all__ = ["one_judge", "run_judgment", "run_recipe", "source_of"]


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
    log: Callable[[str], None] | None = None,
    select: Selection | None = None,
) -> JudgeRun:
    """Judge the items of ``data`` into the run directory ``out`` (resumed if it exists), then
    score the run against the gold the data carries and write its exports: the task's
    :meth:`~jurist.tasks.Task.score` with ``write``, ``gold`` the data judged, and the
    dataset read here handed to it (``read_once("dataset", path, ...)``), not read again.

    Blank judged inputs (text that is empty or only whitespace) are counted: one warning line
    on stderr (once per data and selection in a process) and ``dataset.blank_inputs`` in the
    manifest, which the summary gives as ``blank_inputs``.

    Args:
        task: The task whose parts read, judge and score.
        data: The rows (``sample:NAME`` allowed).
        out: The run directory.
        config: The judge config (:class:`~jurist.judges.config.JudgeConfig`).
        options: The task's validated options.
        retry_failed: Judge again the items recorded as failed.
        progress: Show the progress bar.
        only: Judge only the items with these ids (a cascade's later stage); all by default.
        log: Called with the lines a recipe tells (:meth:`Task.plan`); default: on stderr
            when ``progress``.
        select: Judge only some rows (``--limit``, ``--sample``;
            :class:`~jurist.tasks._selection.Selection`), whole units of a task whose verdict
            is derived from several items; recorded in the manifest's ``dataset.selection``.

    Raises:
        RunDirectoryError: ``out`` holds a run of another task, judge or data, or one whose
            manifest records another value of the task's
            :meth:`~jurist.tasks.Task.run_identity` (e.g. other compared models) or another
            selection.
        ConfigError: A selection for a task judged as several runs (a recipe).
    """
    recipe = task.plan(data, options)
    if recipe is not None:
        if select is not None:
            raise ConfigError(
                f"task {task.name!r} is judged as several runs; --limit and --sample cannot select its rows",
                field="limit" if select.limit is not None else "sample",
            )
        if only is not None:
            raise ConfigError(
                f"task {task.name!r} is judged as several runs; it cannot be a later stage of a cascade",
                field="config",
            )
        return run_recipe(
            task,
            recipe,
            out,
            config,
            options,
            retry_failed=retry_failed,
            progress=progress,
            log=log if log is not None else (_to_stderr if progress else None),
        )

    from jurist.datasets.samples import resolve_input
    from jurist.judges.judge import effective_config
    from jurist.runner import JudgeRecipe, run_items, run_lock

    path = resolve_input(data)
    dataset = task.read(path, options)
    judged = task.judge_options(dataset, options)
    judge = task.make_judge(config, judged)
    effective = effective_config(judge, config)
    identity = task.run_identity(dataset, options)
    description = {**dataset.describe(), **identity}

    def judged_items() -> Iterator[Item]:
        """The items judged, made afresh on each call (the same each time: a sample is seeded),
        so they are streamed to the runner rather than held beside the dataset."""
        items: Iterable[Item] = task.items(dataset, options)
        if select is not None:
            items = select.choose(task, dataset, options, list(items))
        if only is not None:
            wanted = set(only)
            items = (item for item in items if item.id in wanted)
        yield from items

    total = 0

    def counted(items: Iterator[Item]) -> Iterator[Item]:
        nonlocal total
        for item in items:
            total += 1
            yield item

    # A first pass counts the items and their blank inputs before anything is judged.
    description = judged_description(description, counted(judged_items()), select, task.optional_inputs)
    blanks = description.get("blank_inputs") or {}
    _warn_once(blank_warning(blanks), (str(description.get("sha256")), repr(select), repr(blanks)))
    # One lock over judging and the exports: no other process writes between them.
    with run_lock(out):
        _check_identity(Path(out), task.name, identity, description.get(SELECTED))
        done = run_items(
            judged_items(),
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
            recipe=JudgeRecipe(functools.partial(task.make_judge, options=judged), config),
        )
        # Scored as `jurist score` scores it, with the dataset read above already in hand.
        with already_read(DATASET, path, dataset):
            scores = task.score(Path(out), options, gold=path, write=True)
    scores.headline = task.headline(scores.summary)
    return JudgeRun(run_dir=Path(out), scores=scores, now=done)


def one_judge(task: Task, config: Any) -> JudgeBy:
    """Judging by one judge: :func:`run_judgment` of ``task`` with the judge config ``config``."""

    def judge(
        data: str | Path,
        out: Path,
        options: BaseModel,
        retry_failed: bool,
        progress: bool,
        /,
        *,
        only: Collection[str] | None = None,
    ) -> JudgeRun:
        return run_judgment(
            task, data, out, config, options, retry_failed=retry_failed, progress=progress, only=only
        )

    return judge


def run_recipe(
    task: Task,
    recipe: Recipe,
    out: str | Path,
    config: Any,
    options: BaseModel,
    *,
    retry_failed: bool = False,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
) -> JudgeRun:
    """Run a task's recipe into ``out``: each part, in order, an ordinary :func:`run_judgment`
    into ``out/<part name>`` (resumed if it exists, ``retry_failed`` and ``progress`` passed
    on, ``--workers`` and Ray as for any run), then the task's :meth:`Task.combine` of their
    runs into ``out``. The parts and the combination run inside one
    :func:`~jurist.tasks._read_once.reading_once` block: what one reads through
    :func:`~jurist.tasks._read_once.read_once` (a probe's data) the others are handed.

    Args:
        task: The task whose :meth:`Task.plan` gave ``recipe``.
        recipe: The parts.
        out: The recipe's output directory.
        config: The judge config of the command; a part without its own config runs with it.
        options: The task's validated options (given to :meth:`Task.combine`).
        retry_failed: Judge again the items every part recorded as failed.
        progress: Show the progress bars.
        log: Called with the recipe's notes and each part's line (see :class:`Part`).
    """
    say = log or (lambda _line: None)
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    for note in recipe.notes:
        say(note)
    # The parts and the combination share what they read once (each run's scoring reads apart).
    with reading_once():
        runs = _run_parts(recipe, root, config, retry_failed=retry_failed, progress=progress, say=say)
        return JudgeRun(run_dir=root, scores=task.combine(recipe, runs, root, config, options))


def _run_parts(
    recipe: Recipe,
    root: Path,
    config: Any,
    *,
    retry_failed: bool,
    progress: bool,
    say: Callable[[str], None],
) -> dict[str, JudgeRun]:
    """Each part of ``recipe``, in order, an ordinary run into ``root/<part name>``."""
    runs: dict[str, JudgeRun] = {}
    for part in recipe.parts:
        if part.says:
            say(part.says)
        if part.reads is not None:
            if part.reads not in runs:
                raise ConfigError(f"part {part.name!r} reads {part.reads!r}, which has not run before it")
            data: str | Path = runs[part.reads].run_dir
        elif part.data is not None:
            data = part.data
        else:
            raise ConfigError(f"part {part.name!r} names no data")
        runs[part.name] = run_judgment(
            part.task,
            data,
            root / part.name,
            part.config if part.config is not None else config,
            part.options,
            retry_failed=retry_failed,
            progress=progress,
            log=say,
        )
    return runs


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr)


def source_of(task: Task) -> str:
    """The task's source as the manifest keeps it: a task file's absolute path, else as is."""
    path = Path(task.source)
    return str(path.resolve()) if task.source.endswith((".yaml", ".yml")) and path.is_file() else task.source


_WARNED: set[tuple[str, ...]] = set()


def _warn_once(line: str | None, key: tuple[str, ...]) -> None:
    """``line`` on stderr, once per ``key`` in this process (a jury's members read the same data)."""
    if line is None or key in _WARNED:
        return
    _WARNED.add(key)
    _to_stderr(line)


def _selection_text(recorded: Any) -> str:
    if not isinstance(recorded, dict):
        return "every row"
    if "limit" in recorded:
        return f"--limit {recorded['limit']}"
    return f"--sample {recorded.get('sample')} --seed {recorded.get('seed')}"


def _check_identity(
    run_dir: Path, task: str, identity: dict[str, Any], selection: dict[str, Any] | None = None
) -> None:
    """Refuse a run directory whose manifest records another value of a field of the task's
    :meth:`~jurist.tasks.Task.run_identity`, or another selection of rows (``--limit``,
    ``--sample``; a manifest without one judged every row). The runner checks the task,
    judge and data."""
    from jurist.runner import MANIFEST

    manifest = run_dir / MANIFEST
    if not manifest.is_file():
        return
    try:
        recorded = json.loads(manifest.read_text(encoding="utf-8")).get("dataset") or {}
    except (ValueError, AttributeError):
        return  # the runner says what is wrong with the manifest
    if isinstance(recorded, dict) and recorded.get(SELECTED) != selection:
        raise RunDirectoryError(
            f"{run_dir} holds a {task} run of {_selection_text(recorded.get(SELECTED))}, now "
            f"{_selection_text(selection)}; judge the same rows, or write to another --out directory"
        )
    for key, value in identity.items():
        if key in recorded and recorded[key] != value:
            raise RunDirectoryError(
                f"{run_dir} holds a {task} run with {key.replace('_', ' ')} {recorded[key]!r}, "
                f"now {value!r}; resume it with the same options, or write to another --out directory"
            )
