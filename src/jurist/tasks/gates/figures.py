"""What people look at in a gates report: the review columns and the plots.

The per-question table's ``label`` is the outcome of the question's traces (OK,
REFUSAL_OK, OVER_REFUSAL, HALLUCINATION, ANS_NO_HIT). The plots are the gates G1-G5 against
their thresholds, the trace outcomes, and every rate with its Wilson interval. A gold
question is a structure (answerable, gold ids, claim), so no single label stands for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jurist.metrics.gates import LABELS
from jurist.metrics.gold_agreement import wilson_interval
from jurist.report.figures import Figure
from jurist.report.review import Review
from jurist.report.standard_figures import bars_figure

__all__ = ["REVIEW", "gates_figures"]

REVIEW = Review(
    verdict="label",
    columns=("qid", "question", "answerable", "traces", "hit", "compliant", "contained"),
)


def gates_figures(summary: Mapping[str, Any]) -> list[Figure]:
    """The gates, the trace outcomes and the rates of a gates summary (``jurist gate --json``)."""
    found: list[Figure | None] = [_gates(summary), _outcomes(summary), _rates(summary)]
    return [figure for figure in found if figure is not None]


def _gates(summary: Mapping[str, Any]) -> Figure | None:
    gates = [gate for gate in summary.get("gates") or [] if isinstance(gate, Mapping)]
    if not gates:
        return None
    blocking = [gate["gate"] for gate in gates if gate.get("blocking")]
    skipped = [gate["gate"] for gate in gates if gate.get("status") == "n/a"]
    verdict = "every gate passes" if not blocking else f"failing: {', '.join(blocking)}"
    note = f" Not measured (no trace to compute the rate from): {', '.join(skipped)}." if skipped else ""
    return Figure(
        kind="gates",
        title="Gates",
        data={
            "gates": [
                {
                    "name": f"{gate['gate']} {gate['metric']}",
                    "value": gate.get("value"),
                    "threshold": gate.get("threshold"),
                    "op": str(gate.get("comparator")),
                    "passed": not gate.get("blocking"),
                }
                for gate in gates
            ]
        },
        caption=(
            f"Each gate's rate against its threshold; a gate fails the run when its rate is on the wrong "
            f"side ({verdict}).{note}"
        ),
    )


def _outcomes(summary: Mapping[str, Any]) -> Figure | None:
    counts = summary.get("counts") or {}
    bars = [{"label": label.value, "value": counts.get(label.value.lower())} for label in LABELS]
    scored = counts.get("traces_scored", 0)
    return bars_figure(
        bars,
        title="Trace outcomes",
        ylabel="traces",
        caption=(
            f"How the {scored} scored traces ended: OK (answerable, answered, a citation hits a gold id), "
            "REFUSAL_OK (unanswerable, refused), OVER_REFUSAL (answerable, refused), HALLUCINATION "
            "(unanswerable, answered), ANS_NO_HIT (answered without a gold citation)."
        ),
    )


def _rates(summary: Mapping[str, Any]) -> Figure | None:
    bars = []
    for name, ratio in (summary.get("metrics") or {}).items():
        if not isinstance(ratio, Mapping) or ratio.get("value") is None:
            continue
        numerator, denominator = int(ratio["numerator"]), int(ratio["denominator"])
        low, high = wilson_interval(numerator, denominator)
        bars.append({"label": name, "value": ratio["value"], "low": low, "high": high})
    for name, value in (summary.get("extra_metrics") or {}).items():
        bars.append({"label": name, "value": value})
    return bars_figure(
        bars,
        title="Rates",
        ylim=(0.0, 1.0),
        caption=(
            "Each rate of the report (numerator over denominator, see the report) with its 95% Wilson "
            "interval; a rate with a zero denominator is n/a and has no bar."
        ),
    )
