"""Atomic file writes: every export and report jurist writes goes through here.

A file is written to a temporary file in the same directory, flushed to disk, then moved
over the target with :func:`os.replace` (atomic on POSIX and Windows within one file
system). A writer killed or failing half-way leaves the previous file intact (or no file)
and never a half-written one; its temporary file is removed when the failure is an
exception (a full disk, a read-only location, Ctrl-C, SIGTERM), and otherwise (a killed
process) carries a ``.tmp`` name no reader looks at. A system error that names no file (a
write that found the disk full) is raised naming the file being written.

Everything written here is redacted (:mod:`jurist.redaction`): text given to
:func:`atomic_write_text` before it is written, and a text file (``.csv``, ``.json``,
``.jsonl``, ``.md``, ... :data:`jurist.redaction.TEXT_SUFFIXES`) written through
:func:`atomic_path`, :func:`atomic_writer` or :func:`atomic_write` before it replaces the
target. Binary files (Parquet, XLSX, images) cannot be redacted after the fact: their
writers redact the values first (see :func:`jurist.tasks._results.write_exports`).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from jurist.redaction import TEXT_SUFFIXES, redact, redact_file

__all__ = ["atomic_path", "atomic_write", "atomic_write_bytes", "atomic_write_text", "atomic_writer"]


def _temporary(path: Path) -> Path:
    # Same directory (so ``os.replace`` never crosses file systems), same suffix (so writers
    # that choose a format by the file name, such as pandas' Excel writer or matplotlib,
    # still choose the right one), a random part (so two writers never share a temp file).
    return path.with_name(f".{path.stem}.{secrets.token_hex(4)}.tmp{path.suffix}")


def _names_no_file(exc: OSError, tmp: Path) -> bool:
    """Whether ``exc`` names no file a user knows: none, or only the temporary file."""
    return exc.filename is None or str(exc.filename) == str(tmp)


def _fsync(path: Path) -> None:
    with contextlib.suppress(OSError), open(path, "rb") as handle:
        os.fsync(handle.fileno())


@contextlib.contextmanager
def atomic_path(path: str | Path, *, redacted: bool = False) -> Iterator[Path]:
    """A temporary path to write ``path``'s new content to; it replaces ``path`` on success.

    For writers that take a file name (``DataFrame.to_parquet``, ``Figure.savefig``, ...)::

        with atomic_path(out / "items.parquet") as tmp:
            frame.to_parquet(tmp)

    If the block raises, the temporary file is removed and ``path`` is left as it was. A
    text file (by its suffix) is redacted before it replaces ``path``, unless the caller
    says its content is already ``redacted``.

    Raises:
        OSError: The file cannot be written; when the system named no file (or only the
            temporary one), the error names ``path`` (same ``errno``, so the same subclass).
    """
    target = Path(path)
    tmp = _temporary(target)
    try:
        yield tmp
        if not redacted and target.suffix.lower() in TEXT_SUFFIXES:
            redact_file(tmp)
        _fsync(tmp)
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OSError) and exc.errno is not None and _names_no_file(exc, tmp):
            raise OSError(exc.errno, exc.strerror or os.strerror(exc.errno), str(target)) from exc
        raise


@contextlib.contextmanager
def atomic_writer(path: str | Path, *, newline: str | None = None) -> Iterator[IO[str]]:
    """An open UTF-8 text handle whose content replaces ``path`` when the block ends without error."""
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8", newline=newline) as handle:
        yield handle


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8, redacted) to ``path`` atomically."""
    with atomic_path(path, redacted=True) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        handle.write(redact(text))


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def atomic_write(path: str | Path, write: Callable[[Path], object]) -> None:
    """Call ``write(tmp)`` to write ``path``'s new content to a temporary file, then replace ``path``.

    ``write`` is any callable that writes a file given its name, e.g.
    ``lambda p: frame.to_csv(p, index=False)``.
    """
    with atomic_path(path) as tmp:
        write(tmp)
