"""Small Markdown building blocks shared by every report."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any


def fmt(value: Any, digits: int = 3) -> str:
    """A cell: ``n/a`` for missing values, fixed digits for floats, text otherwise."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if value != value:  # NaN
            return "n/a"
        return f"{value:.{digits}f}"
    return str(value)


def cell(text: Any, limit: int = 120) -> str:
    """Text made safe for one table cell: no pipes or line breaks, cut at ``limit`` characters."""
    value = fmt(text).replace("|", "\\|").replace("\r", " ").replace("\n", " ")
    return value if len(value) <= limit else value[: limit - 1] + "…"


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A GitHub-flavoured Markdown table."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines.extend("| " + " | ".join(cell(value) for value in row) + " |" for row in rows)
    return "\n".join(lines)


def _flat(prefix: str, value: Any, rows: list[tuple[str, Any]]) -> None:
    if isinstance(value, dict):
        for key, inner in value.items():
            _flat(f"{prefix}.{key}" if prefix else str(key), inner, rows)
    elif isinstance(value, list):
        shown = ", ".join(str(v) for v in value[:10])
        rows.append((prefix, shown + (f" (+{len(value) - 10} more)" if len(value) > 10 else "")))
    else:
        rows.append((prefix, value))


def summary_markdown(title: str, summary: dict[str, Any]) -> str:
    """A plain report of any summary: headline counts, then one table per section.

    Top-level scalars and lists form the first table; each nested mapping (``usage``,
    ``agreement``, ...) gets its own, with dotted names for deeper keys.
    """
    head: list[tuple[str, Any]] = []
    sections: list[str] = [f"# {title}"]
    for key, value in summary.items():
        if not isinstance(value, dict):
            _flat(key, value, head)
    sections.append(table(["figure", "value"], head))
    for key, value in summary.items():
        if isinstance(value, dict) and value:
            rows: list[tuple[str, Any]] = []
            _flat("", value, rows)
            sections.append(f"## {key}\n\n" + table(["figure", "value"], rows))
    return "\n\n".join(sections) + "\n"
