"""A task's options on the command line, read against the task's pydantic ``Options`` model.

Every field of ``Task.Options`` is an option of the generic commands: ``num_options`` is
``--num-options 3`` (or ``--num-options=3``); a boolean is ``--flag`` / ``--no-flag``; a
list takes comma-separated values or the option repeated; a field may list short forms
(``json_schema_extra={"aliases": ["-o"]}``). The values are validated by the
model, so a wrong or unknown option is an error that names it and lists the task's options.
"""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING, Any

from jurist.errors import ConfigError

if TYPE_CHECKING:  # the command line defines its options without loading a task
    from pydantic import BaseModel
    from pydantic.fields import FieldInfo

    from jurist.tasks import Task


def _is_bool(info: FieldInfo) -> bool:
    return info.annotation is bool


def _is_list(info: FieldInfo) -> bool:
    # ``list[str]``, or a union holding one (``list[str] | None``).
    annotation = info.annotation
    return any(
        typing.get_origin(candidate) in (list, tuple, set)
        for candidate in (annotation, *typing.get_args(annotation))
    )


def _flags(options: type[BaseModel]) -> dict[str, tuple[str, FieldInfo]]:
    """``--kebab-name`` of every field, and the short forms a field lists under
    ``json_schema_extra={"aliases": ["-o"]}``."""
    flags = {}
    for name, info in options.model_fields.items():
        flags["--" + name.replace("_", "-")] = (name, info)
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        aliases = extra.get("aliases")
        for alias in aliases if isinstance(aliases, list) else []:
            flags[str(alias)] = (name, info)
    return flags


def split_task_arguments(task: Task, tokens: list[str]) -> tuple[list[str], dict[str, Any]]:
    """Split command-line tokens into positional arguments and the task's option values.

    Raises:
        ConfigError: An option the task does not have (the message lists its options), or
            an option without its value.
    """
    flags = _flags(task.Options)
    positional: list[str] = []
    values: dict[str, Any] = {}
    index = 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        if (not token.startswith("--") and token not in flags) or token == "--":
            positional.append(token)
            continue
        flag, has_value, inline = token.partition("=")
        negated = flag.startswith("--no-") and "--" + flag[5:] in flags
        if flag not in flags and not negated:
            known = ", ".join(flags) or "none"
            raise ConfigError(f"task {task.name!r} has no option {flag} (its options: {known})", field=flag)
        name, info = flags["--" + flag[5:]] if negated else flags[flag]
        if _is_bool(info):
            values[name] = (inline.lower() not in ("false", "0", "no")) if has_value else not negated
            continue
        if not has_value:
            if index >= len(tokens):
                raise ConfigError(f"option {flag} needs a value", field=flag)
            inline = tokens[index]
            index += 1
        if _is_list(info):
            parts = [part.strip() for part in inline.split(",") if part.strip()]
            values.setdefault(name, []).extend(parts)
        else:
            values[name] = inline
    return positional, values
