"""The YAML task file: its pydantic schema, and reading it with errors that name the key and line.

A malformed file raises :class:`~jurist.errors.ConfigError` with the file, the line of the
offending key (where YAML knows it), the key path (``output.range``,
``baseline.rules.0.pattern``) and what was expected. ``docs/tasks.md`` documents every key.
"""

from __future__ import annotations

import hashlib
import json
import keyword
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from jurist.errors import ConfigError
from jurist.safe_load import load_yaml_node, quote
from jurist.tasks.declarative.verdicts import Kind, OutputSpec, check_verdict

__all__ = ["BaselineSpec", "Kind", "OutputSpec", "Rule", "TaskFile", "read_task_file"]

RESERVED = frozenset({"verdict", "reasoning", "confidence", "order"})
"""Names an input field cannot take: they are output fields, or the order of a pairwise item."""
PAIRWISE_DEFAULTS = ("tie", "A", "B", "longer", "shorter")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Rule(_Strict):
    """One baseline rule: when ``pattern`` is found, the verdict is ``value``."""

    pattern: str
    value: Any
    field: str | None = None
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression ({exc})") from None
        return value


class BaselineSpec(_Strict):
    """The offline rule judge: the first matching rule gives the verdict, else ``default``."""

    rules: list[Rule] = Field(default_factory=list)
    default: Any


class TaskFile(_Strict):
    """A whole YAML task file (see ``docs/tasks.md``)."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
    description: str = ""
    instructions: str = Field(min_length=1)
    inputs: dict[str, str] | list[str]
    id: str | None = None
    output: OutputSpec
    gold: str | None = None
    examples: str | list[dict[str, Any]] | None = None
    baseline: BaselineSpec | None = None

    @property
    def columns(self) -> dict[str, str]:
        """Judge input field -> data column."""
        if isinstance(self.inputs, list):
            return {name: name for name in self.inputs}
        return dict(self.inputs)

    @property
    def kind(self) -> str:
        return self.output.kind

    def fingerprint(self) -> str:
        """A short hash of everything that decides the judgments (part of the task's version)."""
        text = json.dumps(self.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()[:12]


class _KeyError(Exception):
    def __init__(self, path: tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


def _check_output(output: OutputSpec) -> None:
    kind = output.kind
    if kind == "score":
        if output.range is None:
            raise _KeyError(("output", "range"), "a score needs 'range: [low, high]' (inclusive integers)")
        low, high = output.range
        if low >= high:
            raise _KeyError(("output", "range"), f"expected low < high, got [{low}, {high}]")
    elif output.range is not None:
        raise _KeyError(("output", "range"), f"'range' is for kind 'score' only, not {kind!r}")
    if kind in ("label", "labels"):
        labels = output.labels or []
        if len(labels) < (2 if kind == "label" else 1):
            raise _KeyError(("output", "labels"), f"kind {kind!r} needs a list of allowed labels")
        if len(set(labels)) != len(labels):
            raise _KeyError(("output", "labels"), "labels must be distinct")
        if any(not label.strip() or label != label.strip() for label in labels):
            raise _KeyError(("output", "labels"), "labels must be non-empty, without surrounding spaces")
    elif output.labels is not None:
        raise _KeyError(("output", "labels"), f"'labels' is for kinds 'label' and 'labels', not {kind!r}")
    if output.confidence and kind != "bool":
        raise _KeyError(("output", "confidence"), f"'confidence' is for kind 'bool' only, not {kind!r}")
    if output.allow_tie and kind != "pairwise":
        raise _KeyError(("output", "allow_tie"), f"'allow_tie' is for kind 'pairwise' only, not {kind!r}")


def _check_inputs(spec: TaskFile) -> None:
    columns = spec.columns
    if not columns:
        raise _KeyError(("inputs",), "name at least one input field")
    for name, column in columns.items():
        if not name.isidentifier() or keyword.iskeyword(name):
            raise _KeyError(("inputs", name), "an input field name must be a Python identifier")
        if name in RESERVED:
            raise _KeyError(("inputs", name), f"{name!r} is reserved; use another field name")
        if not isinstance(column, str) or not column:
            raise _KeyError(("inputs", name), "expected a column name")
    if spec.kind == "pairwise":
        missing = [name for name in ("response_a", "response_b") if name not in columns]
        if missing:
            raise _KeyError(
                ("inputs",),
                f"a pairwise task needs the input fields response_a and response_b "
                f"(missing: {', '.join(missing)})",
            )
    if spec.examples is not None and spec.gold is None:
        raise _KeyError(("examples",), "few-shot examples need a 'gold' column to take their verdicts from")


def _check_baseline(spec: TaskFile) -> None:
    baseline = spec.baseline
    if baseline is None:
        return
    pairwise = spec.kind == "pairwise"
    for index, rule in enumerate(baseline.rules):
        where: tuple[str | int, ...] = ("baseline", "rules", index)
        if rule.field is not None:
            if pairwise:
                raise _KeyError(
                    (*where, "field"), "pairwise rules are matched in each response; drop 'field'"
                )
            if rule.field not in spec.columns:
                known = ", ".join(spec.columns)
                raise _KeyError((*where, "field"), f"no input field {quote(rule.field)} (inputs: {known})")
        if rule.confidence is not None and not spec.output.confidence:
            raise _KeyError((*where, "confidence"), "'confidence' needs 'output.confidence: true'")
        if pairwise:
            if isinstance(rule.value, bool) or not isinstance(rule.value, int | float):
                raise _KeyError(
                    (*where, "value"), "a pairwise rule's value is a number added to a response's score"
                )
        else:
            try:
                check_verdict(spec.output, rule.value)
            except ValueError as exc:
                raise _KeyError((*where, "value"), str(exc)) from None
    if pairwise:
        if baseline.default not in PAIRWISE_DEFAULTS:
            raise _KeyError(("baseline", "default"), f"expected one of {', '.join(PAIRWISE_DEFAULTS)}")
        if baseline.default == "tie" and not spec.output.allow_tie:
            raise _KeyError(("baseline", "default"), "'tie' needs 'output.allow_tie: true'")
    else:
        try:
            check_verdict(spec.output, baseline.default)
        except ValueError as exc:
            raise _KeyError(("baseline", "default"), str(exc)) from None


def _line_of(root: yaml.Node | None, path: tuple[str | int, ...]) -> int | None:
    """The 1-based line of the deepest node of ``path`` found in a composed YAML tree."""
    node, line = root, None
    if node is not None:
        line = node.start_mark.line + 1
    for part in path:
        if isinstance(node, yaml.MappingNode):
            found = next((pair for pair in node.value if str(pair[0].value) == str(part)), None)
            if found is None:
                break
            line = found[0].start_mark.line + 1
            node = found[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line


_UNION_KEYS = {
    "inputs": "expected a mapping of input field to data column, or a list of column names",
    "examples": "expected a file path (relative to the task file) or a list of rows",
}


def _expected(error: Any) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "missing":
        return "required key is missing"
    return str(error["msg"])


def validate_task(data: Any, *, path: str | Path | None = None, root: yaml.Node | None = None) -> TaskFile:
    """Validate a task given as a mapping (a parsed YAML file, or a dict written in Python).

    Every check a task file gets applies (output kind and its keys, inputs, baseline rules).

    Raises:
        ConfigError: A key is invalid; the message names the key (and its line, from ``root``).
    """
    if not isinstance(data, dict):
        raise ConfigError("a task must be a mapping of keys (name, instructions, inputs, ...)", path=path)
    try:
        spec = TaskFile.model_validate(data)
        _check_output(spec.output)
        _check_inputs(spec)
        _check_baseline(spec)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(
            part for part in first["loc"] if not (isinstance(part, str) and ("[" in part or part == "str"))
        )
        if loc and loc[0] in _UNION_KEYS:
            loc = loc[:1] if loc[0] == "examples" else loc
            message = _UNION_KEYS[str(loc[0])] if len(loc) == 1 else _expected(first)
        else:
            message = _expected(first)
        field = ".".join(str(part) for part in loc) or None
        raise ConfigError(message, path=path, line=_line_of(root, loc), field=field) from None
    except _KeyError as exc:
        field = ".".join(str(part) for part in exc.path)
        raise ConfigError(exc.message, path=path, line=_line_of(root, exc.path), field=field) from None
    return spec


_BOOL_TAG = "tag:yaml.org,2002:bool"


def _child(node: yaml.Node | None, key: str | int) -> yaml.Node | None:
    """The node under ``key`` of a mapping (or index of a sequence) node, if there is one."""
    if isinstance(node, yaml.MappingNode):
        return next((value for name, value in node.value if name.value == key), None)
    if isinstance(node, yaml.SequenceNode) and isinstance(key, int) and 0 <= key < len(node.value):
        found: yaml.Node = node.value[key]
        return found
    return None


def _as_typed(node: yaml.Node | None, value: Any) -> Any:
    """``value``, or the text the user typed when YAML read a plain ``yes``/``no``/``on``/``off``
    (or ``true``/``false``) there as a boolean."""
    if isinstance(value, bool) and isinstance(node, yaml.ScalarNode) and node.tag == _BOOL_TAG:
        return node.value
    return value


def keep_typed_words(data: dict[str, Any], root: yaml.Node | None) -> dict[str, Any]:
    """A task file's values where YAML 1.1 turns words into booleans, as the words typed.

    ``labels: [yes, no, partly]`` means the labels ``"yes"``, ``"no"`` and ``"partly"``, not
    two booleans and a string. Kept as typed: ``output.labels``; the baseline's rule values
    and default when the output kind is not ``bool`` (for a yes/no task ``yes`` is true); and
    every value of an inline few-shot example, its gold column by the same rule as a verdict.
    Only unquoted words are concerned: a quoted ``'yes'`` is a string already.
    """
    output = data.get("output")
    kind = output.get("kind") if isinstance(output, dict) else None
    verdict_words = kind != "bool"
    output_node = _child(root, "output")
    if isinstance(output, dict) and isinstance(output.get("labels"), list):
        labels_node = _child(output_node, "labels")
        output["labels"] = [
            _as_typed(_child(labels_node, index), label) for index, label in enumerate(output["labels"])
        ]
    baseline = data.get("baseline")
    baseline_node = _child(root, "baseline")
    if verdict_words and isinstance(baseline, dict):
        if "default" in baseline:
            baseline["default"] = _as_typed(_child(baseline_node, "default"), baseline["default"])
        rules = baseline.get("rules")
        rules_node = _child(baseline_node, "rules")
        for index, rule in enumerate(rules if isinstance(rules, list) else []):
            if isinstance(rule, dict) and "value" in rule:
                rule["value"] = _as_typed(_child(_child(rules_node, index), "value"), rule["value"])
    examples = data.get("examples")
    examples_node = _child(root, "examples")
    gold = data.get("gold")
    for index, row in enumerate(examples if isinstance(examples, list) else []):
        if not isinstance(row, dict):
            continue
        row_node = _child(examples_node, index)
        for column, value in row.items():
            if column != gold or verdict_words:
                row[column] = _as_typed(_child(row_node, column), value)
    return data


def read_task_file(path: str | Path) -> TaskFile:
    """Read and validate a YAML task file.

    Raises:
        ConfigError: Missing file, not YAML, or an invalid key (named with its line).
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("task file not found", path=file) from None
    except OSError as exc:
        raise ConfigError(f"cannot read the task file ({exc.strerror})", path=file) from None
    try:
        data, root = load_yaml_node(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        line = mark.line + 1 if mark is not None else None
        raise ConfigError(f"not valid YAML ({problem})", path=file, line=line) from None
    if not isinstance(data, dict):
        raise ConfigError(
            "a task file must be a YAML mapping of keys (name, instructions, inputs, ...)", path=file
        )
    return validate_task(keep_typed_words(data, root), path=file, root=root)
