"""How a run's data was given, when it was given in memory, for the run's manifest.

The verbs write rows given in memory (a pandas DataFrame, a list of dicts) to a JSONL file
that the task reads as any data file; inside :func:`data_given`, every run whose dataset
names such a file records in its manifest's ``dataset`` how the rows were given
(``"from": "DataFrame"`` or ``"from": "list"``), beside the file's ``path`` and ``sha256``.
A run resumed from the same rows given another way records the latest way; what identifies
the run (the ``sha256``) is unchanged by it.
"""

from __future__ import annotations

import contextvars
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

__all__ = ["data_given", "with_given"]

_given: contextvars.ContextVar[tuple[tuple[str, str], ...]] = contextvars.ContextVar(
    "jurist_given_data", default=()
)


@contextmanager
def data_given(files: Mapping[str, str]) -> Iterator[None]:
    """Within this block, a run whose dataset path names one of ``files`` (file -> how its
    rows were given) records how (see the module docstring)."""
    token = _given.set((*_given.get(), *files.items()))
    try:
        yield
    finally:
        _given.reset(token)


def with_given(dataset: dict[str, Any]) -> dict[str, Any]:
    """``dataset`` (``{"path", "sha256", "items", ...}``) with ``"from"`` added when its path
    names a file written from rows given in memory (the whole path, or one of the files a
    task's dataset names together, e.g. ``"gold.jsonl + FILE"``)."""
    path = dataset.get("path")
    if not isinstance(path, str):
        return dataset
    for file, given in _given.get():
        if re.search(rf"(?:^|\s){re.escape(file)}(?:$|\s)", path):
            return {**dataset, "from": given}
    return dataset
