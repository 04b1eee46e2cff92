"""The one registry of judge tasks: built-in, from installed packages, and from YAML files.

- Built-in tasks are listed in :data:`BUILTIN` (name -> module that defines them); a
  module is imported only when its task is asked for, so ``jurist --help`` stays fast.
- Installed packages add tasks under the entry-point group ``jurist.tasks``: the entry
  point's name is the task name and its object a :class:`~jurist.tasks.Task` subclass,
  an instance, or a function returning one.
- :func:`register_task` adds one from Python (usable as a class decorator).
- A path to a YAML task file (``*.yaml`` / ``*.yml``) is read with
  :func:`get_task` (and every verb) wherever a task name is accepted.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from jurist.errors import ConfigError
from jurist.tasks._contract import Task

__all__ = [
    "BUILTIN",
    "ENTRY_POINT_GROUP",
    "get_task",
    "register_task",
    "run_task",
    "task_names",
    "task_of_run",
]

ENTRY_POINT_GROUP = "jurist.tasks"

BUILTIN: dict[str, str] = {
    "ragbench": "jurist.tasks.ragbench",
    "pairwise": "jurist.tasks.pairwise",
    "pairwise-gold": "jurist.tasks.pairwise",
    "rgb": "jurist.tasks.rgb",
    "rgb-rejection": "jurist.tasks.rgb",
    "rgb-error-detection": "jurist.tasks.rgb",
    "gates": "jurist.tasks.gates",
    "heritage": "jurist.tasks.heritage",
    "heritage-ner": "jurist.tasks.heritage",
    "heritage-classification": "jurist.tasks.heritage",
    "heritage-linking": "jurist.tasks.heritage",
    "heritage-qa": "jurist.tasks.heritage",
}
"""Built-in task name -> the module whose ``TASKS`` mapping defines it."""

_registered: dict[str, Task] = {}
T = TypeVar("T", bound=type[Task])


def register_task(task: T | Task) -> Any:
    """Register a task (a :class:`Task` subclass or instance) under its ``name``.

    Works as a class decorator::

        @jurist.register_task
        class Toxicity(jurist.Task):
            name = "toxicity"
            ...

    A later registration of the same name replaces the earlier one (so a notebook cell can
    be run again).
    """
    instance = task() if isinstance(task, type) else task
    if not instance.name:
        raise ConfigError("a task needs a non-empty 'name'", field="name")
    _registered[instance.name] = instance
    return task


def _as_task(obj: Any, origin: str) -> Task:
    if isinstance(obj, type) and issubclass(obj, Task):
        return obj()
    if isinstance(obj, Task):
        return obj
    if callable(obj):
        made = obj()
        if isinstance(made, Task):
            return made
    raise ConfigError(f"{origin} does not give a jurist Task (got {type(obj).__name__})", field="task")


def _entry_points() -> dict[str, Any]:
    return {point.name: point for point in entry_points(group=ENTRY_POINT_GROUP)}


def _builtin(name: str) -> Task:
    module = importlib.import_module(BUILTIN[name])
    tasks: dict[str, Callable[[], Task]] = module.TASKS
    return tasks[name]()


def _is_task_file(name: str) -> bool:
    return name.lower().endswith((".yaml", ".yml")) or ("/" in name and Path(name).suffix != "")


def _from_yaml(path: str | Path) -> Task:
    """A task from a YAML task file (see ``docs/tasks.md`` for every key).

    Raises:
        ConfigError: The file is missing, not YAML, or a key is invalid (named in the message).
    """
    from jurist.tasks.declarative import load_task_file

    return load_task_file(path)


def get_task(name: str | Path | Task) -> Task:
    """The task called ``name``, or the task a YAML file at that path defines.

    Raises:
        ConfigError: No task has that name (the message lists the known ones), or the
            YAML file is malformed (the message names the key).
    """
    if isinstance(name, Task):
        return name
    text = str(name)
    if text in _registered:
        return _registered[text]
    if text in BUILTIN:
        return _builtin(text)
    points = _entry_points()
    if text in points:
        task = _as_task(points[text].load(), f"entry point {text!r} ({points[text].value})")
        task.source = f"entry point {points[text].value}"
        return task
    if _is_task_file(text) or Path(text).is_file():
        return _from_yaml(text)
    known = ", ".join(task_names())
    raise ConfigError(f"no task {text!r}; tasks: {known} (or a path to a YAML task file)", field="task")


def task_names() -> list[str]:
    """Every registered task name: built-in, Python-registered and from installed packages."""
    return sorted({*BUILTIN, *_registered, *_entry_points()})


def run_task(run_dir: str | Path) -> tuple[Task, BaseModel]:
    """The task that judged the run in ``run_dir`` and the options it was judged with."""
    import json

    from jurist.runner import MANIFEST

    task = task_of_run(run_dir)
    manifest = json.loads((Path(run_dir) / MANIFEST).read_text(encoding="utf-8"))
    return task, task.options(manifest.get("task_options") or {})


def task_of_run(run_dir: str | Path) -> Task:
    """The task that judged the run in ``run_dir`` (its manifest's task, or the YAML task file
    the manifest names).

    Raises:
        RunDirectoryError: ``run_dir`` has no readable ``manifest.json``.
        ConfigError: The task is no longer known (e.g. its YAML file was moved).
    """
    import json

    from jurist.errors import RunDirectoryError
    from jurist.runner import MANIFEST

    path = Path(run_dir) / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RunDirectoryError(f"{path}: not a run directory's manifest ({exc})") from None
    source = manifest.get("task_source")
    if isinstance(source, str) and source.endswith((".yaml", ".yml")):
        if not Path(source).is_file():
            raise ConfigError(
                f"the run's task file {source} is gone; pass the task file where it is now", field="task"
            )
        return _from_yaml(source)
    return get_task(str(manifest.get("task")))
