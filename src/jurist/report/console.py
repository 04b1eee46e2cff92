"""What the console shows of a scored run: the headline figures and a compact table of the rest.

A task names its **headline** (:meth:`jurist.Task.headline`): the one to three figures a
person reads first (a score task's QWK and MAE, a label task's accuracy and κ), each a
:class:`Headline` with its interval. ``jurist judge`` prints them on one line
(:func:`headline_line`); ``jurist score`` prints :func:`compact_table`: the headline first,
then every other figure of the summary, a value and its interval in one cell, readable
names, and no row for a figure that has no value.

Intervals are shown as they are computed, rounded to the digits shown: float noise such as
``-2e-17`` reads as ``0.000``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Headline", "compact_table", "figure_name", "headline_line", "number", "with_interval"]

NAMES = {
    "qwk": "QWK",
    "mae": "MAE",
    "rmse": "RMSE",
    "auroc": "AUROC",
    "kappa": "κ",
    "f1": "F1",
    "macro_f1": "macro F1",
    "micro_f1": "micro F1",
    "kendall_tau": "Kendall τ",
    "within_1": "within 1",
    "exact_agreement": "exact agreement",
    "exact_match": "exact match",
    "pearson": "Pearson r",
    "spearman": "Spearman ρ",
    "hallucination_auroc": "hallucination AUROC",
    "ok": "scored",
    "cache_hits": "cache hits",
    "prompt_tokens": "prompt tokens",
    "completion_tokens": "completion tokens",
    "judge_fingerprint": "judge fingerprint",
}
"""Readable names of figures whose summary key is an abbreviation or a code name."""


def figure_name(key: str) -> str:
    """The name a person reads for a summary key (``qwk`` -> ``QWK``, ``mean_gold`` -> ``mean gold``)."""
    return NAMES.get(key, key.replace("_", " "))


def number(value: Any, digits: int = 3) -> str:
    """A figure as shown: fixed ``digits``, no negative zero (``-2e-17`` -> ``0.000``), ``n/a``
    for a missing value, integers as integers."""
    if value is None or isinstance(value, bool):
        return "n/a" if value is None else ("yes" if value else "no")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return "n/a"
        shown = f"{round(value, digits) + 0.0:.{digits}f}"
        return shown[1:] if shown.startswith("-") and float(shown) == 0 else shown
    return str(value)


def with_interval(value: Any, low: Any = None, high: Any = None, digits: int = 3) -> str:
    """``0.893 [0.800, 0.946]``, or the value alone when the interval is not known."""
    shown = number(value, digits)
    if _known(low) and _known(high) and shown != "n/a":
        return f"{shown} [{number(low, digits)}, {number(high, digits)}]"
    return shown


@dataclass(frozen=True)
class Headline:
    """One headline figure: its readable name, value and interval (``None`` when not known).

    Attributes:
        name: What a person reads (``QWK``, ``accuracy``).
        value: The figure (``None``: not defined, e.g. no scored item).
        low, high: Its interval, when it has one.
        key: The summary key it was read from (``qwk``), for :func:`compact_table` to
            leave out of the other rows.
    """

    name: str
    value: float | None
    low: float | None = None
    high: float | None = None
    key: str = ""

    @classmethod
    def of(cls, figures: Mapping[str, Any], key: str, name: str | None = None) -> Headline | None:
        """The figure ``key`` of ``figures`` with its ``key_low`` / ``key_high``, or ``None``
        when ``figures`` has no such key."""
        if key not in figures or isinstance(figures[key], Mapping | list):
            return None
        return cls(
            name or figure_name(key),
            _float(figures.get(key)),
            _float(figures.get(f"{key}_low")),
            _float(figures.get(f"{key}_high")),
            key,
        )

    def text(self, digits: int = 3) -> str:
        """``QWK 0.893 [0.800, 0.946]``."""
        return f"{self.name} {with_interval(self.value, self.low, self.high, digits)}"


def headline_line(headline: Sequence[Headline], label: str = "agreement with gold") -> str | None:
    """``agreement with gold: QWK 0.893 [0.800, 0.946] · MAE 0.438 [0.188, 0.688]`` (the
    figures that have a value), or ``None`` when none has."""
    known = [figure for figure in headline if figure.value is not None]
    if not known:
        return None
    return f"{label}: " + " · ".join(figure.text() for figure in known)


def compact_table(
    title: str, summary: Mapping[str, Any], headline: Sequence[Headline] = (), label: str = "headline"
) -> str:
    """A plain-text table of a summary for the console: the headline first, then each figure
    (a section per nested mapping), a value and its interval in one cell.

    Figures without a value (``None``, NaN, an empty list or mapping) get no row; a key
    ``name`` with ``name_low`` and ``name_high`` beside it is one row.
    """
    rows: list[tuple[str, str]] = []
    for figure in headline:
        rows.append((figure.name, with_interval(figure.value, figure.low, figure.high)))
    shown = {figure.key for figure in headline if figure.key}
    top = [(key, value) for key, value in summary.items() if not isinstance(value, Mapping)]
    body = list(_rows(dict(top), indent="", skip=shown))
    sections: list[tuple[str, list[tuple[str, str]]]] = []
    for key, value in summary.items():
        if isinstance(value, Mapping):
            found = list(_rows(value, indent="  ", skip=shown))
            if found:
                sections.append((figure_name(str(key)), found))
    width = max([len(name) for name, _ in [*rows, *body]] + [len(n) for _, s in sections for n, _ in s] + [8])
    lines = [title]
    if rows:
        lines += [f"{label}:"] + [f"  {name.ljust(width)}  {value}" for name, value in rows]
    lines += [f"{name.ljust(width + 2)}  {value}" for name, value in body]
    for section, found in sections:
        lines.append(f"{section}:")
        lines += [f"{name.ljust(width + 2)}  {value}" for name, value in found]
    return "\n".join(lines)


def _rows(figures: Mapping[str, Any], indent: str, skip: set[str]) -> Iterable[tuple[str, str]]:
    for key, value in figures.items():
        key = str(key)
        if key.endswith(("_low", "_high")) and key.rpartition("_")[0] in figures:
            continue
        if key in skip:
            continue
        if isinstance(value, Mapping):
            inner = list(_rows(value, indent + "  ", skip=skip))
            if inner:
                yield f"{indent}{figure_name(key)}", ""
                yield from inner
            continue
        if not _has_value(value):
            continue
        if isinstance(value, list):
            shown = ", ".join(str(v) for v in value[:10]) + (
                f" (+{len(value) - 10} more)" if len(value) > 10 else ""
            )
            yield f"{indent}{figure_name(key)}", shown
            continue
        yield (
            f"{indent}{figure_name(key)}",
            with_interval(value, figures.get(f"{key}_low"), figures.get(f"{key}_high")),
        )


def _has_value(value: Any) -> bool:
    if value is None or value == "":
        return False
    if isinstance(value, float) and not math.isfinite(value):
        return False
    return not (isinstance(value, list | tuple | Mapping) and not value)


def _known(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _float(value: Any) -> float | None:
    return float(value) if _known(value) else None
