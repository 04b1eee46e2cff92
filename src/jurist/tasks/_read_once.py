"""Files one scoring reads several times, read once.

A task's summary, its per-item gold columns and its unit tables may each need the same
gold file. Inside :func:`reading_once`, :func:`read_once` reads a file the first time one of
them asks and hands the others what it read; outside, it reads every time. What is read is
held only until the block ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

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
