"""A task with one hook replaced: how a jury or a cascade runs through a task's own hooks.

The variant is an instance of a subclass of the task's own class (same name and docstring) with
the task's attributes, so every other hook, and anything that reads the task, is unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from jurist.judges.config import JudgeConfig
from jurist.tasks._contract import JudgeRun, Task

__all__ = ["JudgeBy", "judging_by", "with_hook"]


class JudgeBy(Protocol):
    """What judges in a task's place: ``(data, out, options, retry_failed, progress) -> JudgeRun``."""

    def __call__(
        self, data: str | Path, out: Path, options: BaseModel, retry_failed: bool, progress: bool, /
    ) -> JudgeRun: ...


def with_hook(task: Task, name: str, hook: Callable[..., Any]) -> Task:
    """``task``, except that its hook ``name`` is ``hook`` (a function taking the task as ``self``)."""
    kind = type(type(task).__name__, (type(task),), {name: hook, "__doc__": type(task).__doc__})
    clone: Task = object.__new__(kind)
    clone.__dict__.update(vars(task))
    return clone


def judging_by(task: Task, run: JudgeBy) -> Task:
    """``task``, except that its ``judge`` hook calls ``run`` (the judge config it is given is
    not used), so the task's own calibration row is computed on what ``run`` writes."""

    def judge(
        self: Task,
        data: str | Path,
        out: str | Path,
        config: JudgeConfig,
        options: BaseModel,
        *,
        retry_failed: bool = False,
        progress: bool = True,
    ) -> JudgeRun:
        return run(data, Path(out), options, retry_failed, progress)

    return with_hook(task, "judge", judge)
