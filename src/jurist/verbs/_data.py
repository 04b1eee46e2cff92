"""Data everywhere a verb takes it: a path, ``sample:NAME``, a pandas DataFrame or a list of dicts.

Tasks read files. Rows given in memory are written as JSONL
(:mod:`jurist.datasets.in_memory`: how values are written) to a file kept as long as what
was judged from them, and the task reads that file as it reads any other, so its rows are
checked as a file's are. Where the file goes:

- ``judge``: ``OUT/input.jsonl``, in the run directory, which so keeps the data it judged.
  Without ``out``, the run directory is named after the rows' SHA-256 as it would be after
  a file ``rows-<12 hex digits>.jsonl`` (``runs/TASK/rows-3fa2...-baseline-<fingerprint>``).
  The same rows given again resume the run (the same text, so the same dataset ``sha256`` in
  the manifest); other rows into a directory where a run was started, or rows into one that
  holds a run of a file, are refused as another file is
  (:class:`~jurist.errors.RunDirectoryError`). Rows the task's reader refused started no
  run: the file is replaced by the next rows given.
- ``calibrate``: ``OUT/data/rows-<12 hex digits>.jsonl``, one file per gold set given in
  memory; its leaderboard dataset is named ``rows-<12 hex digits>``.
- ``optimize``: beside the artifact, ``STEM.train-<12 hex digits>.jsonl`` (and ``.dev-``,
  ``.test-``); the artifact's ``data`` records their paths and hashes.
- ``score`` with ``gold``: ``RUN/gold-<12 hex digits>.jsonl`` when it writes the exports
  into a run directory (the summary names that file); otherwise a temporary file.
- ``prompt``, ``estimate`` and ``estimate_calibration`` write nothing: the rows are read
  from a temporary file named as the one ``judge`` or ``calibrate`` would write (so the run
  directories and dataset names are the same; ``estimate`` reads the run's own
  ``input.jsonl`` when it holds them), removed afterwards.

A file named after the rows' hash is written once and never replaced. The manifest of each
run judged from rows in memory records the file as the dataset's ``path``, with ``"from":
"DataFrame"`` (or ``"list"``) beside it (:mod:`jurist.runner.given`). An error the task's
reader raises about the file names the row (0-based: the DataFrame's position, the list's
index) instead of the file's line (:class:`~jurist.errors.RowError`).

The file holds the rows as given, as a data file would: jurist's redaction applies to what
it writes about a run, not to copies of the data it judges.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, TypeAlias

import pandas as pd

from jurist.atomic import atomic_path
from jurist.datasets.in_memory import given_as, is_in_memory, rows_jsonl
from jurist.errors import ConfigError, InputError, RowError, RunDirectoryError
from jurist.runner import MANIFEST
from jurist.runner.given import data_given
from jurist.tasks._contract import Task

__all__ = [
    "INPUT",
    "Data",
    "Rows",
    "data_files",
    "data_list",
    "hashed_file",
    "no_folder_if_refused",
    "path_or_rows",
    "reading",
    "run_input",
    "temporary_files",
]

Data: TypeAlias = str | Path | pd.DataFrame | Sequence[Mapping[str, Any]]
"""What a verb takes as data: a path, ``sample:NAME``, a pandas DataFrame or a list of dicts."""

INPUT = "input.jsonl"
"""The file in a run directory that holds the rows ``judge`` was given in memory."""


@dataclass(frozen=True)
class Rows:
    """Rows given in memory, as the JSONL text a task reads.

    Attributes:
        given: ``"DataFrame"`` or ``"list"``.
        text: The JSONL bytes (:func:`jurist.datasets.in_memory.rows_jsonl`).
        count: How many rows.
    """

    given: str
    text: bytes
    count: int

    @cached_property
    def sha256(self) -> str:
        """The SHA-256 of :attr:`text` (the dataset hash the manifest records)."""
        return hashlib.sha256(self.text).hexdigest()

    @property
    def name(self) -> str:
        """``rows-<12 hex digits>``: the stem of a file named after the rows."""
        return f"rows-{self.sha256[:12]}"


def path_or_rows(data: Any, task: Task | None = None) -> str | Path | Rows:
    """``data`` as a path (``sample:NAME`` kept as text), or the rows it holds in memory.

    Raises:
        ConfigError: ``data`` is neither, or ``task`` reads only files (:attr:`Task.needs_files`).
        RowError: A row or value cannot be written (named by row and field).
        InputError: No row.
    """
    if isinstance(data, str | Path):
        return data
    if isinstance(data, os.PathLike):
        return Path(data)
    if not is_in_memory(data):
        raise ConfigError(
            "data must be a path, sample:NAME, a pandas DataFrame or a list of dicts "
            f"(got {type(data).__name__})",
            field="data",
        )
    if task is not None and task.needs_files is not None:
        raise ConfigError(
            f"task {task.name!r} cannot take rows in memory (a DataFrame or a list of dicts): "
            f"it reads {task.needs_files}",
            field="data",
        )
    text, count = rows_jsonl(data)
    return Rows(given_as(data), text, count)


def data_list(data: Data | Sequence[Data]) -> list[Data]:
    """Several data sets (``calibrate``'s gold): a list of them, or one (a path, a DataFrame,
    or a list of dicts: a list whose elements are all dicts is one set of rows)."""
    if isinstance(data, str | os.PathLike | pd.DataFrame):
        return [data]
    items = list(data)
    if items and all(isinstance(item, Mapping) for item in items):
        return [items]
    return items


def _write(path: Path, text: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path, redacted=True) as tmp:  # the rows as given (see the module docstring)
        tmp.write_bytes(text)


def run_input(rows: Rows, out: Path, *, write: bool = True) -> Path:
    """``OUT/input.jsonl`` holding ``rows`` (written there first unless ``write`` is false:
    then only checked, and the path returned may not exist). A file of other rows that no
    run was started from (its rows were refused by the task's reader) is replaced.

    Raises:
        RunDirectoryError: A run was started in ``out`` (a ``manifest.json`` in it or in a
            juror's, repeat's or stage's directory under it) from other rows, or from a file.
    """
    target = out / INPUT
    if target.is_file() and target.read_bytes() == rows.text:
        return target
    if out.is_dir() and next(out.rglob(MANIFEST), None) is not None:
        if target.is_file():
            raise RunDirectoryError(
                f"{out} holds a run of other rows ({target}); give the same rows to resume it, "
                "or write to another out directory"
            )
        raise RunDirectoryError(
            f"{out} holds a run of data read from a file, not of rows given in memory; "
            "write to another out directory"
        )
    if write:
        _write(target, rows.text)
    return target


def hashed_file(rows: Rows, directory: Path, stem: str) -> Path:
    """``DIRECTORY/STEM.jsonl`` holding ``rows`` (``stem`` names the rows' hash), written once.

    Raises:
        RunDirectoryError: The file exists with other content (it was changed by hand).
    """
    target = directory / f"{stem}.jsonl"
    if target.is_file():
        if target.read_bytes() != rows.text:
            raise RunDirectoryError(
                f"{target} is named after rows it no longer holds (changed by hand?); move it aside"
            )
        return target
    _write(target, rows.text)
    return target


def data_files(
    task: Task, sets: Sequence[Data], directory: Path | None, stack: ExitStack
) -> tuple[list[str | Path], dict[Path, Rows]]:
    """Each data set as a path (``calibrate``'s gold sets), and the files written from rows in
    memory: ``DIRECTORY/rows-<12 hex digits>.jsonl`` (:func:`hashed_file`), or, when
    ``directory`` is ``None``, files of the same names in a temporary directory removed when
    ``stack`` closes.

    Raises:
        ConfigError, RowError, InputError: As :func:`path_or_rows`.
    """
    paths: list[str | Path] = []
    files: dict[Path, Rows] = {}
    for data in sets:
        source = path_or_rows(data, task)
        if isinstance(source, Rows):
            if directory is None:
                directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="jurist-rows-")))
            path = hashed_file(source, directory, source.name)
            files[path] = source
            paths.append(path)
        else:
            paths.append(source)
    return paths, files


@contextmanager
def no_folder_if_refused(out: Path) -> Iterator[None]:
    """The block that writes ``OUT/input.jsonl`` and judges from it: when it raises and no run
    was started there (the directory holds the rows' file and lock files only), the rows'
    file and the directories the block created are removed, so a refused command leaves no
    folder behind."""
    from jurist.runner.lock import LOCK_FILE, OWNER_FILE

    created = []
    for candidate in [out, *out.parents]:
        if candidate.exists():
            break
        created.append(candidate)
    try:
        yield
    except BaseException:
        if created and out.is_dir() and {p.name for p in out.iterdir()} <= {INPUT, LOCK_FILE, OWNER_FILE}:
            for name in (INPUT, LOCK_FILE, OWNER_FILE):
                (out / name).unlink(missing_ok=True)
            for directory in created:
                with suppress(OSError):
                    directory.rmdir()
        raise


@contextmanager
def temporary_files(named: Mapping[str, Rows]) -> Iterator[dict[str, Path]]:
    """Temporary files (file name -> rows), removed when the block ends."""
    with tempfile.TemporaryDirectory(prefix="jurist-rows-") as directory:
        files = {}
        for name, rows in named.items():
            files[name] = Path(directory) / name
            files[name].write_bytes(rows.text)
        yield files


@contextmanager
def reading(files: Mapping[Path, Rows]) -> Iterator[None]:
    """The block that reads and judges ``files`` (each written from rows in memory): the runs
    it judges record how the rows were given, and an :class:`~jurist.errors.InputError` about
    one of the files becomes a :class:`~jurist.errors.RowError` naming the row (its 0-based
    position) and the field."""
    with data_given({str(path): rows.given for path, rows in files.items()}):
        try:
            yield
        except RowError:
            raise
        except InputError as exc:
            found = _about(exc, files)
            if found is None:
                raise
            raise _row_error(exc, found) from None


def _about(exc: InputError, files: Mapping[Path, Rows]) -> Rows | None:
    if exc.path is None:
        return None
    for path, rows in files.items():
        if exc.path == str(path) or Path(exc.path).resolve() == path.resolve():
            return rows
    return None


def _row_error(exc: InputError, rows: Rows) -> RowError:
    """The error about a file line as the error about its row: line N holds row N - 1."""
    word = "row" if rows.given == "DataFrame" else "item"
    reason = re.sub(r"\bline (\d+)\b", lambda m: f"{word} {int(m.group(1)) - 1}", exc.reason)
    row = exc.line - 1 if exc.line is not None and 0 < exc.line <= rows.count else None
    return RowError(reason, given=rows.given, row=row, field=exc.field)
