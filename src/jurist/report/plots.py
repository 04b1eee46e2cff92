"""Figures drawn as inline SVG: :func:`figure_svg` draws every kind of :class:`~jurist.report.figures.Figure`.

The SVG is made for pasting into an HTML page that must open from disk with no network:

- drawn with matplotlib's SVG backend (no display, no pyplot state), text kept as
  ``<text>`` (``svg.fonttype: none``) so it is searchable, selectable and small, and never
  parsed as TeX (judged labels may hold ``$``);
- no XML prolog, DOCTYPE or metadata, so it can sit inside ``<figure>``;
- every ``id`` (and each ``url(#...)`` / ``href="#..."`` that refers to one) carries a
  prefix, so several figures in one page never share a clip path or marker;
- deterministic: the same figure gives the same text (a fixed hash salt, no date), drawn
  from matplotlib's default settings and jurist's own (:data:`_RC`), never a matplotlibrc
  file or settings a program changed, so the text depends only on the figure, this module
  and the versions of matplotlib and NumPy (what the figure cache's key holds,
  :mod:`jurist.report.svg_cache`).

:func:`figure_svg` is :func:`drawn_svgs` (the drawings, which the figure cache keeps) given
its ids and label by :func:`scoped_svg`.

A figure whose data is empty, missing or not numbers is drawn as its title and a short
"no data" note instead of raising: a report of a run with nothing to plot still renders.
matplotlib is imported on the first call only, so importing this module costs nothing.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from html import escape
from typing import TYPE_CHECKING, Any

from jurist.report.figures import Figure

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure as Canvas

__all__ = ["FAIL_COLOUR", "NO_DATA", "PALETTE", "PASS_COLOUR", "drawn_svgs", "figure_svg", "scoped_svg"]

PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#8C6D31", "#000000")
"""Series colours in order (Okabe and Ito's colour-blind-safe palette)."""

PASS_COLOUR = "#1a7f37"
FAIL_COLOUR = "#cf222e"
NO_DATA = "no data"
"""The note drawn in place of a figure that has nothing to show."""

_WIDTH = 6.4
_HEIGHT = 3.9
_RC: dict[Any, Any] = {
    "svg.fonttype": "none",
    "svg.hashsalt": "jurist",
    "text.parse_math": False,
    "font.family": "sans-serif",
    "font.size": 9.0,
    "axes.titlesize": 11.0,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.fontsize": 8.0,
    "legend.frameon": False,
}


# ---------------------------------------------------------------------- values


def _number(value: Any) -> float | None:
    """``value`` as a finite float, or ``None`` (missing, NaN, infinite, not a number)."""
    if value is None or isinstance(value, bool | str):
        return float(value) if isinstance(value, bool) else None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _numbers(values: Any) -> list[float | None]:
    if not isinstance(values, Sequence) or isinstance(values, str | bytes):
        return []
    return [_number(value) for value in values]


def _entries(data: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    """The list of mappings under ``key`` (series, curves, bars, bins, gates); others are skipped."""
    found = data.get(key)
    if not isinstance(found, Sequence) or isinstance(found, str | bytes):
        return []
    return [entry for entry in found if isinstance(entry, Mapping)]


def _text(value: Any, default: str = "") -> str:
    return default if value is None else str(value)


def _label(value: Any, limit: int = 28) -> str:
    """A tick label or legend entry, cut to ``limit`` characters so it cannot crowd out the plot."""
    text = _text(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3f}" if abs(value) < 1000 else f"{value:,.0f}"


# ---------------------------------------------------------------------- drawers


def _axes(canvas: Canvas) -> Axes:
    axes = canvas.add_subplot()
    axes.grid(True, color="#e5e7eb", linewidth=0.6)
    axes.set_axisbelow(True)
    return axes


def _legend(axes: Axes) -> None:
    handles, labels = axes.get_legend_handles_labels()
    if any(label and not label.startswith("_") for label in labels):
        axes.legend(loc="best")


def _confusion(canvas: Canvas, data: Mapping[str, Any]) -> bool:
    rows = data.get("matrix")
    if not isinstance(rows, Sequence) or not rows:
        return False
    matrix = [[_number(value) or 0.0 for value in _numbers(row)] for row in rows]
    width = max((len(row) for row in matrix), default=0)
    if width == 0:
        return False
    matrix = [row + [0.0] * (width - len(row)) for row in matrix]
    labels = [_label(label) for label in data.get("labels") or []]
    row_labels = labels if len(labels) == len(matrix) else [str(i) for i in range(len(matrix))]
    col_labels = labels if len(labels) == width else [str(i) for i in range(width)]
    size = max(len(matrix), width)
    if size > 8:  # a large matrix needs room; a small one takes the size of every other figure
        side = min(7.5, 0.3 * size + 2.4)
        canvas.set_size_inches(side + 0.8, side)
    axes = canvas.add_subplot()
    image = axes.imshow(matrix, cmap="Blues", vmin=0, aspect="auto")
    top = max((max(row) for row in matrix), default=0.0) or 1.0
    font = 8.0 if size <= 12 else 6.0
    for i, row in enumerate(matrix):
        for j, value in enumerate(row):
            if value == 0 and size > 8:
                continue  # a large matrix reads better with its empty cells blank
            shown = f"{value:g}" if value == int(value) else f"{value:.2f}"
            colour = "white" if value > top / 2 else "#1f2328"
            axes.text(j, i, shown, ha="center", va="center", color=colour, fontsize=font)
    turned = width > 4 and max((len(label) for label in col_labels), default=0) > 3
    axes.set_xticks(
        range(width), col_labels, rotation=45 if turned else 0, ha="right" if turned else "center"
    )
    axes.set_yticks(range(len(matrix)), row_labels)
    axes.set_xlabel(_text(data.get("col_title"), "judge"))
    axes.set_ylabel(_text(data.get("row_title"), "gold"))
    for spine in axes.spines.values():
        spine.set_visible(False)
    canvas.colorbar(image, ax=axes, fraction=0.046, pad=0.04, label="items")
    return True


def _roc(canvas: Canvas, data: Mapping[str, Any]) -> bool:
    axes = _axes(canvas)
    drew = False
    for index, curve in enumerate(_entries(data, "curves")):
        points = [
            (x, y)
            for x, y in zip(_numbers(curve.get("fpr")), _numbers(curve.get("tpr")), strict=False)
            if x is not None and y is not None
        ]
        if len(points) < 2:
            continue
        auc = _number(curve.get("auc"))
        name = _text(curve.get("name"), f"curve {index + 1}")
        label = f"{name} (AUC {_short(auc)})"
        axes.plot(*zip(*points, strict=True), color=PALETTE[index % len(PALETTE)], linewidth=1.6, label=label)
        drew = True
    if not drew:
        return False
    axes.plot([0, 1], [0, 1], linestyle="--", color="#8c959f", linewidth=1.0, label="chance (AUC 0.5)")
    axes.set_xlim(0, 1)
    axes.set_ylim(0, 1.02)
    axes.set_xlabel("false positive rate")
    axes.set_ylabel("true positive rate")
    axes.legend(loc="lower right")
    return True


def _reliability(canvas: Canvas, data: Mapping[str, Any]) -> bool:
    points = []
    for entry in _entries(data, "bins"):
        confidence, accuracy, count = (_number(entry.get(k)) for k in ("confidence", "accuracy", "n"))
        if confidence is not None and accuracy is not None and (count is None or count > 0):
            points.append((confidence, accuracy, count))
    if not points:
        return False
    axes = _axes(canvas)
    axes.plot([0, 1], [0, 1], linestyle="--", color="#8c959f", linewidth=1.0, label="perfect calibration")
    ece = _number(data.get("ece"))
    label = "judge" + (f" (ECE {_short(ece)})" if ece is not None else "")
    xs, ys, counts = zip(*sorted(points), strict=True)
    axes.plot(xs, ys, marker="o", color=PALETTE[0], linewidth=1.6, label=label)
    for x, y, count in zip(xs, ys, counts, strict=True):
        if count is not None:
            axes.annotate(
                f"n={count:g}", (x, y), textcoords="offset points", xytext=(0, 7), ha="center", fontsize=7
            )
    axes.set_xlim(0, 1)
    axes.set_ylim(0, 1.08)
    axes.set_xlabel("mean confidence")
    axes.set_ylabel("observed accuracy")
    axes.legend(loc="upper left")
    return True


def _bin_edges(values: list[float], bins: Any) -> Any:
    import numpy as np

    edges = _numbers(bins)
    if edges and all(edge is not None for edge in edges) and len(edges) >= 2:
        return sorted(edge for edge in edges if edge is not None)
    count = _number(bins)
    if count is not None and count >= 1:
        return int(min(count, 100))
    low, high = min(values), max(values)
    if all(value == int(value) for value in values) and high - low <= 40:
        return np.arange(low - 0.5, high + 1.5)  # one bar per whole number (scores, counts)
    found = np.histogram_bin_edges(values, bins="auto")
    return found if len(found) <= 51 else 50


def _histogram(canvas: Canvas, data: Mapping[str, Any]) -> bool:
    """One series as filled bars; several side by side in each bin (whole-number or few bins)
    or as outlines (many bins), so no colour is a blend of two series'."""
    import numpy as np

    series = []
    for entry in _entries(data, "series"):
        values = [value for value in _numbers(entry.get("values")) if value is not None]
        if values:
            series.append((_text(entry.get("name")), values))
    if not series:
        return False
    axes = _axes(canvas)
    axes.grid(False, axis="x")
    found = _bin_edges([value for _, values in series for value in values], data.get("bins"))
    edges = np.asarray(
        found
        if not isinstance(found, int)
        else np.histogram_bin_edges([v for _, vs in series for v in vs], found),
        dtype=float,
    )
    several = len(series) > 1
    side_by_side = several and len(edges) - 1 <= 25
    widths = np.diff(edges)
    for index, (name, values) in enumerate(series):
        counts, _ = np.histogram(values, bins=edges)
        colour = PALETTE[index % len(PALETTE)]
        label = name or (f"series {index + 1}" if several else None)
        if side_by_side:
            share = 0.84 / len(series)
            lefts = edges[:-1] + widths * (0.08 + share * index)
            axes.bar(
                lefts, counts, width=widths * share, align="edge", color=colour, label=label, linewidth=0
            )
        elif several:
            axes.stairs(counts, edges, color=colour, linewidth=1.8, label=label)
        else:
            axes.bar(
                edges[:-1], counts, width=widths, align="edge", color=colour, edgecolor="white", linewidth=0.5
            )
    if all(float(edge + 0.5).is_integer() for edge in edges) and len(edges) <= 41:
        axes.set_xticks([edge + 0.5 for edge in edges[:-1]])  # whole-number bins: tick the numbers
        axes.xaxis.set_major_formatter("{x:g}")
    axes.set_xlabel(_text(data.get("xlabel"), "value"))
    axes.set_ylabel("items")
    from matplotlib.ticker import MaxNLocator

    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    _legend(axes)
    return True


def _limits(axes: Axes, data: Mapping[str, Any], *, headroom: float = 0.0) -> None:
    """The figure's ``ylim``, with ``headroom`` (a share of the range) above it for labels."""
    limits = _numbers(data.get("ylim"))
    if len(limits) == 2 and limits[0] is not None and limits[1] is not None:
        low, high = limits[0], limits[1]
        axes.set_ylim(low, high + headroom * (high - low))
    elif headroom:
        low, high = axes.get_ylim()
        axes.set_ylim(low, high + headroom * (high - low))


def _bars(canvas: Canvas, data: Mapping[str, Any]) -> bool:
    bars = _entries(data, "bars")
    if not bars:
        return False
    groups = list(dict.fromkeys(_text(bar.get("group")) for bar in bars))
    colour = {group: PALETTE[index % len(PALETTE)] for index, group in enumerate(groups)}
    if len(bars) > 10:
        canvas.set_size_inches(min(14.0, 0.45 * len(bars) + 2.0), _HEIGHT)
    axes = _axes(canvas)
    axes.grid(False, axis="x")
    seen: set[str] = set()
    for position, bar in enumerate(bars):
        value = _number(bar.get("value"))
        group = _text(bar.get("group"))
        label = group if len(groups) > 1 and group not in seen else None
        seen.add(group)
        if value is None:
            axes.bar(position, 0, color=colour[group], label=label)
            axes.annotate(
                "n/a", (position, 0), textcoords="offset points", xytext=(0, 3), ha="center", fontsize=7
            )
            continue
        low, high = _number(bar.get("low")), _number(bar.get("high"))
        error = None
        if low is not None and high is not None:
            error = [[max(0.0, value - low)], [max(0.0, high - value)]]
        axes.bar(position, value, color=colour[group], yerr=error, capsize=4, ecolor="#1f2328", label=label)
        top = high if high is not None and error is not None else value
        axes.annotate(
            _short(value),
            (position, max(top, 0.0)),
            textcoords="offset points",
            xytext=(0, 3),
            ha="center",
            fontsize=7,
        )
    labels = [_label(bar.get("label")) for bar in bars]
    crowded = len(bars) > 4 or max((len(label) for label in labels), default=0) > 12
    axes.set_xticks(
        range(len(bars)), labels, rotation=30 if crowded else 0, ha="right" if crowded else "center"
    )
    if data.get("ylabel"):
        axes.set_ylabel(str(data["ylabel"]))
    _limits(axes, data, headroom=0.08)  # room for the value labels above the bars
    _legend(axes)
    return True


def _positions(values: Any) -> tuple[list[float | None], list[str] | None]:
    """Numeric x values, or positions 0, 1, ... and their labels when x holds text."""
    raw = list(values) if isinstance(values, Sequence) and not isinstance(values, str | bytes) else []
    numbers = _numbers(raw)
    if all(number is not None for number in numbers) or all(
        isinstance(v, int | float) or v is None for v in raw
    ):
        return numbers, None
    return [float(i) for i in range(len(raw))], [_text(value) for value in raw]


def _lines(canvas: Canvas, data: Mapping[str, Any]) -> bool:
    axes = _axes(canvas)
    drew = False
    ticks: list[str] | None = None
    for index, entry in enumerate(_entries(data, "series")):
        xs, labels = _positions(entry.get("x"))
        ticks = labels or ticks
        ys, lows, highs = (_numbers(entry.get(key)) for key in ("y", "low", "high"))
        points = [(x, y) for x, y in zip(xs, ys, strict=False) if x is not None and y is not None]
        if not points:
            continue
        colour = PALETTE[index % len(PALETTE)]
        axes.plot(
            *zip(*points, strict=True),
            marker="o",
            markersize=3.5,
            color=colour,
            linewidth=1.6,
            label=_text(entry.get("name")) or None,
        )
        band = [
            (x, low, high)
            for x, low, high in zip(xs, lows, highs, strict=False)
            if x is not None and low is not None and high is not None
        ]
        if len(band) >= 2:
            bx, blow, bhigh = zip(*band, strict=True)
            axes.fill_between(bx, blow, bhigh, color=colour, alpha=0.18, linewidth=0)
        elif len(band) == 1:
            ((x, low, high),) = band
            axes.errorbar([x], [(low + high) / 2], yerr=[[(high - low) / 2]], color=colour, capsize=3)
        drew = True
    if not drew:
        return False
    if ticks:
        axes.set_xticks(range(len(ticks)), ticks)
    axes.set_xlabel(_text(data.get("xlabel")))
    axes.set_ylabel(_text(data.get("ylabel")))
    _limits(axes, data)
    _legend(axes)
    return True


def _on_grid(values: Sequence[float]) -> bool:
    """Whole numbers with few distinct values (scores, counts): points on them pile up."""
    return all(float(value).is_integer() for value in values) and len(set(values)) <= 20


def _scatter(canvas: Canvas, data: Mapping[str, Any]) -> bool:
    """Points; points on a grid of whole numbers (integer scores) that would pile up on each
    other are drawn as one disc per grid point, sized and labelled by its count (one series),
    or jittered (several). With ``diagonal``, the line y = x."""
    import numpy as np

    axes = _axes(canvas)
    entries = []
    for entry in _entries(data, "series"):
        points = [
            (x, y)
            for x, y in zip(_numbers(entry.get("x")), _numbers(entry.get("y")), strict=False)
            if x is not None and y is not None
        ]
        if points:
            entries.append((_text(entry.get("name")) or None, points))
    if not entries:
        return False
    every = [point for _, points in entries for point in points]
    xs_all, ys_all = [x for x, _ in every], [y for _, y in every]
    gridded = _on_grid(xs_all) and _on_grid(ys_all) and len(set(every)) < len(every)
    rng = np.random.default_rng(0)
    for index, (name, points) in enumerate(entries):
        colour = PALETTE[index % len(PALETTE)]
        if gridded and len(entries) == 1:
            counts: dict[tuple[float, float], int] = {}
            for point in points:
                counts[point] = counts.get(point, 0) + 1
            top = max(counts.values())
            cells = sorted(counts.items())
            sizes = [40 + 560 * count / top for _, count in cells]
            axes.scatter(
                [x for (x, _), _ in cells],
                [y for (_, y), _ in cells],
                s=sizes,
                color=colour,
                alpha=0.85,
                linewidths=0,
            )
            for (x, y), count in cells:
                dark = 40 + 560 * count / top > 160
                axes.annotate(
                    str(count),
                    (x, y),
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="white" if dark else "#1f2328",
                )
        else:
            xs, ys = zip(*points, strict=True)
            if gridded:
                xs = tuple(np.asarray(xs) + rng.uniform(-0.18, 0.18, len(xs)))
                ys = tuple(np.asarray(ys) + rng.uniform(-0.18, 0.18, len(ys)))
            axes.scatter(xs, ys, s=16, alpha=0.7, color=colour, label=name, linewidths=0)
    if gridded:
        for axis, values in ((axes.xaxis, xs_all), (axes.yaxis, ys_all)):
            first, last = int(min(values)), int(max(values))
            if last - first <= 20:
                axis.set_ticks(range(first, last + 1))
    if data.get("diagonal"):
        low = min(min(xs_all), min(ys_all))
        high = max(max(xs_all), max(ys_all))
        pad = 0.5 if gridded else 0.0
        axes.plot(
            [low - pad, high + pad],
            [low - pad, high + pad],
            linestyle="--",
            color="#8c959f",
            linewidth=1.0,
            label="y = x",
        )
    if gridded:
        axes.margins(0.12)
    axes.set_xlabel(_text(data.get("xlabel")))
    axes.set_ylabel(_text(data.get("ylabel")))
    _legend(axes)
    return True


def _gates(canvas: Canvas, data: Mapping[str, Any]) -> bool:
    gates = _entries(data, "gates")
    if not gates:
        return False
    canvas.set_size_inches(_WIDTH, max(1.8, 0.42 * len(gates) + 1.2))
    axes = _axes(canvas)
    axes.grid(False, axis="y")
    values = [_number(gate.get("value")) for gate in gates]
    thresholds = [_number(gate.get("threshold")) for gate in gates]
    known = [v for v in values + thresholds if v is not None]
    span = max((abs(v) for v in known), default=1.0) or 1.0
    for row, (gate, value, threshold) in enumerate(zip(gates, values, thresholds, strict=True)):
        passed = bool(gate.get("passed"))
        colour = PASS_COLOUR if passed else FAIL_COLOUR
        if value is not None:
            axes.barh(row, value, color=colour, height=0.6)
        if threshold is not None:
            axes.plot([threshold, threshold], [row - 0.42, row + 0.42], color="#1f2328", linewidth=2)
        verdict = "PASS" if passed else "FAIL"
        op = _text(gate.get("op"))
        note = f"{verdict}  {_short(value)} {op} {_short(threshold)}".replace("  ", " ", 1)
        axes.annotate(
            note,
            (max(value or 0.0, threshold or 0.0, 0.0), row),
            textcoords="offset points",
            xytext=(6, 0),
            va="center",
            fontsize=8,
            color=colour,
            fontweight="bold",
        )
    axes.set_yticks(range(len(gates)), [_label(gate.get("name")) for gate in gates])
    axes.invert_yaxis()
    low = min(0.0, *(v for v in known)) if known else 0.0
    axes.set_xlim(low * 1.1, span * 1.45)
    axes.set_xlabel("value (black tick: threshold)")
    return True


_DRAWERS: dict[str, Callable[[Canvas, Mapping[str, Any]], bool]] = {
    "confusion": _confusion,
    "roc": _roc,
    "reliability": _reliability,
    "histogram": _histogram,
    "bars": _bars,
    "lines": _lines,
    "scatter": _scatter,
    "gates": _gates,
}


# ---------------------------------------------------------------------- SVG text

_PROLOG = re.compile(r"^.*?(?=<svg[\s>])", re.S)
_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.S)
_ID = re.compile(r'\bid="([^"]+)"')
_REFERENCE = re.compile(r'(url\(#|href="#)([^)"]+)')


def scoped_svg(svg: str, figure: Figure, *, id_prefix: str | None = None) -> str:
    """A drawing of :func:`drawn_svgs` as the page holds it: every id prefixed with ``id_prefix``
    (default: one derived from the figure's content), labelled for screen readers with the
    figure's title."""
    prefix = id_prefix if id_prefix is not None else _default_prefix(figure)
    svg = _ID.sub(lambda m: f'id="{prefix}{m.group(1)}"', svg)
    svg = _REFERENCE.sub(lambda m: f"{m.group(1)}{prefix}{m.group(2)}", svg)
    label = escape(figure.title or "figure", quote=True)
    return svg.replace("<svg ", f'<svg class="jurist-figure" role="img" aria-label="{label}" ', 1)


def _default_prefix(figure: Figure) -> str:
    text = json.dumps(figure.to_json(), sort_keys=True, default=str)
    return "f" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:10] + "-"


def figure_svg(figure: Figure, *, id_prefix: str | None = None) -> str:
    """Draw ``figure`` as one inline ``<svg>`` element (no XML prolog), its title as text.

    Args:
        figure: Any figure kind; data that is empty or not numbers draws a "no data" note.
        id_prefix: Put before every id in the SVG; give each figure of a page its own
            (default: one derived from the figure's content, so different figures differ).

    Returns:
        The ``<svg>`` element's text, with ``class="jurist-figure"``, ``role="img"`` and an
        ``aria-label`` of the title.
    """
    return scoped_svg(drawn_svgs([figure])[0], figure, id_prefix=id_prefix)


def drawn_svgs(figures: Sequence[Figure]) -> list[str]:
    """Each figure drawn with matplotlib: the ``<svg>`` element alone (no XML prolog, DOCTYPE
    or metadata), its ids as matplotlib gives them. Its text depends only on the figure's
    kind, title and data, this module's code and the versions of matplotlib and NumPy."""
    import matplotlib
    from cycler import cycler

    settings: dict[Any, Any] = {**_RC, "axes.prop_cycle": cycler(color=list(PALETTE))}
    with matplotlib.rc_context():
        matplotlib.rcdefaults()  # no matplotlibrc file and no setting a program made applies
        matplotlib.rcParams.update(settings)
        return [_drawn(figure) for figure in figures]


def _drawn(figure: Figure) -> str:
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure as MatplotlibFigure

    canvas = MatplotlibFigure(figsize=(_WIDTH, _HEIGHT), layout="constrained")
    FigureCanvasSVG(canvas)
    drawer = _DRAWERS.get(figure.kind)
    try:
        data = figure.data if isinstance(figure.data, Mapping) else {}
        drew = drawer(canvas, data) if drawer is not None else False
    except (TypeError, ValueError, KeyError, IndexError):
        drew = False  # malformed data: shown as "no data", never a failed report
    if not drew:
        canvas = MatplotlibFigure(figsize=(_WIDTH, 1.3), layout="constrained")
        FigureCanvasSVG(canvas)
        axes = canvas.add_subplot()
        axes.set_axis_off()
        axes.text(0.5, 0.4, NO_DATA, ha="center", va="center", color="#57606a", fontsize=10)
    title = textwrap.fill(figure.title, 80) if figure.title else ""
    if title:
        canvas.axes[0].set_title(title, loc="left")
    buffer = io.StringIO()
    canvas.savefig(buffer, format="svg", metadata={"Date": None})
    return _METADATA.sub("", _PROLOG.sub("", buffer.getvalue(), count=1), count=1).strip()
