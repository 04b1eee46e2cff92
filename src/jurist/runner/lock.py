"""One writer per run directory: an operating-system lock held while a run is judged or exported.

Two processes judging into the same run directory would both pay for every call, and one's
failures could overwrite the other's finished results. :func:`run_lock` takes an OS-level
lock (``fcntl.flock`` on Unix, ``LockFileEx`` on Windows, through the ``filelock`` package)
on ``.jurist.lock`` inside the run directory. The operating system releases it when the
process ends, however it ends (``kill -9`` included), so a dead run never blocks the next.

A second process that finds the lock held gets :class:`jurist.errors.RunLockedError`
(exit code 4) at once and touches nothing: no manifest, no result, no export. Within one
process the lock is re-entrant for the thread that holds it, so a command may hold it
around the whole judge-then-export sequence while :func:`jurist.runner.run_items` takes it
again inside.

Inside :func:`jurist.runner.plan.planning` (a dry run) it creates and locks nothing.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path

from filelock import FileLock, Timeout

from jurist.errors import RunDirectoryError, RunLockedError
from jurist.runner.plan import planning_active

LOCK_FILE = ".jurist.lock"
"""The lock file inside a run directory (empty; it stays after release, which is harmless)."""

OWNER_FILE = ".jurist.lock.owner"
"""Who holds (or last held) the lock: process id, host and start time, for the error message."""

_held: dict[Path, tuple[int, int]] = {}  # resolved run directory -> (owning thread id, depth)
_held_guard = threading.Lock()


def _owner_text(run_dir: Path) -> str:
    try:
        owner = json.loads((run_dir / OWNER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "another process"
    if not isinstance(owner, dict):
        return "another process"
    return f"process {owner.get('pid', '?')} on {owner.get('host', '?')} (since {owner.get('since', '?')})"


def _write_owner(run_dir: Path) -> None:
    info = {
        "pid": os.getpid(),
        "host": os.uname().nodename if hasattr(os, "uname") else "",
        "since": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    # Informational only: a failure to write it must not fail the run.
    with suppress(OSError):
        (run_dir / OWNER_FILE).write_text(json.dumps(info), encoding="utf-8")


def lock_holder(run_dir: str | Path) -> str | None:
    """Who is judging or exporting into ``run_dir`` now (``"process 123 on host (since ...)"``,
    or ``"this process"``), or ``None`` when nobody holds its lock.

    Nothing is created or written: a directory without a lock file was never locked. The lock
    is tried without waiting and released at once.
    """
    path = Path(run_dir)
    lock_file = path / LOCK_FILE
    if not lock_file.is_file():
        return None
    with _held_guard:
        if path.resolve() in _held:
            return "this process"
    lock = FileLock(str(lock_file), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        return _owner_text(path)
    except OSError:
        return None  # e.g. a read-only copy of a run: nobody can be writing to it through the lock
    lock.release()
    return None


@contextmanager
def run_lock(run_dir: str | Path) -> Iterator[Path]:
    """Hold the run directory's lock for the ``with`` block; create the directory if missing.

    Use it around every write to a run directory (judging, and the exports written after
    scoring). It does not wait: if another process holds the lock, it raises at once.

    Args:
        run_dir: The run directory.

    Yields:
        The run directory as a ``Path``.

    Raises:
        RunLockedError: Another process (or another thread of this one) holds the lock; the
            message names the directory, the holder and what to do.
        RunDirectoryError: The directory cannot be created or the lock file cannot be written
            (e.g. a read-only location).
    """
    path = Path(run_dir)
    if path.exists() and not path.is_dir():
        raise RunDirectoryError(f"{path} is a file, not a run directory; give --out a directory")
    if planning_active():  # a dry run writes nothing: the runner stops before judging
        yield path
        return
    created = _missing_ancestors(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RunDirectoryError(f"cannot create run directory {path}: {exc.strerror or exc}") from None
    key = path.resolve()
    me = threading.get_ident()
    with _held_guard:
        owner = _held.get(key)
        if owner is not None and owner[0] == me:
            _held[key] = (me, owner[1] + 1)
            reentered = True
        else:
            reentered = False
    if reentered:
        try:
            yield path
        finally:
            with _held_guard:
                thread, depth = _held[key]
                _held[key] = (thread, depth - 1)
        return

    lock = FileLock(str(path / LOCK_FILE), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise RunLockedError(
            f"{path} is locked by {_owner_text(path)}, which is judging or exporting into it; "
            "wait for it to finish (then run the same command again to resume), "
            "or write to another --out directory"
        ) from None
    except OSError as exc:
        raise RunDirectoryError(
            f"cannot lock run directory {path}: {exc.strerror or exc}; give --out a writable directory"
        ) from None
    try:
        with _held_guard:
            _held[key] = (me, 1)
        _write_owner(path)
        yield path
    except BaseException:
        with _held_guard:
            _held.pop(key, None)
        lock.release()
        _remove_if_unused(path, created)
        raise
    else:
        with _held_guard:
            _held.pop(key, None)
        lock.release()


def _missing_ancestors(path: Path) -> list[Path]:
    """``path`` and its ancestors that do not exist yet, innermost first (what ``mkdir`` makes)."""
    missing = []
    for candidate in [path, *path.parents]:
        if candidate.exists():
            break
        missing.append(candidate)
    return missing


def _remove_if_unused(path: Path, created: list[Path]) -> None:
    """Remove the directories this lock created when the command was refused before it wrote
    anything there but the lock's own files: a refused command leaves no folder behind."""
    if not created:
        return
    with suppress(OSError):
        if {entry.name for entry in path.iterdir()} - {LOCK_FILE, OWNER_FILE}:
            return
        for name in (LOCK_FILE, OWNER_FILE):
            (path / name).unlink(missing_ok=True)
        for directory in created:
            directory.rmdir()
