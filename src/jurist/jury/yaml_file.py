"""What a jury file (:mod:`jurist.jury.config`) and a cascade file
(:mod:`jurist.jury.cascade_config`) share: a YAML mapping with one top-level key, read with the
line of every key so that errors name the file, the line and the field; a list of named entries;
paths relative to the file; and a copy written elsewhere with those paths still pointing at the
same files.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import yaml

from jurist.atomic import atomic_write_text
from jurist.errors import ConfigError
from jurist.safe_load import load_yaml, load_yaml_node

__all__ = [
    "NAME",
    "YamlBody",
    "copied_body",
    "entry_lines",
    "has_top_key",
    "named_entries",
    "read_body",
    "relative_to",
    "write_copy",
]

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
"""A name that can name a run's folder: letters, digits, ``.``, ``-`` and ``_``."""


def _read_mapping(path: Path) -> tuple[Any, yaml.Node | None]:
    """A YAML file's parsed content and its composed root node (read once, within the bounds of
    :mod:`jurist.safe_load`).

    Raises:
        ConfigError: The file cannot be read, or is not valid YAML (names the line).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config: {exc.strerror}", path=path) from None
    try:
        return load_yaml_node(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ConfigError(
            f"not valid YAML: {getattr(exc, 'problem', exc)}", path=path, line=mark.line + 1 if mark else None
        ) from None


def has_top_key(source: Any, key: str) -> bool:
    """Whether ``source`` is a path to a YAML file whose top-level mapping has ``key``.

    Anything else (a judge config object, ``None``, a file that cannot be read) has not.
    """
    if not isinstance(source, str | Path) or not str(source).lower().endswith((".yaml", ".yml")):
        return False
    path = Path(source)
    if not path.is_file():
        return False
    try:
        loaded = load_yaml(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return False
    return isinstance(loaded, dict) and key in loaded


def _lines(root: yaml.Node | None) -> dict[str, int]:
    """1-based lines of every key (``jury.aggregate``) and list entry (``jury.jurors[1]``) of a
    composed document."""
    found: dict[str, int] = {}

    def walk(node: yaml.Node, prefix: str) -> None:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    name = f"{prefix}.{key.value}" if prefix else str(key.value)
                    found[name] = key.start_mark.line + 1
                    walk(value, name)
        elif isinstance(node, yaml.SequenceNode):
            for index, value in enumerate(node.value):
                name = f"{prefix}[{index}]"
                found[name] = value.start_mark.line + 1
                walk(value, name)

    if root is not None:
        walk(root, "")
    return found


def entry_lines(lines: dict[str, int], field: str) -> dict[str, int]:
    """The lines of the keys under ``field``, named relative to it (``model``, not
    ``jury.jurors[1].model``), for validating an entry's inline judge-config keys."""
    return {key.removeprefix(f"{field}."): line for key, line in lines.items() if key.startswith(f"{field}.")}


@dataclass(frozen=True)
class YamlBody:
    """The mapping under a file's top-level key, with the file and the line of every key."""

    path: Path
    key: str
    body: dict[str, Any]
    lines: dict[str, int]

    def error(self, message: str, field: str) -> ConfigError:
        """An error naming the file, the line of ``field`` and ``field``."""
        return ConfigError(message, path=self.path, line=self.lines.get(field), field=field)


def read_body(path: Path, key: str, keys: Sequence[str], holds: str) -> YamlBody:
    """Read a file that is a YAML mapping with only ``key``, whose value is a mapping of ``keys``
    (``holds`` says which, for the error).

    Raises:
        ConfigError: The file cannot be read, or is not such a mapping (names its line and field).
    """
    loaded, root = _read_mapping(path)
    document = YamlBody(path, key, {}, _lines(root))
    if not isinstance(loaded, dict) or key not in loaded:
        raise ConfigError(f"a {key} file is a YAML mapping with a '{key}' key", path=path, field=key)
    extra = [str(name) for name in loaded if name != key]
    if extra:
        raise document.error(f"unknown key (a {key} file holds only '{key}:')", extra[0])
    body = loaded[key]
    if not isinstance(body, dict):
        raise document.error(f"'{key}' must be a mapping with {holds}", key)
    unknown = [str(name) for name in body if name not in keys]
    if unknown:
        raise document.error(f"unknown key (known: {', '.join(keys)})", f"{key}.{unknown[0]}")
    return YamlBody(path, key, body, document.lines)


class _Named(Protocol):
    @property
    def name(self) -> str: ...


NamedT = TypeVar("NamedT", bound=_Named)


def named_entries(
    document: YamlBody, key: str, noun: str, build: Callable[[Any, str], NamedT]
) -> list[NamedT]:
    """The entries of the list ``key`` of ``document``, each built by ``build(entry, field)``
    (``field``: ``jury.jurors[1]``).

    Raises:
        ConfigError: The list has fewer than two entries, or two of them have one name.
    """
    field = f"{document.key}.{key}"
    entries = document.body.get(key)
    if not isinstance(entries, list) or len(entries) < 2:
        raise document.error(f"'{key}' must list at least two {noun}s", field)
    built: list[NamedT] = []
    for index, entry in enumerate(entries):
        one = build(entry, f"{field}[{index}]")
        if any(other.name == one.name for other in built):
            raise document.error(f"two {noun}s are named {one.name!r}", f"{field}[{index}].name")
        built.append(one)
    return built


def relative_to(file: Path, source: str | Path) -> Path:
    """``source`` as a path: absolute as it is, relative to the folder of ``file`` otherwise."""
    path = Path(source)
    return path if path.is_absolute() else file.parent / path


def _relocated(file: Path, source: str, destination: Path) -> str:
    """``source``, a path relative to ``file``, as written in a copy of it at ``destination``."""
    original = relative_to(file, source)
    try:
        return os.path.relpath(original.resolve(), destination.parent.resolve())
    except ValueError:  # another drive (Windows): keep it absolute
        return str(original.resolve())


def copied_body(
    file: Path | None,
    key: str,
    entries: str,
    path_keys: Sequence[str],
    destination: Path,
    keep: Collection[str] = (),
) -> dict[str, Any]:
    """The mapping under ``key`` in ``file``, for a copy at ``destination``: in each entry of
    its list ``entries``, the paths under ``path_keys`` (but the values in ``keep``) are
    rewritten relative to the copy's folder, so the copy names the same files.

    Raises:
        ConfigError: There is no file to copy.
    """
    if file is None:
        raise ConfigError(f"the {key} was not read from a file; there is nothing to copy", field=key)
    loaded, _ = _read_mapping(file)
    body = dict(loaded[key])
    copied = []
    for entry in body.get(entries) or []:
        entry = dict(entry)
        for path_key in path_keys:
            source = entry.get(path_key)
            if isinstance(source, str) and source not in keep:
                entry[path_key] = _relocated(file, source, destination)
        copied.append(entry)
    body[entries] = copied
    return body


def write_copy(destination: Path, key: str, body: dict[str, Any], keys: Sequence[str]) -> Path:
    """Write ``{key: body}`` (``body``'s keys in the order of ``keys``) to ``destination`` (atomically)."""
    ordered = {name: body[name] for name in keys if name in body}
    destination.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(destination, yaml.safe_dump({key: ordered}, sort_keys=False, allow_unicode=True))
    return destination
