"""Run blocking code that starts its own event loop from anywhere, including Jupyter.

jurist's runner and evaluations call ``asyncio.run``, which refuses to start inside a
running event loop (a Jupyter cell runs inside one). There, the call is made in a
worker thread, which has no loop of its own.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


def call_blocking(function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Call ``function``; in a thread with a running event loop, call it in a worker thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return function(*args, **kwargs)
    context = contextvars.copy_context()

    def run() -> T:
        return context.run(function, *args, **kwargs)

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result()
