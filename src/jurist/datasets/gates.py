"""Inputs of the ``gates`` task: the gold QA set, the trace file (streamed) and gate thresholds.

Gold QA set: a JSON list or JSONL file of objects with ``qid`` (optional), ``q`` or
``question``, ``answerable``, ``gold_ids`` and an optional ``gold_claim``.

Traces: a JSONL file, one object per line, with ``q`` or ``question``, ``answer``, and
optional ``citations`` (a list of ids), ``qid`` and ``chunks`` (ignored). Traces are read
one line at a time, so a file of any length uses constant memory; each line is parsed by
:func:`jurist.safe_load.loads_json` (a key given twice and nesting deeper than 100 levels
are errors, in columns the gate does not read too).

Every bad value raises :class:`~jurist.errors.InputError` naming the file, line and field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from jurist.datasets.io import check_file, normalise_id, not_utf8, read_text
from jurist.errors import ConfigError, InputError
from jurist.metrics.gates import GateThresholds
from jurist.safe_load import JSONLimitError, load_yaml_node, loads_json, quote, raw_decode_json

_WS = re.compile(r"[ \t\n\r]*")
_BOM = b"\xef\xbb\xbf"
NO_MATCH = -1
""":meth:`GoldIndex.match` result: no gold question."""
AMBIGUOUS = -2
""":meth:`GoldIndex.match` result: the question text belongs to several gold questions."""


@dataclass(frozen=True, slots=True)
class GoldQuestion:
    """One row of the gold QA set."""

    qid: str | None
    """The question id; ``None`` when the row has none (it is then matched by text only)."""
    question: str
    answerable: bool
    gold_ids: frozenset[str]
    """Ids of the chunks that answer the question; non-empty when ``answerable``."""
    gold_claim: str | None
    line: int
    """The 1-based line of the row in its file."""

    @property
    def label(self) -> str:
        """The qid, or the question text when there is no qid."""
        return self.qid if self.qid is not None else self.question


class TraceRecord(NamedTuple):
    """One validated trace line."""

    line: int
    qid: str | None
    question: str | None
    answer: str
    citations: list[str] | None
    """The ``citations`` field, or ``None`` when absent or null (ids then come from the answer text)."""


def _qid(value: Any, path: Path, line: int) -> str | None:
    """A qid as text: strings as they are, integers in decimal; null and "" mean no qid."""
    if value is None or value == "":
        return None
    if type(value) is str:
        return normalise_id(value)
    if type(value) is int:
        return str(value)
    raise InputError(
        f"expected a string or an integer, got {quote(value)}", path=path, line=line, field="qid"
    )


def _question(obj: dict[str, Any], path: Path, line: int) -> str | None:
    """The ``q`` field when it is a non-empty string, else ``question``; ``None`` when neither."""
    for key in ("q", "question"):
        value = obj.get(key)
        if value is None or value == "":
            continue
        if type(value) is not str:
            raise InputError(f"expected a string, got {quote(value)}", path=path, line=line, field=key)
        return value
    return None


def _ids(value: Any, path: Path, line: int, field: str) -> list[str]:
    """A list of ids (strings stripped, integers in decimal), empty pieces dropped."""
    if type(value) is not list:
        raise InputError(f"expected a list of ids, got {quote(value)}", path=path, line=line, field=field)
    ids = []
    for i, item in enumerate(value):
        if type(item) is str:
            item = item.strip()
        elif type(item) is int:
            item = str(item)
        else:
            raise InputError(
                f"expected a string id, got {quote(item)}", path=path, line=line, field=f"{field}[{i}]"
            )
        if item:
            ids.append(item)
    return ids


def _gold_row(obj: Any, path: Path, line: int) -> GoldQuestion:
    if type(obj) is not dict:
        raise InputError("expected a JSON object", path=path, line=line)
    question = _question(obj, path, line)
    if question is None:
        raise InputError(
            "a gold question needs a non-empty 'q' or 'question'", path=path, line=line, field="q"
        )
    answerable = obj.get("answerable")
    if type(answerable) is not bool:
        raise InputError(
            f"expected true or false, got {quote(answerable)}", path=path, line=line, field="answerable"
        )
    raw_ids = obj.get("gold_ids")
    gold_ids = [] if raw_ids is None else _ids(raw_ids, path, line, "gold_ids")
    if answerable and not gold_ids:
        raise InputError(
            "an answerable question needs at least one gold id, or no trace of it can ever be OK",
            path=path,
            line=line,
            field="gold_ids",
        )
    claim = obj.get("gold_claim")
    if claim is not None and type(claim) is not str:
        raise InputError(f"expected a string, got {quote(claim)}", path=path, line=line, field="gold_claim")
    qid = _qid(obj.get("qid"), path, line)
    return GoldQuestion(qid, question, answerable, frozenset(gold_ids), claim or None, line)


def _skip_ws(text: str, pos: int) -> int:
    match = _WS.match(text, pos)
    return match.end() if match is not None else pos


def _json_array(text: str, path: Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(line, element)`` for each element of a JSON array held in ``text``."""
    pos = _skip_ws(text, 1)  # text[0] == "["
    line, counted = 1, 0
    if text.startswith("]", pos):
        return
    while True:
        line += text.count("\n", counted, pos)
        counted = pos
        try:
            obj, end = raw_decode_json(text, pos)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc.msg}", path=path, line=exc.lineno) from None
        except JSONLimitError as exc:
            raise InputError(exc.reason, path=path, line=line) from None
        yield line, obj
        pos = _skip_ws(text, end)
        if text.startswith(",", pos):
            pos = _skip_ws(text, pos + 1)
            continue
        line += text.count("\n", counted, pos)
        counted = pos
        if text.startswith("]", pos) and not text[pos + 1 :].strip():
            return
        raise InputError("invalid JSON: expected ',' or ']' between list items", path=path, line=line)


def _json_lines(text: str, path: Path) -> Iterator[tuple[int, Any]]:
    # Split on "\n" only: JSON strings may hold raw U+2028 and friends, which splitlines breaks on.
    for line, raw in enumerate(text.split("\n"), start=1):
        if raw.strip():
            try:
                yield line, loads_json(raw)
            except json.JSONDecodeError as exc:
                raise InputError(f"invalid JSON: {exc.msg}", path=path, line=line) from None
            except JSONLimitError as exc:
                raise InputError(exc.reason, path=path, line=line) from None


def _read_text(path: Path) -> str:
    return read_text(path)


def load_gold(path: str | Path) -> list[GoldQuestion]:
    """Load and validate a gold QA set.

    The file is a JSON list when its first non-blank character is ``[``, else JSONL.

    Args:
        path: The gold file.

    Returns:
        The gold questions in file order.

    Raises:
        InputError: A missing file, invalid JSON, a bad field, a duplicate ``qid``, two rows
            without a qid and with the same question, or an empty set.
    """
    path = Path(path)
    text = _read_text(path)
    rows = _json_array(text, path) if text.lstrip().startswith("[") else _json_lines(text, path)
    golds: list[GoldQuestion] = []
    qid_lines: dict[str, int] = {}
    text_lines: dict[str, int] = {}
    for line, obj in rows:
        gold = _gold_row(obj, path, line)
        if gold.qid is not None:
            if gold.qid in qid_lines:
                raise InputError(
                    f"duplicate qid {quote(gold.qid)} (first on line {qid_lines[gold.qid]})",
                    path=path,
                    line=line,
                    field="qid",
                )
            qid_lines[gold.qid] = line
        else:
            if gold.question in text_lines:
                raise InputError(
                    f"duplicate question without a qid (first on line {text_lines[gold.question]}); add qids",
                    path=path,
                    line=line,
                    field="q",
                )
            text_lines[gold.question] = line
        golds.append(gold)
    if not golds:
        raise InputError("the gold QA set is empty", path=path)
    return golds


def iter_traces(path: str | Path) -> Iterator[TraceRecord]:
    """Stream and validate a JSONL trace file, one line at a time.

    Blank lines are skipped. A trace needs ``answer`` (a string) and a ``qid`` or a non-empty
    ``q``/``question``; ``citations``, when present and not null, must be a list of ids.

    Args:
        path: The trace file.

    Yields:
        One record per non-blank line.

    Raises:
        InputError: A missing file, a line that is not a JSON object, or a bad field.
    """
    path = Path(path)
    check_file(path)
    handle = path.open("rb", buffering=1 << 20)
    loads = loads_json
    found = False
    new = tuple.__new__
    with handle:
        for line, raw in enumerate(handle, start=1):
            try:
                obj = loads(raw)
            except JSONLimitError as exc:  # a key given twice, or nested deeper than 100 levels
                raise InputError(exc.reason, path=path, line=line) from None
            except ValueError as exc:
                if not raw.strip():
                    continue
                if line == 1 and raw.startswith(_BOM):
                    obj = _bom_line(raw, path)
                else:
                    try:
                        raw.decode("utf-8")
                    except UnicodeDecodeError as bad:
                        error = not_utf8(path, raw, bad, offset=handle.tell() - len(raw))
                        raise InputError(error.reason, path=path, line=line) from None
                    raise InputError(f"invalid JSON: {exc}", path=path, line=line) from None
            if type(obj) is not dict:
                raise InputError("expected a JSON object", path=path, line=line)
            answer = obj.get("answer")
            if type(answer) is not str:
                what = "missing" if answer is None else f"expected a string, got {quote(answer)}"
                raise InputError(what, path=path, line=line, field="answer")
            qid = obj.get("qid")
            if qid is not None and type(qid) is not str:
                qid = _qid(qid, path, line)
            elif qid == "":
                qid = None
            elif qid is not None and not qid.isascii():
                qid = normalise_id(qid)
            question = obj.get("q")
            if type(question) is not str or not question:
                question = _question(obj, path, line)
            if question is None and qid is None:
                raise InputError(
                    "a trace needs a 'qid' or a non-empty 'q'/'question'", path=path, line=line, field="q"
                )
            citations = obj.get("citations")
            if citations is not None:
                citations = _ids(citations, path, line, "citations")
            found = True
            yield new(TraceRecord, (line, qid, question, answer, citations))
    if not found:
        raise InputError("no traces: the file is empty or holds only blank lines", path=path)


def _bom_line(raw: bytes, path: Path) -> Any:
    try:
        return loads_json(raw[len(_BOM) :])
    except JSONLimitError as exc:
        raise InputError(exc.reason, path=path, line=1) from None
    except ValueError as exc:
        raise InputError(f"invalid JSON: {exc}", path=path, line=1) from None


class GoldIndex:
    """Finds the gold question of a trace.

    By ``qid`` when the trace has one and a gold row has that qid; otherwise by exact
    question text, among all gold rows for a trace without a qid, and among gold rows
    without a qid for a trace whose qid is not in the gold set.
    """

    def __init__(self, golds: Sequence[GoldQuestion]) -> None:
        self.golds = golds
        self._by_qid: dict[str, int] = {}
        self._by_text: dict[str, int] = {}
        self._by_text_without_qid: dict[str, int] = {}
        for i, gold in enumerate(golds):
            if gold.qid is not None:
                self._by_qid[gold.qid] = i
            else:
                self._by_text_without_qid[gold.question] = i
            self._by_text[gold.question] = AMBIGUOUS if gold.question in self._by_text else i

    def match(self, qid: str | None, question: str | None) -> int:
        """The index of the trace's gold question, :data:`NO_MATCH` or :data:`AMBIGUOUS`."""
        if qid is not None:
            found = self._by_qid.get(qid)
            if found is not None:
                return found
            return NO_MATCH if question is None else self._by_text_without_qid.get(question, NO_MATCH)
        return NO_MATCH if question is None else self._by_text.get(question, NO_MATCH)

    def why_unmatched(self, qid: str | None, question: str | None) -> str:
        """Say in words why a trace has no gold question."""
        if qid is None:
            return "question not in the gold set"
        other = self._by_text.get(question) if question is not None else None
        if other is not None and other >= 0 and self.golds[other].qid is not None:
            return f"qid not in the gold set (its question is gold qid {self.golds[other].qid!r})"
        return "qid not in the gold set"


def load_thresholds(path: str | Path | None = None, **overrides: float | bool | None) -> GateThresholds:
    """Read gate thresholds from a YAML file, then apply overrides.

    The file is a mapping with any of ``precision_min``, ``under_refusal_max``,
    ``over_refusal_max``, ``citation_hit_rate_min``, ``compliance_min`` (numbers in [0, 1])
    and ``fail_on_na`` (true/false); missing keys keep their defaults.

    Args:
        path: The YAML file, or ``None`` for the defaults.
        **overrides: Values that win over the file (``None`` values are ignored), e.g. from
            the command line.

    Raises:
        ConfigError: Unreadable YAML, an unknown key or a bad value, naming its line.
    """
    thresholds = GateThresholds()
    known = {field.name for field in fields(GateThresholds)}
    if path is not None:
        path = Path(path)
        text = _read_text(path)
        try:
            data, node = load_yaml_node(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark is not None else None
            problem = getattr(exc, "problem", None) or exc
            raise ConfigError(f"invalid YAML: {problem}", path=path, line=line) from None
        if data is not None and not isinstance(data, dict):
            raise ConfigError("expected a mapping of threshold names to values", path=path, line=1)
        lines = (
            {k.value: k.start_mark.line + 1 for k, _ in node.value}
            if isinstance(node, yaml.MappingNode)
            else {}
        )
        for key, value in (data or {}).items():
            if key not in known:
                raise ConfigError(
                    f"unknown key; expected one of {', '.join(sorted(known))}",
                    path=path,
                    line=lines.get(key),
                    field=str(key),
                )
            try:
                thresholds = replace(thresholds, **{key: value})
            except ConfigError as exc:
                raise ConfigError(exc.reason, path=path, line=lines.get(key), field=key) from None
    unknown = set(overrides) - known
    if unknown:
        raise ConfigError(f"unknown threshold {sorted(unknown)[0]!r}", field=sorted(unknown)[0])
    given: dict[str, Any] = {key: value for key, value in overrides.items() if value is not None}
    return replace(thresholds, **given) if given else thresholds
