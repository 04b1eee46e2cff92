"""The judged inputs of an item as the pages show them: each field's text, and one short line.

Pages show the text a judge judged (the question, answer, context...) before its prompt: the
HTML report's item rows and details, ``jurist view``'s item, run and labelling pages, and
``jurist show``. An input is a string, or any JSON value (a list of documents, keyed sentences).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["input_text", "snippet"]


def input_text(value: Any) -> str:
    """An input as text: a string as it is, any other value as its JSON (indented when nested)."""
    if isinstance(value, str):
        return value
    nested = isinstance(value, list | dict) and any(isinstance(v, list | dict) for v in _children(value))
    return json.dumps(value, ensure_ascii=False, default=str, indent=1 if nested else None)


def _children(value: Any) -> list[Any]:
    return list(value.values()) if isinstance(value, dict) else list(value)


def snippet(inputs: Mapping[str, Any] | None, width: int = 160) -> str:
    """An item's inputs in one short line (``question: … · answer: …``), each field cut to its
    share of ``width`` characters, white space collapsed; ``""`` when they are not known."""
    if not inputs:
        return ""
    share = max(24, width // max(1, len(inputs)))
    parts = []
    for name, value in inputs.items():
        text = " ".join(input_text(value).split())
        parts.append(f"{name}: {text if len(text) <= share else text[: share - 1] + '…'}")
    return " · ".join(parts)
