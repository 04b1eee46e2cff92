"""Files one scoring reads several times, read once.

A task's summary, its per-item gold columns and its unit tables may each need the same
gold file. Inside :func:`reading_once`, :func:`read_once` reads a file the first time one of
them asks and hands the others what it read; outside, it reads every time. What is read is
held only until the block ends.

The kind :data:`DATASET` is the task's own dataset of a file (what its ``read`` gives with
the scoring's options): the judging loop scores a run inside :func:`already_read`, holding the
dataset it judged under that kind and the data's path, so a scoring that asks for it with
``read_once("dataset", path, lambda: self.read(path, options))`` gets it without reading the
file again, while ``jurist score`` (which has no dataset in hand) reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

DATASET = "dataset"
"""The kind of a task's own dataset of a file:
``read_once(DATASET, path, lambda: task.read(path, options))``."""

_READ: ContextVar[dict[tuple[str, str], Any] | None] = ContextVar("jurist_read_once", default=None)


@contextmanager
def reading_once() -> Iterator[None]:
    """Within the block, :func:`read_once` reads each (kind, file) once; a block inside
    another shares what the outer one read."""
    if _READ.get() is not None:
        yield
        return
    token = _READ.set({})
    try:
        yield
    finally:
        _READ.reset(token)


def read_once(kind: str, path: str | Path, read: Callable[[], T]) -> T:
    """``read()``, called once per ``kind`` and ``path`` inside :func:`reading_once` (the
    first call's value is handed to the later ones), and every time outside it."""
    found = _READ.get()
    if found is None:
        return read()
    key = (kind, str(path))
    if key not in found:
        found[key] = read()
    value: T = found[key]
    return value


@contextmanager
def already_read(kind: str, path: str | Path, value: Any) -> Iterator[None]:
    """A :func:`reading_once` block of its own (not sharing an outer one's reads) in which
    :func:`read_once` of ``kind`` and ``path`` is ``value``, read before the block: the judging
    loop scores a run inside it with the dataset it judged (kind :data:`DATASET`)."""
    token = _READ.set({(kind, str(path)): value})
    try:
        yield
    finally:
        _READ.reset(token)
