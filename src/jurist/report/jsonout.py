"""Strict JSON for everything jurist prints or writes: ``null``, never ``NaN`` or ``Infinity``.

Python's :mod:`json` writes ``NaN`` for a float NaN by default, which is not JSON and which
most parsers (``jq``, JavaScript's ``JSON.parse``, Go, Rust) reject. Every ``--json``
output and every JSON file jurist writes goes through :func:`dumps`.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["dumps", "json_ready"]


_AS_THEY_ARE = frozenset({str, int, bool, type(None)})
"""The types of most leaves: strict JSON as they are (no call per leaf)."""


def json_ready(value: Any) -> Any:
    """``value`` with NaN/inf as ``None`` and numpy scalars as Python numbers (strict JSON)."""
    kind = type(value)
    if kind in _AS_THEY_ARE:
        return value
    if isinstance(value, dict):
        return {
            k if type(k) is str else str(k): v if type(v) in _AS_THEY_ARE else json_ready(v)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [v if type(v) in _AS_THEY_ARE else json_ready(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        try:
            value = value.item()
        except (ValueError, AttributeError):
            return value
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def dumps(value: Any, *, indent: int | None = 2, ensure_ascii: bool = True) -> str:
    """``value`` as strict JSON: NaN and infinities become ``null``, numpy scalars plain
    numbers, any other object its ``str``.

    Raises:
        ValueError: Never for NaN/inf (they are replaced); only for values JSON cannot hold
            even as text, which ``default=str`` rules out.
    """
    return json.dumps(
        json_ready(value), indent=indent, ensure_ascii=ensure_ascii, allow_nan=False, default=str
    )
