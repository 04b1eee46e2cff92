"""Whether a recorded run is finished, before it is scored.

A run directory's ``manifest.json`` says how its last judging call ended (``status``:
``"running"`` while judged and after a kill, ``"finished"``, ``"stopped"``, ``"interrupted"``)
and how many items the run judges (``total``); its ``results.sqlite`` holds the items recorded
so far. Scoring an unfinished run as if it were complete reports figures over some of the
items as figures over all of them, so :func:`check_finished` refuses it with
:class:`~jurist.errors.UnfinishedRunError`, which says how many of how many items are judged
and what to do, unless a partial score is asked for.

A run is unfinished when its status is not ``"finished"``, or when it records fewer items
than its ``total``. Every run directory at or below the path scored counts (a jury's jurors,
a cascade's stages, repeats, an RGB suite's settings), down to :data:`DEPTH` levels; a
``results.jsonl`` export counts against the manifest next to it. Whether a live process is
judging a run now is read from its lock (:func:`jurist.runner.lock.lock_holder`).

Reading changes nothing in the run directory.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurist.errors import UnfinishedRunError
from jurist.runner.lock import lock_holder
from jurist.runner.store import MANIFEST, RESULTS_DB, RESULTS_JSONL, ResultStore

__all__ = ["DEPTH", "Unfinished", "check_finished", "partial_note", "unfinished_runs"]

DEPTH = 4
"""How many directory levels below a scored path are searched for run directories."""

_REASON_CHARS = 160
"""At most this much of a recorded stop reason is quoted."""


@dataclass(frozen=True)
class Unfinished:
    """One run that is not finished.

    Attributes:
        run_dir: The run directory.
        status: The manifest's status (``"running"``, ``"stopped"``, ``"interrupted"``, or
            ``"finished"`` with items missing).
        judged: Items recorded (ok or failed).
        total: Items the run judges, ``None`` when the manifest does not say.
        holder: The live process judging it now (as the lock names it), or ``None``.
        stopped_by: Why it stopped, as the manifest says (``"SIGTERM"``, an error), or ``None``.
    """

    run_dir: Path
    status: str
    judged: int
    total: int | None
    holder: str | None = None
    stopped_by: str | None = None

    @property
    def count(self) -> str:
        """``"14 of 40 items judged"`` (or ``"14 items judged"`` when the total is unknown)."""
        return (
            f"{self.judged} of {self.total} items judged"
            if self.total is not None
            else f"{self.judged} items judged"
        )

    @property
    def reason(self) -> str:
        """Why the run is unfinished, in words."""
        if self.holder is not None:
            return f"still being judged by {self.holder}"
        if self.status == "running":
            return "its judging process ended before it finished (killed, or the machine stopped)"
        if self.status == "interrupted":
            return "interrupted (Ctrl-C)"
        if self.status == "stopped":
            why = (self.stopped_by or "").replace("\n", " ")
            if len(why) > _REASON_CHARS:
                why = why[:_REASON_CHARS] + "..."
            return f"stopped early ({why})" if why else "stopped early"
        return f"results are missing (manifest status {self.status!r})"

    def describe(self) -> str:
        """One line: the run, how many of how many items, and why."""
        return f"{self.run_dir}: {self.count}; {self.reason}"

    def as_dict(self) -> dict[str, Any]:
        """What ``--json`` shows of a partial run."""
        return {"run": str(self.run_dir), "status": self.status, "judged": self.judged, "total": self.total}


def _read_manifest(path: Path) -> dict[str, Any] | None:
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # not a run this check can read: the task's reader reports what is wrong
    return found if isinstance(found, dict) else None


def _recorded(run_dir: Path) -> int:
    db = run_dir / RESULTS_DB
    if not db.is_file():
        return 0
    with ResultStore(db) as store:
        return sum(store.counts().values())


def _exported(path: Path) -> int:
    with open(path, encoding="utf-8") as handle:
        return sum(1 for line in handle if line.strip())


def _total(manifest: dict[str, Any]) -> int | None:
    total = manifest.get("total")
    return total if isinstance(total, int) and not isinstance(total, bool) else None


def _check_run(run_dir: Path, manifest: dict[str, Any]) -> Unfinished | None:
    status = str(manifest.get("status") or "unknown")
    total = _total(manifest)
    judged = _recorded(run_dir)
    if status == "finished" and (total is None or judged >= total):
        return None
    holder = lock_holder(run_dir) if status == "running" else None
    stopped_by = manifest.get("stopped_by")
    return Unfinished(
        run_dir=run_dir,
        status=status,
        judged=judged,
        total=total,
        holder=holder,
        stopped_by=str(stopped_by) if stopped_by is not None else None,
    )


def _run_dirs(top: Path) -> Iterator[Path]:
    """``top`` and the directories below it (to :data:`DEPTH` levels) that hold a manifest;
    symbolic links are not followed."""
    base = len(top.parts)
    for folder, subfolders, files in os.walk(top, followlinks=False):
        here = Path(folder)
        if MANIFEST in files:
            yield here
        if len(here.parts) - base >= DEPTH:
            subfolders.clear()
        subfolders.sort()


def unfinished_runs(path: str | Path) -> list[Unfinished]:
    """The unfinished runs at or below ``path`` (a run directory, a directory of runs, or a
    run's ``results.jsonl``), in path order; ``[]`` when every run there is finished or
    ``path`` holds no run.

    Raises:
        RunDirectoryError: A run's ``results.sqlite`` is damaged (the message says how to recover).
    """
    location = Path(path)
    if location.is_file():
        manifest = _read_manifest(location.parent / MANIFEST) if location.name == RESULTS_JSONL else None
        total = _total(manifest) if manifest is not None else None
        if total is None:
            return []
        exported = _exported(location)
        if exported >= total:
            return []
        status = str((manifest or {}).get("status") or "unknown")
        return [Unfinished(run_dir=location, status=status, judged=exported, total=total)]
    if not location.is_dir():
        return []
    found = []
    for run_dir in _run_dirs(location):
        manifest = _read_manifest(run_dir / MANIFEST)
        if manifest is None:
            continue
        unfinished = _check_run(run_dir, manifest)
        if unfinished is not None:
            found.append(unfinished)
    return found


def check_finished(paths: Iterable[str | Path], *, partial: bool = False) -> list[Unfinished]:
    """Refuse to score unfinished runs unless ``partial``; return the unfinished ones.

    Raises:
        UnfinishedRunError: A run at or below one of ``paths`` is unfinished and ``partial``
            is false: the message names it, says how many of how many items are judged and
            why, and what to do. Its exit code is 4 when a live process is judging it, else 2.
        RunDirectoryError: A run's ``results.sqlite`` is damaged.
    """
    found = [unfinished for path in paths for unfinished in unfinished_runs(path)]
    if not found or partial:
        return found
    first = found[0]
    more = f" (and {len(found) - 1} more unfinished run(s) below it)" if len(found) > 1 else ""
    if first.holder is not None:
        advice = "wait for it to finish, or give --partial to score the items judged so far"
    else:
        advice = (
            "run the same `jurist judge` command again to finish it (finished items are kept), "
            "or give --partial to score the items judged so far"
        )
    raise UnfinishedRunError(
        f"{first.run_dir} is an unfinished run ({first.count}; {first.reason}){more}: {advice}",
        live=any(unfinished.holder is not None for unfinished in found),
    )


def partial_note(unfinished: list[Unfinished]) -> str:
    """The line ``jurist score --partial`` prints on stderr for the unfinished runs it scores."""
    shown = "; ".join(item.describe() for item in unfinished[:3])
    more = f"; and {len(unfinished) - 3} more" if len(unfinished) > 3 else ""
    return f"partial score of an unfinished run: {shown}{more}"
