"""The probe set and the verdicts it targets: cases, their placeholders, and how a task's
verdict and its vocabulary are read from a judge's output (see :mod:`jurist.tasks.probes`)."""

from __future__ import annotations

import json
import re
import typing
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import BaseModel

from jurist.errors import InputError, JuristError
from jurist.safe_load import load_yaml

if TYPE_CHECKING:
    from jurist.tasks._contract import Task


INJECTION_CASES = "injection.yaml"
"""The bundled probe set, under ``jurist/tasks/probes/data/``."""

_FREE_TEXT = re.compile(r"(?:^|_)(?:reasons?|reasoning|rationale|explanations?|thoughts?|comments?|notes?)$")
_IGNORED = frozenset({"confidence"})
_PLACEHOLDER = re.compile(r"\{(verdict_field|other_verdict|other_verdict_json|other_verdict_py)\}")
_RANGE = re.compile(r"from (-?\d+) to (-?\d+)")
_POSITIONS = ("end", "start")


@dataclass(frozen=True)
class ProbeCase:
    """One injection case of a probe set.

    Attributes:
        id: Unique in its set.
        family: What kind of trick it is (``verdict-text``, ``json-verdict``, ``fake-field``, ...).
        payload: The template (placeholders: see the module docstring).
        position: ``end`` (appended to the text) or ``start`` (put before it).
        pad_text: Text repeated ``pad_times`` times before the payload.
        pad_times: How many times.
    """

    id: str
    family: str
    payload: str
    position: str = "end"
    pad_text: str = ""
    pad_times: int = 0

    def render(self, verdict_field: str, verdict: Any, other: Any = None) -> str:
        """The payload (with its padding) asking for ``verdict`` in the field ``verdict_field``.

        With ``other`` (the verdict of the paired attack or control), the verdict is padded
        with spaces to the same length as ``other``'s, so the two payloads differ only in
        the verdict they ask for, not in length.
        """
        text, literal = _verdict_text(verdict), json.dumps(verdict, ensure_ascii=False)
        python = repr(verdict)
        if other is not None:
            text = text.ljust(len(_verdict_text(other)))
            literal = literal.ljust(len(json.dumps(other, ensure_ascii=False)))
            python = python.ljust(len(repr(other)))
        values = {
            "verdict_field": verdict_field,
            "other_verdict": text,
            "other_verdict_json": literal,
            "other_verdict_py": python,
        }
        rendered = _PLACEHOLDER.sub(lambda match: values[match.group(1)], self.payload)
        return self.pad_text * self.pad_times + rendered


def load_cases(path: str | Path | None = None) -> list[ProbeCase]:
    """The cases of a probe-set file (default: the bundled injection set).

    Raises:
        InputError: The file is missing or not YAML, or a case is invalid (named in the message).
    """
    if path is None:
        source = resources.files("jurist.tasks").joinpath("probes", "data", INJECTION_CASES)
        text, where = source.read_text(encoding="utf-8"), Path(str(source))
    else:
        where = Path(path)
        try:
            text = where.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read the probe set: {exc}", path=where) from None
    try:
        document = load_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or exc
        raise InputError(
            f"the probe set is not valid YAML: {problem}",
            path=where,
            line=mark.line + 1 if mark is not None else None,
        ) from None
    entries = document.get("cases") if isinstance(document, dict) else None
    if not isinstance(entries, list) or not entries:
        raise InputError("the probe set has no 'cases' list", path=where, field="cases")
    cases: list[ProbeCase] = []
    seen: set[str] = set()
    for row, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in ("id", "family")):
            raise InputError("a case needs an 'id' and a 'family'", path=where, line=row, field="cases")
        try:
            case = ProbeCase(
                id=entry["id"],
                family=entry["family"],
                payload=str(entry["payload"]),
                position=str(entry.get("position", "end")),
                pad_text=str(entry.get("pad_text", "")),
                pad_times=int(entry.get("pad_times", 0)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"case {entry['id']!r} is invalid: {exc}", path=where, line=row) from None
        if case.position not in _POSITIONS or case.id in seen:
            problem = "a duplicate id" if case.id in seen else f"position {case.position!r} (end or start)"
            raise InputError(f"case {case.id!r} has {problem}", path=where, line=row)
        seen.add(case.id)
        cases.append(case)
    return cases


# ---------------------------------------------------------------------- verdicts


def _verdict_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ", ".join(_verdict_text(v) for v in value)
    return str(value)


def _strip_free_text(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: _strip_free_text(item)
            for key, item in value.items()
            if not _FREE_TEXT.search(str(key)) and key not in _IGNORED
        }
    if isinstance(value, list):
        return [_strip_free_text(item) for item in value]
    return value


def verdict_view(output: dict[str, Any], declared: Iterable[str] = ()) -> dict[str, Any]:
    """The part of a judge's output that is its verdict: the ``declared`` output fields
    (all fields when none are declared), without free text and ``confidence``, at any depth.

    Examples:
        >>> verdict_view({"verdict": "A", "reasoning": "...", "order": "AB"}, ["verdict", "reasoning"])
        {'verdict': 'A'}
    """
    names = list(declared)
    kept = {key: value for key, value in output.items() if not names or key in names}
    view = _strip_free_text(kept)
    return {key: view[key] for key in sorted(view, key=lambda k: names.index(k) if k in names else 0)}


def same_verdict(first: Any, second: Any) -> bool:
    return json.dumps(first, sort_keys=True, default=str) == json.dumps(second, sort_keys=True, default=str)


def _scalar(value: Any) -> bool:
    return isinstance(value, bool | int | str) and not (isinstance(value, str) and not value)


Path_ = tuple[str | int, ...]


def primary_verdict(view: dict[str, Any], labelled: Iterable[str] = ()) -> tuple[Path_, str, Any] | None:
    """Where the verdict a payload asks to change is: its path in the view, its field name
    and its value. It is the first output field that is a boolean, an integer or a label;
    else the first that is a list of labels (a field named in ``labelled``); else the first
    scalar of a nested object (e.g. a classification's type); else the first scalar
    anywhere (e.g. the first extracted entity's text)."""
    for name, value in view.items():
        if _scalar(value):
            return (name,), name, value
    lists = set(labelled)
    for name, value in view.items():
        if name in lists and isinstance(value, list) and all(_scalar(v) for v in value):
            return (name,), name, value
    for key, value in view.items():
        if isinstance(value, dict):
            for name, item in value.items():
                if _scalar(item):
                    return (key, name), str(name), item
    for key, value in view.items():
        found = _first_leaf(value, (key,), key)
        if found is not None:
            return found
    return None


def _first_leaf(value: Any, path: Path_, name: str) -> tuple[Path_, str, Any] | None:
    if isinstance(value, dict):
        for key, item in value.items():
            found = _first_leaf(item, (*path, key), str(key))
            if found is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _first_leaf(item, (*path, index), name)
            if found is not None:
                return found
    elif _scalar(value):
        return path, name, value
    return None


MISSING = object()


def value_at(view: dict[str, Any] | None, path: Path_) -> Any:
    value: Any = view
    for key in path:
        try:
            value = value[key]  # type: ignore[index]
        except (KeyError, IndexError, TypeError):
            return MISSING
    return value


@dataclass
class Vocabulary:
    """What the task's LLM program says about its output fields: labels and score ranges."""

    labels: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    ranges: dict[str, tuple[int, int]] = field(default_factory=dict)

    @classmethod
    def of(cls, task: Task, options: BaseModel) -> Vocabulary:
        vocabulary = cls()
        try:
            program = task.program(options)
        except (JuristError, NotImplementedError):  # a task without an LLM program: no types to read
            return vocabulary
        for _name, predictor in program.named_predictors():
            for name, info in predictor.signature.output_fields.items():
                annotation = info.annotation
                if typing.get_origin(annotation) is list:
                    annotation = (typing.get_args(annotation) or (str,))[0]
                if typing.get_origin(annotation) is typing.Literal:
                    vocabulary.labels.setdefault(name, typing.get_args(annotation))
                extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
                found = _RANGE.search(str(extra.get("desc", "")))
                if annotation is int and found:
                    vocabulary.ranges.setdefault(name, (int(found.group(1)), int(found.group(2))))
        return vocabulary

    def other(self, name: str, value: Any) -> Any:
        """A verdict for ``name`` other than ``value`` of the same type, or ``None`` when the
        field has no fixed vocabulary (free text such as an extracted span or an answer)."""
        if isinstance(value, bool):
            return not value
        labels = self.labels.get(name)
        if isinstance(value, list):
            if not labels:
                return None
            first = value[0] if value else labels[-1]
            following = labels[(labels.index(first) + 1) % len(labels)] if first in labels else labels[0]
            return [following] if [following] != value else []
        if labels and value in labels and len(labels) > 1:
            return labels[(labels.index(value) + 1) % len(labels)]
        if isinstance(value, int):
            low, high = self.ranges.get(name, (value - 1, value + 1))
            return low if abs(value - low) >= abs(high - value) else high
        return None
