"""Plots drawn the way an analyst would: histograms whose series never blend, integer scores
that do not pile on one point, axes fitted to the data, panels of one size, numbers in the
captions."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from jurist.report.figures import Figure
from jurist.report.plots import PALETTE, figure_svg

SVG = "{http://www.w3.org/2000/svg}"


def _texts(svg: str) -> list[str]:
    return ["".join(node.itertext()) for node in ET.fromstring(svg).iter(f"{SVG}text")]


def _fills(svg: str) -> dict[str, int]:
    """How many shapes are filled with each palette colour."""
    found = re.findall(r'style="fill: (#[0-9a-f]{6})"', svg)
    return {colour: found.count(colour) for colour in (c.lower() for c in PALETTE[:2])}


def test_two_histogram_series_stand_side_by_side_never_blended():
    figure = Figure(
        "histogram",
        "Scores: judge and gold",
        {
            "series": [{"name": "judge", "values": [1, 2, 2, 4]}, {"name": "gold", "values": [1, 1, 2, 5]}],
            "bins": [0.5, 1.5, 2.5, 3.5, 4.5, 5.5],
        },
    )
    svg = figure_svg(figure)
    assert "opacity" not in svg  # no translucent bar whose blend matches no legend colour
    # A bar per bin and series (five bins, the legend's swatch besides), each in its own colour.
    assert _fills(svg) == {PALETTE[0].lower(): 6, PALETTE[1].lower(): 6}
    assert {"1", "2", "3", "4", "5"} <= set(_texts(svg))  # whole-number bins ticked at the numbers


def test_many_bins_draw_several_series_as_outlines():
    values = [index / 7 for index in range(70)]
    figure = Figure(
        "histogram",
        "Confidence",
        {"series": [{"name": "a", "values": values}, {"name": "b", "values": values[::2]}], "bins": 40},
    )
    svg = figure_svg(figure)
    assert "opacity" not in svg
    outlines = re.findall(r'style="fill: none; stroke: (#[0-9a-f]{6}); stroke-width: 1\.8', svg)
    assert set(outlines) >= {PALETTE[0].lower(), PALETTE[1].lower()}


def test_integer_scores_share_one_disc_per_grid_point_with_its_count():
    gold = [1] * 6 + [2] * 7 + [2]
    judge = [1] * 6 + [2] * 7 + [1]
    figure = Figure(
        "scatter",
        "Judge score against gold",
        {
            "series": [{"name": "items", "x": gold, "y": judge}],
            "xlabel": "gold",
            "ylabel": "judge",
            "diagonal": True,
        },
    )
    shown = _texts(figure_svg(figure))
    # Three discs, at (1, 1), (2, 2) and (2, 1), numbered with their counts; ticks on 1 and 2 only.
    assert shown.count("6") == 1 and shown.count("7") == 1
    assert "y = x" in shown
    # Points that do not coincide are plain points: no counts, no diagonal unless asked.
    spread = Figure("scatter", "Spread", {"series": [{"name": "items", "x": [0.5, 1.25], "y": [0.1, 0.7]}]})
    assert "y = x" not in _texts(figure_svg(spread))


def test_panels_have_one_size():
    confusion = Figure("confusion", "Labels", {"labels": ["yes", "no"], "matrix": [[3, 1], [2, 4]]})
    bars = Figure("bars", "Agreement", {"bars": [{"label": "accuracy", "value": 0.7}]})
    sizes = {
        (root.get("width"), root.get("height"))
        for root in (ET.fromstring(figure_svg(figure)) for figure in (confusion, bars))
    }
    assert len(sizes) == 1, sizes


def test_a_score_task_fits_its_agreement_axis_and_captions_its_figures(mt_bench_run: Path):
    figures = {entry["title"]: entry for entry in json.loads((mt_bench_run / "figures.json").read_text())}
    agreement = json.loads((mt_bench_run / "summary.json").read_text())["agreement"]
    bars = figures["Agreement with gold scores"]
    lows = [bar.get("low", bar["value"]) for bar in bars["data"]["bars"]]
    assert min(lows) >= 0 and bars["data"]["ylim"] == [0.0, 1.0]  # no empty −1..0 half
    assert (
        f"QWK {agreement['qwk']:.3f} [{agreement['qwk_low']:.2f}, {agreement['qwk_high']:.2f}]"
        in bars["caption"]
    )
    histogram = figures["Scores: judge and gold"]
    assert "judge: mean" in histogram["caption"] and "gold: mean" in histogram["caption"]
    scatter = figures["Judge score against gold"]
    assert scatter["data"]["diagonal"] is True
    assert re.search(r"\d+ equal to gold, \d+ above, \d+ below", scatter["caption"])
