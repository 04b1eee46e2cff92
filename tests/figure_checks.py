"""Checks every task's figures share: the data keys of their kind, strict JSON, and a real drawing."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from jurist.report.figures import Figure, figures_from_json, figures_to_json
from jurist.report.plots import NO_DATA, figure_svg


def _number_or_none(value: Any) -> bool:
    return value is None or (
        isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(float(value))
    )


def _numbers(values: Any, *, optional: bool = False) -> None:
    assert isinstance(values, Sequence) and not isinstance(values, str), values
    for value in values:
        assert _number_or_none(value) and (optional or value is not None), values


def _series(data: Mapping[str, Any], *keys: str) -> None:
    assert data["series"], data
    for series in data["series"]:
        assert isinstance(series["name"], str)
        lengths = {len(series[key]) for key in keys if key in series}
        assert len(lengths) == 1, series
        for key in keys:
            if key in series:
                _numbers(series[key], optional=key in ("low", "high"))


def check_data(figure: Figure) -> None:
    """The figure's data has the keys ``jurist.report.figures`` documents for its kind."""
    data = figure.data
    assert figure.title and figure.caption
    if figure.kind == "confusion":
        labels, matrix = data["labels"], data["matrix"]
        assert len(matrix) == len(labels) and all(len(row) == len(labels) for row in matrix)
        assert all(isinstance(cell, int) and cell >= 0 for row in matrix for cell in row)
    elif figure.kind == "roc":
        for curve in data["curves"]:
            assert len(curve["fpr"]) == len(curve["tpr"]) >= 2
            assert curve["fpr"][0] == curve["tpr"][0] == 0.0 and curve["fpr"][-1] == curve["tpr"][-1] == 1.0
            assert _number_or_none(curve["auc"])
    elif figure.kind == "reliability":
        assert data["bins"]
        for entry in data["bins"]:
            assert 0 <= entry["confidence"] <= 1 and 0 <= entry["accuracy"] <= 1 and entry["n"] > 0
    elif figure.kind == "histogram":
        for series in data["series"]:
            _numbers(series["values"])
    elif figure.kind == "bars":
        assert data["bars"]
        for bar in data["bars"]:
            assert (
                isinstance(bar["label"], str) and _number_or_none(bar["value"]) and bar["value"] is not None
            )
            assert ("low" in bar) == ("high" in bar)
            if "low" in bar:
                assert bar["low"] <= bar["value"] + 1e-9 and bar["value"] <= bar["high"] + 1e-9, bar
    elif figure.kind == "lines":
        _series(data, "x", "y", "low", "high")
    elif figure.kind == "scatter":
        _series(data, "x", "y")
    elif figure.kind == "gates":
        for gate in data["gates"]:
            assert {"name", "value", "threshold", "op", "passed"} <= set(gate)
            assert isinstance(gate["passed"], bool)


def check_figures(figures: Iterable[Figure]) -> list[Figure]:
    """Every figure: valid data, strict JSON that reads back the same, and an SVG drawing with data."""
    figures = list(figures)
    assert figures
    text = json.dumps(figures_to_json(figures), allow_nan=False)
    assert figures_from_json(json.loads(text)) == [Figure.from_json(f.to_json()) for f in figures]
    for figure in figures:
        check_data(figure)
        svg = figure_svg(figure)
        assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
        assert f">{NO_DATA}<" not in svg, figure.title
    return figures


def by_title(figures: Iterable[Figure]) -> dict[str, Figure]:
    """Figures by title (titles are unique within one task's figures)."""
    listed = list(figures)
    found = {figure.title: figure for figure in listed}
    assert len(found) == len(listed), [figure.title for figure in listed]
    return found
