"""What a run would judge, taken instead of judging it: the dry run of code that judges
through task hooks (``jurist calibrate --dry-run``).

Inside :func:`planning`, the first call of :func:`~jurist.runner.run_items` judges nothing
and writes nothing: it raises :class:`Planned` with the judge, the items and the run
directory it was given (:func:`~jurist.runner.run_lock` neither creates the directory nor
takes its lock). The caller catches it where it started the code that judges, and estimates
from what it holds. Code that calls the runner more than once per start is seen by its
first call.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

__all__ = ["Planned", "PlannedRun", "capture", "planning", "planning_active"]


@dataclass(frozen=True)
class PlannedRun:
    """What a call of the runner was given.

    Attributes:
        judge: The judge it would call.
        items: The items it would judge (recorded ones included: it has not read the run
            directory).
        run_dir: The run directory it would judge into.
        retry_failed: Whether items recorded as failed would be judged again.
    """

    judge: Any
    items: list[Any]
    run_dir: Path
    retry_failed: bool


class Planned(BaseException):
    """Stops code that judges at its runner call (a BaseException: no ``except Exception``
    on the way turns it into a failed item or a stopped run)."""

    def __init__(self, run: PlannedRun) -> None:
        super().__init__(f"planned run of {run.run_dir}")
        self.run = run


_planning: contextvars.ContextVar[bool] = contextvars.ContextVar("jurist_planning", default=False)


@contextmanager
def planning() -> Iterator[None]:
    """Make the runner raise :class:`Planned` instead of judging, in this context."""
    token = _planning.set(True)
    try:
        yield
    finally:
        _planning.reset(token)


def planning_active() -> bool:
    """Whether the runner is inside :func:`planning`."""
    return _planning.get()


def capture(items: Iterable[Any], judge: Any, run_dir: Path, *, retry_failed: bool) -> NoReturn:
    """Raise :class:`Planned` with what a runner call was given."""
    raise Planned(PlannedRun(judge=judge, items=list(items), run_dir=run_dir, retry_failed=retry_failed))
