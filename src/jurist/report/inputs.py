"""The judged inputs of an item as the pages show them: each field's text, and one short line.

Pages show the text a judge judged (the question, answer, context...) before its prompt: the
HTML report's item rows and details, ``jurist view``'s item, run and labelling pages, and
``jurist show``. An input is a string, or any JSON value (a list of documents, keyed sentences).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from json.encoder import encode_basestring
from typing import Any

__all__ = ["input_text", "snippet"]


_FLAT = json.JSONEncoder(ensure_ascii=False, default=str)
"""``json.dumps(value, ensure_ascii=False, default=str)``, built once (not once per value)."""


def input_text(value: Any) -> str:
    """An input as text: a string as it is, any other value as its JSON (indented when nested)."""
    if isinstance(value, str):
        return value
    nested = isinstance(value, list | dict) and any(
        isinstance(v, list | dict) for v in (value.values() if isinstance(value, dict) else value)
    )
    if nested:
        text = _indented(value, 0)  # what json.dumps(..., indent=1) writes, without its encoder per call
        if text is not None:
            return text
        return json.dumps(value, ensure_ascii=False, default=str, indent=1)
    return _FLAT.encode(value)


def _indented(value: Any, level: int) -> str | None:
    """``value`` as ``json.dumps(value, ensure_ascii=False, indent=1)`` writes it at depth
    ``level``, for a value made only of what JSON text parses to (dicts with text keys, lists,
    text, numbers, booleans, ``None``); ``None`` for any other value."""
    kind = type(value)
    if kind is list:
        if not value:
            return "[]"
        parts = []
        for item in value:
            text = encode_basestring(item) if type(item) is str else _indented(item, level + 1)
            if text is None:
                return None
            parts.append(text)
    elif kind is dict:
        if not value:
            return "{}"
        parts = []
        for key, item in value.items():
            if type(key) is not str:
                return None
            text = encode_basestring(item) if type(item) is str else _indented(item, level + 1)
            if text is None:
                return None
            parts.append(f"{encode_basestring(key)}: {text}")
    else:
        return _scalar(value)
    inner = "\n" + " " * (level + 1)
    opening, closing = ("[", "]") if kind is list else ("{", "}")
    return opening + inner + ("," + inner).join(parts) + "\n" + " " * level + closing


def _scalar(value: Any) -> str | None:
    """A value that is not a list or dict as :func:`_indented` writes it."""
    kind = type(value)
    if kind is str:
        return encode_basestring(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        if math.isfinite(value):
            return float.__repr__(value)
        return "NaN" if value != value else "Infinity" if value > 0 else "-Infinity"
    return None


def snippet(inputs: Mapping[str, Any] | None, width: int = 160) -> str:
    """An item's inputs in one short line (``question: … · answer: …``), each field cut to its
    share of ``width`` characters, white space collapsed; ``""`` when they are not known."""
    if not inputs:
        return ""
    share = max(24, width // max(1, len(inputs)))
    return " · ".join(f"{name}: {_collapsed(input_text(value), share)}" for name, value in inputs.items())


def _collapsed(text: str, share: int) -> str:
    """``text`` with its white space collapsed (``" ".join(text.split())``), cut to ``share``
    characters (the last an ellipsis) when longer, collapsing no more of a long text than the
    cut needs: the collapsed start of a text is the start of the collapsed text."""
    size = 2 * share + 16
    while True:
        words = " ".join(text[:size].split())
        if len(words) > share:
            return words[: share - 1] + "…"
        if size >= len(text):
            return words
        size *= 4
