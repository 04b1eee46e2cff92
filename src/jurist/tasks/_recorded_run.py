"""The run one scoring reads, for the task's scoring parts (:func:`recorded_run`).

:meth:`jurist.Task.score` scores a recorded run through the task's parts (``item_row``,
``summarize``, ``gold_columns``, ``extras``, ``report``, ...). Some of them need what the
run recorded beside its results: the manifest (the dataset it judged, its path, the setup it
was judged with). Inside the scoring, :func:`recorded_run` gives it as a
:class:`RecordedRun`, made once per scoring; a part asks instead of reading the manifest
itself, so a run directory and the ``results.jsonl`` exported into it read the same one.

A task whose item rows and summary come from one pass over the results (scorers that collect
what the summary needs while the rows are made) keeps that pass in
:meth:`RecordedRun.shared`: made on the first part's ask, handed to the later parts of the
same scoring, gone when it ends.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

__all__ = ["RecordedRun", "recorded_run", "run_manifest", "scoring_run"]

RESULTS_FILE = "results.jsonl"
"""The results a run directory exports: a file of that name reads its folder's manifest."""


def run_manifest(path: Path) -> dict[str, Any]:
    """The manifest of a run directory, or of the folder holding a ``results.jsonl`` exported
    from one; ``{}`` when there is none (a results file on its own)."""
    from jurist.runner import MANIFEST

    folder = path if path.is_dir() else path.parent if path.name == RESULTS_FILE else None
    file = folder / MANIFEST if folder is not None else None
    if file is None or not file.is_file():
        return {}
    found = json.loads(file.read_text(encoding="utf-8"))
    return found if isinstance(found, dict) else {}


@dataclass
class RecordedRun:
    """A run being scored: what was given, its manifest, and the gold it is compared with.

    Attributes:
        path: The run directory or ``results.jsonl`` the scoring was given.
        manifest: The run's manifest (:func:`run_manifest`; ``{}`` when there is none).
        gold: The gold file the scoring compares with (``None``: none).
    """

    path: Path
    manifest: dict[str, Any]
    gold: str | Path | None = None
    _shared: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, path: str | Path, gold: str | Path | None = None) -> RecordedRun:
        """The recorded run at ``path`` (its manifest read now)."""
        return cls(Path(path), run_manifest(Path(path)), gold)

    @property
    def dataset(self) -> dict[str, Any]:
        """The manifest's ``dataset``: what :meth:`jurist.Task.read` described (path, sha256,
        items) and what the task recorded of its setup; ``{}`` when none."""
        found = self.manifest.get("dataset")
        return found if isinstance(found, dict) else {}

    def shared(self, name: str, make: Callable[[], T]) -> T:
        """A value the parts of this one scoring share: ``make()`` on the first ask of
        ``name``, the same value for every later ask (another scoring, even of the same run,
        makes its own)."""
        if name not in self._shared:
            self._shared[name] = make()
        value: T = self._shared[name]
        return value


_RUN: ContextVar[RecordedRun | None] = ContextVar("jurist_recorded_run", default=None)


@contextmanager
def scoring_run(run: RecordedRun) -> Iterator[RecordedRun]:
    """Within the block, :func:`recorded_run` is ``run`` (a block inside another gives its
    own run, then the outer one again)."""
    token = _RUN.set(run)
    try:
        yield run
    finally:
        _RUN.reset(token)


def recorded_run() -> RecordedRun:
    """The run the current :meth:`jurist.Task.score` scores, for its parts.

    Raises:
        RuntimeError: Called outside a scoring (a bug of the caller).
    """
    run = _RUN.get()
    if run is None:
        raise RuntimeError("recorded_run() is only known while Task.score scores a run")
    return run
