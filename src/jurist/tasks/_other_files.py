"""Files another tool judged that a task scores: declared, not a ``score`` of the task's own.

``jurist score TASK PATH...`` scores a run directory of jurist's by the one scoring path of
:meth:`jurist.Task.score`. A task that also scores what other tools wrote (RGB's prediction
files, SubEval's record files, a tagger's token-tag file, an agent's trace file) declares each
kind with :meth:`jurist.Task.other_files`: how a path is recognised and how the files are
scored. :meth:`jurist.Task.score` hands every path given to the first kind that takes all of
them, and scores a run directory as any task's otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import BaseModel

    from jurist.tasks._results import Scores

__all__ = ["OtherFiles", "scorer_of"]


@dataclass(frozen=True)
class OtherFiles:
    """One kind of file another tool judged, which a task scores.

    Attributes:
        what: What the files are, for messages and ``jurist tasks show`` (e.g. "RGB
            prediction files").
        takes: Whether a path given to ``jurist score`` is one of them (a file, or a
            directory holding them).
        score: ``score(paths, options, gold)``: the scores of the files (no model is
            called); ``gold`` is ``--gold`` when given.
        several: Whether several paths are scored at once (else one at a time).
    """

    what: str
    takes: Callable[[Path], bool]
    score: Callable[[list[Path], BaseModel, str | Path | None], Scores]
    several: bool = False


def scorer_of(kinds: Sequence[OtherFiles], paths: Sequence[Path]) -> OtherFiles | None:
    """The first kind that takes every one of ``paths`` (``None``: none does)."""
    for kind in kinds:
        if paths and all(kind.takes(path) for path in paths):
            return kind
    return None
