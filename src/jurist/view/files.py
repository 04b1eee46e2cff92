"""The files of a run directory, opened without ever following a symbolic link.

A run directory may come from elsewhere (an unpacked archive, a shared folder), and a
symbolic link in it would make ``jurist view`` serve any file its user can read (a
``report.html`` that points at a private key) or append labels to a file outside the
folder of runs (a ``labels.jsonl`` that points elsewhere). So every file of a run directory
the viewer reads or writes is opened here, with ``O_NOFOLLOW``: the operating system itself
refuses a link in the last part of the path, with no window between a check and the open,
and anything but a regular file (a FIFO, a device) is refused after the open. The run
directory itself is resolved and checked to lie inside the served folder first
(:func:`jurist.view.runs.resolve_run`), so no other part of the path is a link either.

A refusal is a :class:`LinkedFileError`: the viewer answers it with ``403`` and the message,
``jurist labels`` with exit code 2 and the message.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from jurist.errors import RunDirectoryError

__all__ = ["LinkedFileError", "is_regular_file", "open_no_follow", "read_bytes", "read_text"]

_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NON_BLOCKING = getattr(os, "O_NONBLOCK", 0)
_CLOSE_ON_EXEC = getattr(os, "O_CLOEXEC", 0)


class LinkedFileError(RunDirectoryError):
    """A file of a run directory is a symbolic link (or not a regular file); it is neither
    read nor written."""


def _refused(path: Path, what: str) -> LinkedFileError:
    return LinkedFileError(
        f"{path}: {what}; jurist does not follow links in a run directory "
        "(replace the link with a copy of the file)"
    )


def is_regular_file(path: Path) -> bool:
    """Whether ``path`` is a regular file and not a symbolic link (nothing is followed)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def open_no_follow(path: Path, flags: int = os.O_RDONLY, mode: int = 0o644) -> int:
    """A descriptor of the regular file ``path``, opened with ``flags`` without following a
    link (the caller closes it).

    ``O_NONBLOCK`` is added to the open only, so a FIFO in its place cannot hang the
    caller; it is cleared again once the file is known to be a regular file.

    Raises:
        LinkedFileError: ``path`` is a symbolic link, or not a regular file.
        FileNotFoundError: There is no such file (and ``flags`` do not create it).
        OSError: It cannot be opened for another reason.
    """
    if not _NO_FOLLOW and os.path.islink(path):  # a system without O_NOFOLLOW
        raise _refused(path, "is a symbolic link")
    try:
        descriptor = os.open(path, flags | _NO_FOLLOW | _NON_BLOCKING | _CLOSE_ON_EXEC, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _refused(path, "is a symbolic link") from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise _refused(path, "is not a regular file")
        if _NON_BLOCKING:
            os.set_blocking(descriptor, True)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def read_bytes(path: Path) -> bytes:
    """The content of the regular file ``path``, read without following a link.

    Raises:
        LinkedFileError: ``path`` is a symbolic link, or not a regular file.
        OSError: It cannot be read (``FileNotFoundError`` when missing).
    """
    with os.fdopen(open_no_follow(path), "rb") as handle:
        return handle.read()


def read_text(path: Path) -> str:
    """The text of the regular file ``path`` (UTF-8, undecodable bytes replaced), read
    without following a link.

    Raises:
        LinkedFileError: ``path`` is a symbolic link, or not a regular file.
        OSError: It cannot be read (``FileNotFoundError`` when missing).
    """
    return read_bytes(path).decode("utf-8", errors="replace")
