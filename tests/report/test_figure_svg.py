"""``figure_svg``: every figure kind as one inline SVG element, text kept as text, ids scoped."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from jurist.report.figures import FIGURE_KINDS, Figure
from jurist.report.plots import FAIL_COLOUR, NO_DATA, PASS_COLOUR, figure_svg

SVG = "{http://www.w3.org/2000/svg}"

EXAMPLES: dict[str, Figure] = {
    "confusion": Figure(
        "confusion",
        "Verdict against gold",
        {"labels": ["yes", "no"], "matrix": [[7, 2], [3, 11]], "row_title": "gold", "col_title": "judge"},
    ),
    "roc": Figure(
        "roc",
        "ROC of the confidence",
        {"curves": [{"name": "judge", "fpr": [0, 0.25, 1], "tpr": [0, 0.75, 1], "auc": 0.78125}]},
    ),
    "reliability": Figure(
        "reliability",
        "Reliability",
        {
            "bins": [
                {"confidence": 0.15, "accuracy": 0.25, "n": 4},
                {"confidence": 0.85, "accuracy": 0.7, "n": 13},
                {"confidence": 0.5, "accuracy": None, "n": 0},
            ],
            "ece": 0.0912,
        },
    ),
    "histogram": Figure(
        "histogram",
        "Scores: judge and gold",
        {
            "series": [
                {"name": "judge", "values": [1, 2, 2, 3, 7]},
                {"name": "gold", "values": [1, 5, None]},
            ],
            "xlabel": "score",
        },
    ),
    "bars": Figure(
        "bars",
        "Agreement",
        {
            "bars": [
                {"label": "accuracy", "value": 0.75, "low": 0.6, "high": 0.9, "group": "set A"},
                {"label": "kappa", "value": 0.412, "low": 0.2, "high": 0.6, "group": "set B"},
                {"label": "auroc", "value": None},
            ],
            "ylabel": "value",
            "ylim": [0, 1],
        },
    ),
    "lines": Figure(
        "lines",
        "Accuracy by noise rate",
        {
            "series": [
                {
                    "name": "judge",
                    "x": [0, 0.2, 0.4],
                    "y": [0.9, 0.8, 0.6],
                    "low": [0.8, 0.7, 0.5],
                    "high": [0.95, 0.9, 0.7],
                }
            ],
            "xlabel": "noise rate",
            "ylabel": "accuracy",
        },
    ),
    "scatter": Figure(
        "scatter",
        "Judge score against gold",
        {
            "series": [{"name": "items", "x": [1, 2, 3, 4], "y": [2, 2, 3, 5]}],
            "xlabel": "gold",
            "ylabel": "judge",
        },
    ),
    "gates": Figure(
        "gates",
        "Gates",
        {
            "gates": [
                {"name": "precision", "value": 0.82, "threshold": 0.7, "op": ">=", "passed": True},
                {"name": "over_refusal", "value": 0.3, "threshold": 0.1, "op": "<=", "passed": False},
            ]
        },
    ),
}


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    return root


def texts(root: ET.Element) -> list[str]:
    return ["".join(node.itertext()) for node in root.iter(f"{SVG}text")]


def test_every_kind_has_an_example():
    assert set(EXAMPLES) == set(FIGURE_KINDS)


@pytest.mark.parametrize("kind", FIGURE_KINDS)
def test_each_kind_is_one_svg_element_with_its_title_as_text(kind):
    figure = EXAMPLES[kind]
    svg = figure_svg(figure)
    assert svg.startswith("<svg ") and svg.rstrip().endswith("</svg>")
    assert "<?xml" not in svg and "<!DOCTYPE" not in svg and "<metadata" not in svg
    root = parse(svg)
    assert root.get("role") == "img" and root.get("aria-label") == figure.title
    shown = texts(root)
    assert figure.title in shown  # text kept as text (svg.fonttype none), not glyph paths
    assert NO_DATA not in shown
    assert not re.search(r'<path id="[^"]*DejaVu', svg)  # no glyph outlines


def test_kind_specific_marks():
    confusion = texts(parse(figure_svg(EXAMPLES["confusion"])))
    assert {"7", "2", "3", "11", "yes", "no", "gold", "judge"} <= set(confusion)

    roc = texts(parse(figure_svg(EXAMPLES["roc"])))
    assert "judge (AUC 0.781)" in roc and "chance (AUC 0.5)" in roc

    reliability = texts(parse(figure_svg(EXAMPLES["reliability"])))
    assert {"n=4", "n=13", "perfect calibration", "judge (ECE 0.091)"} <= set(reliability)
    assert "n=0" not in reliability  # an empty bin has no point

    bars = texts(parse(figure_svg(EXAMPLES["bars"])))
    assert {"0.750", "0.412", "n/a", "set A", "set B"} <= set(bars)

    gates_svg = figure_svg(EXAMPLES["gates"])
    gates = texts(parse(gates_svg))
    assert "PASS 0.820 >= 0.700" in gates and "FAIL 0.300 <= 0.100" in gates
    assert PASS_COLOUR in gates_svg and FAIL_COLOUR in gates_svg


@pytest.mark.parametrize("kind", FIGURE_KINDS)
@pytest.mark.parametrize(
    "data",
    [
        {},
        {"series": None, "curves": None, "bars": None, "bins": None, "gates": None, "matrix": None},
        {"x": "y"},
    ],
    ids=["empty", "none", "unrelated"],
)
def test_empty_or_missing_data_draws_a_no_data_note(kind, data):
    root = parse(figure_svg(Figure(kind, f"Empty {kind}", data)))
    assert NO_DATA in texts(root) and f"Empty {kind}" in texts(root)


@pytest.mark.parametrize(
    "figure",
    [
        Figure("roc", "one point", {"curves": [{"name": "j", "fpr": [0.5], "tpr": [0.5]}]}),
        Figure("histogram", "not numbers", {"series": [{"name": "j", "values": ["a", None, float("nan")]}]}),
        Figure("confusion", "text matrix", {"labels": ["a"], "matrix": "not a matrix"}),
        Figure("lines", "no y", {"series": [{"name": "j", "x": [1, 2]}]}),
        Figure("scatter", "inf", {"series": [{"x": [float("inf")], "y": [1]}]}),
    ],
    ids=lambda figure: figure.title,
)
def test_unusable_data_is_no_data_never_an_error(figure):
    assert NO_DATA in texts(parse(figure_svg(figure)))


def test_ids_carry_the_prefix_and_every_reference_resolves_inside_the_svg():
    svg = figure_svg(EXAMPLES["roc"], id_prefix="fig7-")
    ids = re.findall(r'\bid="([^"]+)"', svg)
    assert ids and all(found.startswith("fig7-") for found in ids)
    references = re.findall(r'(?:url\(#|href="#)([^)"]+)', svg)
    assert references and set(references) <= set(ids)


def test_two_figures_in_one_page_share_no_id():
    first = set(re.findall(r'\bid="([^"]+)"', figure_svg(EXAMPLES["bars"])))
    second = set(re.findall(r'\bid="([^"]+)"', figure_svg(EXAMPLES["histogram"])))
    assert first and second and not first & second


def test_the_same_figure_draws_the_same_text():
    assert figure_svg(EXAMPLES["confusion"]) == figure_svg(EXAMPLES["confusion"])


def test_judged_labels_are_escaped_and_never_parsed_as_tex():
    hostile = "</svg><script>x()"
    figure = Figure(
        "confusion", f"Labels {hostile}", {"labels": ["$x$ costs $5", hostile], "matrix": [[1, 0], [0, 1]]}
    )
    svg = figure_svg(figure)
    assert "<script" not in svg
    root = parse(svg)
    shown = texts(root)
    assert hostile in shown and "$x$ costs $5" in shown  # as written: no TeX, no markup
    assert root.get("aria-label") == f"Labels {hostile}"


def test_long_labels_are_cut_so_the_plot_keeps_its_room():
    long = "a label far longer than any axis has room for"
    svg = figure_svg(Figure("confusion", "Long", {"labels": [long, "b"], "matrix": [[1, 0], [0, 1]]}))
    assert long[:27] + "…" in texts(parse(svg))
