"""What the batch runner and a judge share about the response cache, without importing DSPy.

The runner collects the cache writes of accepted answers and makes them in its writer
thread (:func:`deferring_cache_writes`, :func:`writing_cache_together`), and a repeat's LMs
salt their cache keys (:func:`repeat_salt`). None of it needs DSPy, so a run whose every
item is served by the finished-verdict cache (:mod:`jurist.judges.verdicts`) never imports
it: :mod:`jurist.judges.lm`, which does, registers DSPy's response cache here
(:func:`batch_response_cache_writes`) when it is imported.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager

from jurist.judges.verdicts import writing_verdicts_together

__all__ = [
    "REPEAT_SALT_STRIDE",
    "batch_response_cache_writes",
    "current_repeat",
    "defer_cache_write",
    "defers_cache_writes",
    "deferring_cache_writes",
    "repeat_salt",
    "writing_cache_together",
]

_deferred_writes: contextvars.ContextVar[list[Callable[[], None]] | None] = contextvars.ContextVar(
    "jurist_deferred_cache_writes", default=None
)


@contextmanager
def deferring_cache_writes() -> Iterator[list[Callable[[], None]]]:
    """Collect the response-cache writes of answers accepted in this context (thread or
    asyncio task) instead of making them; the caller makes them (each is a call with no
    arguments). The batch runner hands them to its writer thread with the item's row, so
    the event loop does no disk I/O for the cache."""
    writes: list[Callable[[], None]] = []
    token = _deferred_writes.set(writes)
    try:
        yield writes
    finally:
        _deferred_writes.reset(token)


def defers_cache_writes() -> bool:
    """Whether cache writes made now are collected (see :func:`deferring_cache_writes`)."""
    return _deferred_writes.get() is not None


def defer_cache_write(write: Callable[[], None]) -> None:
    """Hand ``write`` to the collector of :func:`deferring_cache_writes` (the runner's writer
    thread makes it); outside that context, make it now."""
    deferred = _deferred_writes.get()
    if deferred is None:
        write()
    else:
        deferred.append(write)


_batchers: list[Callable[[], AbstractContextManager[object]]] = []


def batch_response_cache_writes(batch: Callable[[], AbstractContextManager[object]]) -> None:
    """Enter ``batch()`` in every :func:`writing_cache_together` from now on (the response
    cache's transaction; :mod:`jurist.judges.lm` registers it once, on import)."""
    if batch not in _batchers:
        _batchers.append(batch)


@contextmanager
def writing_cache_together() -> Iterator[None]:
    """A context in which writes to the response cache are batched into transactions (once
    a judge has configured it) and so are this thread's writes to the verdict caches."""
    with ExitStack() as stack:
        for batch in list(_batchers):
            stack.enter_context(batch())
        stack.enter_context(writing_verdicts_together())
        yield


REPEAT_SALT_STRIDE = 1000 << 48
"""Added to the cache salt per repeat after the first: above every cache salt of a server
(:func:`jurist.judges.lm.cache_salt`), so no repeat shares entries with another repeat or
another server."""

_repeat: contextvars.ContextVar[int] = contextvars.ContextVar("jurist_repeat", default=1)


@contextmanager
def repeat_salt(index: int) -> Iterator[None]:
    """LMs built in this context (:func:`jurist.judges.lm.build_lm`) answer as the
    ``index``-th repeat (1, 2, ...) of their config: repeat ``k`` adds ``(k - 1) *
    REPEAT_SALT_STRIDE`` to the rollout id, so repeats are asked of the provider instead of
    served each other's cached answers. Repeat 1 adds nothing: its cache key is that of a
    run without repeats."""
    token = _repeat.set(index)
    try:
        yield
    finally:
        _repeat.reset(token)


def current_repeat() -> int:
    """The repeat LMs built now answer as (set by :func:`repeat_salt`; 1 outside it)."""
    return _repeat.get()
