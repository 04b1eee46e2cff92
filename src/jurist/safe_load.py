"""The one reader of the YAML and JSON a user gives jurist, with bounds, and the one way an
error quotes a value it was given.

Every judge config, task file, jury and cascade file, probe set, gate-threshold file and
data row is parsed here, so a hostile or careless file costs what its size costs and never
more:

- YAML: at most :data:`MAX_DEPTH` nested collections, and aliases that expand to at most
  :data:`MAX_ALIAS_EXPANSION` nodes and characters in all (a "billion laughs" document is
  refused while it is composed, before anything walks it); an alias to the collection that
  holds it is refused; an integer too long for Python to read is a YAML error, not a crash.
- JSON: at most :data:`MAX_DEPTH` nested arrays and objects, each object's keys once (a
  second copy of a key is an error: Python's ``json`` would silently keep the last value),
  and an integer too long for Python to read is refused.

Errors are ``yaml.YAMLError`` (with the line in ``problem_mark``, as PyYAML's own) and
:class:`JSONLimitError`; callers turn them into one line naming the file, line and field.
:func:`quote` writes a value into a message with at most :data:`QUOTE_LIMIT` characters, and
:func:`clip` bounds a whole error line, so no input can make an error line long.
"""

from __future__ import annotations

import json
import re
import reprlib
import sys
from collections.abc import Callable
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError

__all__ = [
    "LINE_LIMIT",
    "MAX_ALIAS_EXPANSION",
    "MAX_DEPTH",
    "QUOTE_LIMIT",
    "TOO_DEEP",
    "JSONLimitError",
    "clip",
    "compose_yaml",
    "load_yaml",
    "load_yaml_node",
    "loads_json",
    "nested_too_deep",
    "quote",
    "raw_decode_json",
]

MAX_DEPTH = 100
"""The deepest nesting of collections read: YAML sequences and mappings, JSON arrays and objects."""

MAX_ALIAS_EXPANSION = 1_000_000
"""What the aliases of one YAML document may add in all, counted as the nodes and scalar
characters each alias stands for once expanded (an anchored 2 kB text used ten times adds
about 20,000)."""

QUOTE_LIMIT = 200
"""The most characters of a value an error message quotes."""

LINE_LIMIT = 2_000
"""The most characters of one error line (:func:`clip`)."""


# --------------------------------------------------------------------------- quoting


class _ShortRepr(reprlib.Repr):
    """``repr`` whose cost and length are bounded whatever the value (shared or huge)."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel = 3
        self.maxdict = self.maxlist = self.maxtuple = self.maxset = self.maxfrozenset = 8
        self.maxdeque = self.maxarray = 8
        self.maxstring = QUOTE_LIMIT
        self.maxlong = 40
        self.maxother = QUOTE_LIMIT

    def repr_int(self, x: int, level: int) -> str:
        try:
            return super().repr_int(x, level)
        except ValueError:  # more digits than Python converts to text
            return f"<an integer of {x.bit_length()} bits>"


_SHORT = _ShortRepr()


def quote(value: Any, limit: int = QUOTE_LIMIT) -> str:
    """``repr(value)`` in at most ``limit`` characters, for an error message.

    A longer text is cut in the middle and says how long it was; containers show their first
    entries only. The cost does not depend on the value's size (a YAML value whose aliases
    share one list a billion times costs what a small list costs).
    """
    if isinstance(value, str) and len(value) > limit:
        keep = max(limit // 2 - 20, 5)
        head, tail = repr(value[:keep])[: keep + 2], repr(value[-keep:])[-(keep + 2) :]
        return f"{head}…{tail} ({len(value):,} characters)"
    text = _SHORT.repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def clip(message: str, limit: int = LINE_LIMIT) -> str:
    """``message`` in at most about ``limit`` characters: a longer one keeps its start (the
    file, line and field) and its end, and says how much was left out."""
    if len(message) <= limit:
        return message
    head = limit * 3 // 4
    tail = limit - head
    return f"{message[:head]} […{len(message) - limit:,} characters left out…] {message[-tail:]}"


# --------------------------------------------------------------------------- YAML


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, composing with bounded depth and bounded alias expansion.

    Each composed node's expanded size (1 per collection, 1 + its length per scalar, the sum
    of its entries' sizes) is kept, so an alias adds the size of what it stands for without
    anything being expanded.
    """

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._expanded = 0
        self._sizes: dict[int, int] = {}

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            target = self.anchors.get(event.anchor)
            if target is not None:
                size = self._sizes.get(id(target))
                if size is None:
                    raise ComposerError(
                        None,
                        None,
                        f"the alias *{event.anchor} stands for the collection that holds it "
                        "(a recursive document)",
                        event.start_mark,
                    )
                self._expanded += size
                if self._expanded > MAX_ALIAS_EXPANSION:
                    raise ComposerError(
                        None,
                        None,
                        f"aliases (*{event.anchor} and others) expand to more than "
                        f"{MAX_ALIAS_EXPANSION:,} nodes and characters; write the values out",
                        event.start_mark,
                    )
            return super().compose_node(parent, index)  # type: ignore[no-any-return]
        if self._depth >= MAX_DEPTH and (
            self.check_event(yaml.SequenceStartEvent) or self.check_event(yaml.MappingStartEvent)
        ):
            raise ComposerError(
                None,
                None,
                f"nested deeper than {MAX_DEPTH} levels",
                self.peek_event().start_mark,
            )
        self._depth += 1
        try:
            node: yaml.Node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        self._sizes[id(node)] = self._size(node)
        return node

    def _size(self, node: yaml.Node) -> int:
        if isinstance(node, yaml.ScalarNode):
            return 1 + len(node.value)
        sizes = self._sizes
        if isinstance(node, yaml.SequenceNode):
            return 1 + sum(sizes.get(id(child), 1) for child in node.value)
        if isinstance(node, yaml.MappingNode):
            return 1 + sum(sizes.get(id(key), 1) + sizes.get(id(value), 1) for key, value in node.value)
        return 1

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        try:
            return super().construct_yaml_int(node)  # type: ignore[no-any-return]
        except ValueError:
            digits = sys.get_int_max_str_digits()
            raise ConstructorError(
                None, None, f"an integer of more than {digits:,} digits", node.start_mark
            ) from None


_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _BoundedLoader.construct_yaml_int)


def load_yaml_node(text: str) -> tuple[Any, yaml.Node | None]:
    """Parse one YAML document: its value (as ``yaml.safe_load`` reads it) and its composed
    root node (for the line of every key), read once.

    Raises:
        yaml.YAMLError: Not valid YAML, nested deeper than :data:`MAX_DEPTH`, aliases that
            expand past :data:`MAX_ALIAS_EXPANSION`, a recursive alias, or an integer too
            long to read; ``problem_mark`` holds the line where known.
    """
    loader = _BoundedLoader(text)
    try:
        node = loader.get_single_node()
        value = loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()
    return value, node


def load_yaml(text: str) -> Any:
    """Parse one YAML document as ``yaml.safe_load`` does, within the bounds of this module.

    Raises:
        yaml.YAMLError: As :func:`load_yaml_node`.
    """
    return load_yaml_node(text)[0]


def compose_yaml(text: str) -> yaml.Node | None:
    """The composed root node of one YAML document (``None`` when empty), within the bounds.

    Raises:
        yaml.YAMLError: As :func:`load_yaml_node`.
    """
    loader = _BoundedLoader(text)
    try:
        return loader.get_single_node()  # type: ignore[no-any-return]
    finally:
        loader.dispose()


# --------------------------------------------------------------------------- JSON


class JSONLimitError(ValueError):
    """JSON text jurist refuses although it parses: a key twice in one object, nesting
    deeper than :data:`MAX_DEPTH`, or an integer too long to read.

    Attributes:
        reason: What is wrong, in words a user can act on.
        key: The key given twice, if that is the problem.
    """

    def __init__(self, reason: str, key: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's pairs as a dict; a key given twice raises instead of keeping the last."""
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise JSONLimitError(
                    f"the key {quote(key)} is given twice in one JSON object (give each key once)",
                    key=key,
                )
            seen.add(key)
    return found


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys)
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_INNERMOST = re.compile(r"\[\]|\{\}")
TOO_DEEP = f"nested deeper than {MAX_DEPTH} levels of arrays and objects"
"""The reason of the error for JSON nested deeper than :data:`MAX_DEPTH`."""


def _find_fast_parser() -> Callable[[bytes], Any] | None:
    """jiter's parser with its check of repeated keys (about twice as fast as Python's ``json``),
    or ``None`` when jiter (installed with LiteLLM's OpenAI client) is missing or too old."""
    try:
        from jiter import from_json
    except ImportError:  # pragma: no cover - jiter comes with openai, which LiteLLM requires
        return None

    def parse(data: bytes) -> Any:  # a function: faster to call than functools.partial
        return from_json(data, catch_duplicate_keys=True, allow_inf_nan=True, cache_mode="keys")

    try:
        parse(b'{"a": [1.5, "b"]}')
    except TypeError:  # pragma: no cover - a jiter without these options
        return None
    return parse


_FAST = _find_fast_parser()


def nested_too_deep(text: str | bytes) -> bool:
    """Whether valid JSON ``text`` nests arrays and objects deeper than :data:`MAX_DEPTH`.

    Two C-speed counts settle almost every text; only one with more brackets than the limit
    is scanned: strings dropped, brackets kept, and innermost pairs removed once per level.
    """
    if isinstance(text, bytes):
        if text.count(b"[") + text.count(b"{") <= MAX_DEPTH:
            return False
        text = text.decode("utf-8", "replace")
    elif text.count("[") + text.count("{") <= MAX_DEPTH:
        return False
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    for _ in range(MAX_DEPTH):
        if not brackets:
            return False
        brackets = _INNERMOST.sub("", brackets)
    return bool(brackets)


def _decode(text: str, pos: int | None) -> tuple[Any, int]:
    """Python's ``json`` with the checks of this module: its own error for text that is not
    JSON, and :class:`JSONLimitError` for what it would accept but jurist does not."""
    try:
        if pos is None:
            return _DECODER.decode(text), len(text)
        return _DECODER.raw_decode(text, pos)  # type: ignore[no-any-return]
    except RecursionError:
        raise JSONLimitError(TOO_DEEP) from None
    except (json.JSONDecodeError, JSONLimitError):
        raise
    except ValueError:  # int(): more digits than Python converts
        digits = sys.get_int_max_str_digits()
        raise JSONLimitError(f"a number of more than {digits:,} digits") from None


def loads_json(text: str | bytes) -> Any:
    """Parse one JSON text as ``json.loads`` does, with every key once and bounded nesting.

    Text that jiter parses takes that fast path; anything else (not JSON, a repeated key, a
    value jiter refuses) is read again by Python's ``json``, whose verdict and error message
    stand, so what is accepted is exactly what ``json.loads`` accepts, less the refusals here.

    Args:
        text: The JSON text; bytes are UTF-8.

    Raises:
        json.JSONDecodeError: Not valid JSON.
        JSONLimitError: A key twice in one object (``key`` names it), nesting deeper than
            :data:`MAX_DEPTH`, or an integer too long to read.
        UnicodeDecodeError: ``text`` is bytes that are not UTF-8.
    """
    if _FAST is not None:
        try:
            value = _FAST(text if isinstance(text, bytes) else text.encode("utf-8"))
        except (ValueError, UnicodeEncodeError):
            value = _slow_loads(text)
    else:
        value = _slow_loads(text)
    if nested_too_deep(text):
        raise JSONLimitError(TOO_DEEP)
    return value


def _slow_loads(text: str | bytes) -> Any:
    return _decode(text.decode("utf-8") if isinstance(text, bytes) else text, None)[0]


def raw_decode_json(text: str, pos: int) -> tuple[Any, int]:
    """Decode the JSON value that starts at ``pos`` (as ``JSONDecoder.raw_decode``), with the
    checks of :func:`loads_json`; returns the value and the index after it.

    Raises:
        json.JSONDecodeError: Not valid JSON.
        JSONLimitError: As :func:`loads_json`.
    """
    value, end = _decode(text, pos)
    if nested_too_deep(text[pos:end]):
        raise JSONLimitError(TOO_DEEP)
    return value, end
