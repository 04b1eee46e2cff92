"""The literal forms a judge's answer is read in: one object, each field once, each value in its own form.

The adapters (:mod:`jurist.judges.adapters`) use three things from here, none of which guesses:

- :func:`read_value` reads one value in the object syntaxes models write, from an offset to
  the value's own end and never past it: JSON, and the sloppy forms a lenient JSON repair
  accepts -- single-quoted strings, unquoted keys (``{verdict: true}``), trailing commas,
  raw line breaks inside strings, Python's ``True``/``False``/``None``. A key given twice
  in one object with different values raises :class:`DuplicateKey`; anything else that is
  not such a value (an unquoted string value, a comment, a missing comma, nesting deeper
  than :data:`MAX_DEPTH`) raises :class:`LiteralSyntaxError`. Nothing is repaired.
- :func:`mentions` counts the copies of an output field a text holds in any syntax a
  lenient repair (or a reader) would take as that field: ``"name":``, ``'name':``,
  ``name:`` (a JS key, or YAML-ish ``name: value``), ``name =``, with JSON-escaped quotes
  too, and DSPy chat headers ``[[ ## name ## ]]`` at a line start.
- :func:`form_problem` says why a field's value is not written in the literal form of its
  type (``None`` when it is): a bool is ``true``/``false``; an int is an integer literal
  (``7``, never ``True``, ``7.0``, ``1e1``, ``0x7`` or ``7 # score``); a float is a decimal
  number (never a boolean, NaN or infinity); a list is one list, given once; a Literal's
  value is one of its values (:func:`literal_value`, with an optional case/whitespace
  normalisation that is reported, never silent: :class:`NormalisedLabel`).
"""

from __future__ import annotations

import math
import re
import types
from collections.abc import Iterable
from typing import Any, Literal, Union, get_args, get_origin

__all__ = [
    "MAX_DEPTH",
    "DuplicateKey",
    "FormError",
    "LiteralSyntaxError",
    "NormalisedLabel",
    "form_problem",
    "literal_value",
    "mentions",
    "read_value",
]

MAX_DEPTH = 64
"""How deep :func:`read_value` follows nested objects and lists before it gives up."""

_SPACE = " \t\r\n"
_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?")
_STRING = {'"': re.compile(r'"((?:[^"\\]|\\.)*)"', re.S), "'": re.compile(r"'((?:[^'\\]|\\.)*)'", re.S)}
_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)", re.S)
_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_WORDS: dict[str, Any] = {
    "true": True,
    "false": False,
    "null": None,
    "True": True,
    "False": False,
    "None": None,
}
_INTEGER = re.compile(r"[+-]?\d+")
_DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


class LiteralSyntaxError(ValueError):
    """The text at ``position`` is not a value :func:`read_value` reads."""

    def __init__(self, message: str, position: int) -> None:
        super().__init__(f"{message} at offset {position}")
        self.position = position


class DuplicateKey(ValueError):
    """One object gives ``key`` twice with different values."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class FormError(ValueError):
    """A field's value is not written in its type's literal form (the message says why)."""


class NormalisedLabel(str):
    """A label the judge wrote with only a case or whitespace difference from a listed label.

    It *is* the listed label (equal to it, hashed as it); ``given`` is what the judge wrote,
    so the normalisation can be counted where the verdict is recorded.
    """

    given: str

    def __new__(cls, label: str, given: str = "") -> NormalisedLabel:
        made = super().__new__(cls, label)
        made.given = given
        return made

    def __reduce__(self) -> tuple[Any, ...]:
        return (NormalisedLabel, (str(self), self.given))


# ---------------------------------------------------------------------- reading one value


def _skip(text: str, position: int) -> int:
    while position < len(text) and text[position] in _SPACE:
        position += 1
    return position


def _unescape(body: str) -> str:
    if "\\" not in body:
        return body

    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code[0] == "u" and len(code) == 5:
            return chr(int(code[1:], 16))
        return _ESCAPES.get(code, code)

    text = _ESCAPE.sub(one, body)
    if any("\ud800" <= char <= "\udfff" for char in text):
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _string(text: str, position: int) -> tuple[str, int]:
    match = _STRING[text[position]].match(text, position)
    if match is None:
        raise LiteralSyntaxError("an unterminated string", position)
    return _unescape(match.group(1)), match.end()


def _key(text: str, position: int) -> tuple[str, int]:
    if position < len(text) and text[position] in "\"'":
        return _string(text, position)
    match = _IDENTIFIER.match(text, position)
    if match is None:
        raise LiteralSyntaxError("a key was expected", position)
    return match.group(), match.end()


def _value(text: str, position: int, depth: int) -> tuple[Any, int]:
    if position >= len(text):
        raise LiteralSyntaxError("a value was expected", position)
    char = text[position]
    if char in "{[":
        if depth >= MAX_DEPTH:
            raise LiteralSyntaxError("nesting too deep", position)
        return (_object if char == "{" else _list)(text, position, depth + 1)
    if char in "\"'":
        return _string(text, position)
    number = _NUMBER.match(text, position)
    if number is not None:
        literal = number.group()
        value: Any = float(literal) if number.group(1) or number.group(2) else int(literal)
        return value, number.end()
    word = _IDENTIFIER.match(text, position)
    if word is not None and word.group() in _WORDS:
        return _WORDS[word.group()], word.end()
    raise LiteralSyntaxError("a value was expected", position)


def _object(text: str, position: int, depth: int) -> tuple[dict[str, Any], int]:
    found: dict[str, Any] = {}
    position = _skip(text, position + 1)
    while position < len(text) and text[position] != "}":
        key, position = _key(text, position)
        position = _skip(text, position)
        if position >= len(text) or text[position] != ":":
            raise LiteralSyntaxError("':' was expected", position)
        value, position = _value(text, _skip(text, position + 1), depth)
        if key in found and found[key] != value:
            raise DuplicateKey(key)
        found[key] = value
        position = _skip(text, position)
        if position < len(text) and text[position] == ",":
            position = _skip(text, position + 1)
        elif position < len(text) and text[position] != "}":
            raise LiteralSyntaxError("',' or '}' was expected", position)
    if position >= len(text):
        raise LiteralSyntaxError("an unclosed object", position)
    return found, position + 1


def _list(text: str, position: int, depth: int) -> tuple[list[Any], int]:
    items: list[Any] = []
    position = _skip(text, position + 1)
    while position < len(text) and text[position] != "]":
        value, position = _value(text, position, depth)
        items.append(value)
        position = _skip(text, position)
        if position < len(text) and text[position] == ",":
            position = _skip(text, position + 1)
        elif position < len(text) and text[position] != "]":
            raise LiteralSyntaxError("',' or ']' was expected", position)
    if position >= len(text):
        raise LiteralSyntaxError("an unclosed list", position)
    return items, position + 1


def read_value(text: str, position: int = 0) -> tuple[Any, int]:
    """The value that starts at ``position`` (after spaces) and the offset just past its end.

    Raises:
        LiteralSyntaxError: No value of the accepted syntaxes starts there, or it is not closed.
        DuplicateKey: An object gives one key twice with different values.

    Examples:
        >>> read_value("{'verdict': True, reasoning: 'a\\nb',} and more")
        ({'verdict': True, 'reasoning': 'a\\nb'}, 36)
        >>> read_value('["pos"] ["neg"]')
        (['pos'], 7)
    """
    return _value(text, _skip(text, position), 0)


# ---------------------------------------------------------------------- copies of a field


_mention_patterns: dict[str, re.Pattern[str]] = {}


def mentions(text: str, name: str) -> int:
    """How many copies of the field ``name`` the text holds, in any syntax (see the module docstring).

    Examples:
        >>> mentions("{'verdict': True} {verdict: false} verdict = 1 \\"verdict\\": 2", "verdict")
        4
        >>> mentions("the verdicts, my_verdict: 3, [[ ## verdict ## ]]", "verdict")
        1
    """
    pattern = _mention_patterns.get(name)
    if pattern is None:
        quoted = re.escape(name)
        pattern = re.compile(
            rf"(?<![\w$\\])(?:\\?[\"'])?{quoted}(?:\\?[\"'])?\s*[:=]|\[\[ ## {quoted} ## \]\]"
        )
        if len(_mention_patterns) < 256:
            _mention_patterns[name] = pattern
    return len(pattern.findall(text))


# ---------------------------------------------------------------------- literal forms


def _shown(value: Any, limit: int = 80) -> str:
    text = repr(value) if not isinstance(value, str) else repr(value.strip())
    return text if len(text) <= limit else text[: limit - 4] + "...'"


def fold_label(text: str) -> str:
    """A label as compared when only letter case and spacing may differ.

    Examples:
        >>> fold_label("  Billing  Account ")
        'billing account'
    """
    return " ".join(text.split()).casefold()


def listed_label(text: str, allowed: Iterable[Any]) -> str | None:
    """The one listed label that ``text`` matches but for letter case and spacing, else ``None``.

    Examples:
        >>> listed_label("Billing", ["billing", "account"])
        'billing'
        >>> listed_label("a", ["A", "a "]) is None
        True
    """
    folded = fold_label(text)
    matches = [item for item in allowed if isinstance(item, str) and fold_label(item) == folded]
    return matches[0] if len(matches) == 1 else None


def unwrapped_text(value: str) -> str:
    """A Literal's value as DSPy reads it: stripped, without a ``Literal[...]`` wrapper or one pair of quotes.

    Examples:
        >>> unwrapped_text(" Literal['pos'] ")
        'pos'
    """
    text = value.strip()
    if text.startswith(("Literal[", "str[")) and text.endswith("]"):
        text = text[text.find("[") + 1 : -1]
    if len(text) > 1 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1]
    return text


def literal_value(value: Any, allowed: tuple[Any, ...], *, normalise: bool = False) -> Any:
    """``value`` as one of a Literal's ``allowed`` string values.

    The value is taken as DSPy takes it (exactly, or its text stripped, without one pair of
    quotes or a ``Literal[...]`` wrapper); with ``normalise``, a text that differs from
    exactly one allowed value only in letter case or spacing is that value, returned as a
    :class:`NormalisedLabel` that records what was written.

    Raises:
        FormError: ``'Billing' is not one of billing, account, technical``.
    """
    if value in allowed and (isinstance(value, str) or not isinstance(value, bool)):
        return value
    if isinstance(value, str):
        text = unwrapped_text(value)
        if text in allowed:
            return text
        if normalise:
            label = listed_label(text, allowed)
            if label is not None:
                return NormalisedLabel(label, value)
    raise FormError(f"{_shown(value)} is not one of {', '.join(str(item) for item in allowed)}")


def _list_problem(annotation: Any, value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    text = value.strip()
    items = get_args(annotation)
    of_text = bool(items) and items[0] is str
    try:
        _found, end = read_value(text)
    except DuplicateKey as exc:
        return f"the key {exc.key!r} appears twice with different values"
    except LiteralSyntaxError:
        return 'expected one list, like ["a", "b"]' if of_text else None
    if text[end:].strip():
        return "the field holds more than one value (a list is given once)"
    return None


def form_problem(annotation: Any, value: Any) -> str | None:
    """Why ``value`` (a field's text, or the value a JSON object gives it) is not written in
    the literal form of ``annotation``, or ``None`` when it is (or when the type has no strict
    form here: text, enums and models are read as DSPy reads them, except that a field's
    text holds one value only).

    Examples:
        >>> texts = ("7", "-3", "True", "1e1", "0x7", "7 # score", "7.0")
        >>> [form_problem(int, text) is None for text in texts]
        [True, True, False, False, False, False, False]
        >>> form_problem(float, True)
        'expected a number (like 0.8), got True'
    """
    if annotation is str or annotation is Any:
        return None
    origin = get_origin(annotation)
    if annotation is bool:
        if isinstance(value, bool) or (isinstance(value, str) and value.strip().lower() in ("true", "false")):
            return None
        return f"expected true or false, got {_shown(value)}"
    if annotation is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return None
        if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
            return None
        return f"expected an integer written as one (like 7), got {_shown(value)}"
    if annotation is float:
        number: Any = value
        if isinstance(value, str) and _DECIMAL.fullmatch(value.strip()):
            number = float(value)
        if isinstance(number, int | float) and not isinstance(number, bool) and math.isfinite(number):
            return None
        return f"expected a number (like 0.8), got {_shown(value)}"
    if origin in (list, tuple, set, frozenset):
        return _list_problem(annotation, value)
    if origin is Literal or origin in (Union, types.UnionType):
        return None
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        text = value.strip()
        try:
            _found, end = read_value(text)
        except DuplicateKey as exc:
            return f"the key {exc.key!r} appears twice with different values"
        except LiteralSyntaxError:
            return None
        if text[end:].strip():
            return "the field holds more than one value"
    return None
