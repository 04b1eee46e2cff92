"""The YAML task files in a folder, for ``jurist tasks`` to list beside the registered tasks.

A folder is searched with its immediate sub-folders (``task.yaml``, ``examples/*/task.yaml``);
hidden folders and files are skipped. A YAML file is taken for a task file when its top-level
mapping has an ``instructions`` or ``output`` key (a judge config or a jury file has neither);
one that cannot be parsed as YAML counts when such a key starts one of its lines. A task file
that does not validate is found with its one-line error (file, line, key), never raised.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from jurist.errors import ConfigError, JuristError
from jurist.safe_load import load_yaml

__all__ = ["FoundTaskFile", "find_task_files"]

_SUFFIXES = (".yaml", ".yml")
_TASK_KEYS = ("instructions", "output")
_TASK_KEY_LINE = re.compile(r"^(?:instructions|output)\s*:", re.MULTILINE)


@dataclass(frozen=True)
class FoundTaskFile:
    """One YAML task file found in a folder.

    Attributes:
        path: The file, as the folder searched was given (``examples/support/task.yaml``).
        description: The task's :meth:`~jurist.tasks.Task.describe` (``None`` when invalid).
        error: Why the file is not a valid task file, in one line (``None`` when valid).
    """

    path: Path
    description: dict[str, Any] | None = None
    error: str | None = None


def _candidates(folder: Path) -> list[Path]:
    found: list[Path] = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_file() and entry.suffix.lower() in _SUFFIXES:
            found.append(entry)
        elif entry.is_dir():
            try:
                inside = sorted(entry.iterdir())
            except OSError:
                continue
            found += [
                file
                for file in inside
                if file.is_file() and not file.name.startswith(".") and file.suffix.lower() in _SUFFIXES
            ]
    return found


def _looks_like_task(file: Path) -> bool:
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    try:
        data = load_yaml(text)
    except yaml.YAMLError:
        return _TASK_KEY_LINE.search(text) is not None
    return isinstance(data, dict) and any(key in data for key in _TASK_KEYS)


def find_task_files(folder: str | Path = ".") -> list[FoundTaskFile]:
    """The YAML task files in ``folder`` and its immediate sub-folders, sorted by path.

    Raises:
        ConfigError: ``folder`` is not a readable folder.
    """
    root = Path(folder)
    if not root.is_dir():
        raise ConfigError("not a folder", path=root, field="path")
    from jurist.tasks.declarative import load_task_file

    found: list[FoundTaskFile] = []
    for file in _candidates(root):
        if not _looks_like_task(file):
            continue
        try:
            description = load_task_file(file).describe()
        except JuristError as exc:
            found.append(FoundTaskFile(path=file, error=" ".join(str(exc).split())))
            continue
        found.append(FoundTaskFile(path=file, description=description))
    return found
