"""What a plot shows, as data: the figures a task asks for, drawn by any renderer.

A task's ``figures`` hook returns a list of :class:`Figure`. Each holds numbers only, already
computed by :mod:`jurist.metrics`; a renderer (the HTML report, ``jurist view``) draws it and
never computes a figure itself. ``figures.json`` in a run directory is this list as JSON.

The kinds and the keys of their ``data``:

``confusion``
    ``labels`` (list of str), ``matrix`` (rows are gold, columns the judge; counts),
    optional ``row_title`` / ``col_title``.
``roc``
    ``curves``: list of ``{"name", "fpr": [...], "tpr": [...], "auc": float | None}``.
``reliability``
    ``bins``: list of ``{"confidence", "accuracy", "n"}`` (mean confidence and observed
    accuracy of the items in a bin); optional ``ece``.
``histogram``
    ``series``: list of ``{"name", "values": [...]}``; optional ``bins`` (a count or the
    edges) and ``xlabel``. Several series are drawn side by side in each bin (or as
    outlines when the bins are many), never as translucent overlapping bars.
``bars``
    ``bars``: list of ``{"label", "value", "low"?, "high"?, "group"?}`` (``low``/``high``
    draw a confidence-interval whisker; bars of one ``group`` share a colour); optional
    ``ylabel`` and ``ylim``.
``lines``
    ``series``: list of ``{"name", "x": [...], "y": [...], "low"?: [...], "high"?: [...]}``;
    optional ``xlabel``, ``ylabel``, ``ylim``.
``scatter``
    ``series``: list of ``{"name", "x": [...], "y": [...]}``; optional ``xlabel``, ``ylabel``,
    and ``diagonal`` (``true``: draw the line y = x). Whole-number points that coincide
    (integer scores) are drawn as one disc per point sized by its count, or jittered.
``gates``
    ``gates``: list of ``{"name", "value", "threshold", "op", "passed"}`` (a pass/fail summary).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

__all__ = ["FIGURE_KINDS", "Figure", "FigureKind", "figures_from_json", "figures_to_json"]

FigureKind = Literal["confusion", "roc", "reliability", "histogram", "bars", "lines", "scatter", "gates"]
FIGURE_KINDS: tuple[str, ...] = get_args(FigureKind)


@dataclass(frozen=True)
class Figure:
    """One plot as data: its kind, title, the numbers it shows, and a caption saying how to read it."""

    kind: FigureKind
    title: str
    data: Mapping[str, Any] = field(default_factory=dict)
    caption: str = ""

    def __post_init__(self) -> None:
        if self.kind not in FIGURE_KINDS:
            raise ValueError(f"unknown figure kind {self.kind!r} (known: {', '.join(FIGURE_KINDS)})")

    def to_json(self) -> dict[str, Any]:
        """The figure as a JSON-ready mapping (``figures.json``)."""
        from jurist.report.jsonout import json_ready

        return {
            "kind": self.kind,
            "title": self.title,
            "caption": self.caption,
            "data": json_ready(self.data),
        }

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Figure:
        """The figure :meth:`to_json` wrote."""
        return cls(
            kind=value["kind"],
            title=str(value.get("title", "")),
            data=dict(value.get("data") or {}),
            caption=str(value.get("caption", "")),
        )


def figures_to_json(figures: Iterable[Figure]) -> list[dict[str, Any]]:
    """A list of figures as JSON-ready mappings."""
    return [figure.to_json() for figure in figures]


def figures_from_json(values: Iterable[Mapping[str, Any]]) -> list[Figure]:
    """The figures :func:`figures_to_json` wrote."""
    return [Figure.from_json(value) for value in values]
