"""What people look at in a scored RAGBench run: the review columns and the TRACe plots.

The per-item table carries RAGBench's gold next to the judge's labels when the judged file
has it (:func:`with_gold_columns`): ``gold_supported`` (the example-level adherence label),
``gold_relevance``, ``gold_utilization`` and ``gold_completeness``, and ``adherence_agrees``.
The plots are the distributions of the four TRACe scores, the ROC of the judge's
hallucination score against gold (the curve of the summary's ``hallucination_auroc``, on the
same rows) and the judge's TRACe scores against gold ones.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from jurist.report.figures import Figure
from jurist.report.review import Review
from jurist.report.standard_figures import (
    histogram_figure,
    is_present,
    roc_curve_data,
    roc_figure,
    scored_rows,
)
from jurist.tasks.ragbench.scoring import GOLD_SCORES, TRACE_METRICS

__all__ = ["REVIEW", "ragbench_figures", "with_gold_columns"]

GOLD_COLUMNS = ("gold_supported", *(column for _, column, _ in GOLD_SCORES))
AGREES = "adherence_agrees"

REVIEW = Review(
    verdict="adherence",
    gold="gold_supported",
    agrees=AGREES,
    label=None,  # RAGBench's gold is sentence keys per item, not one value a person sets
    columns=(*TRACE_METRICS, "relevant_keys", "utilized_keys", "response_sentences"),
)
"""The review columns: the judge's adherence (every response sentence supported) against
RAGBench's ``adherence_score``."""

_TITLES = {
    "context_relevance": "Context relevance",
    "context_utilization": "Context utilization",
    "completeness": "Completeness",
    "adherence_fraction": "Adherence (share of supported response sentences)",
}
_GOLD_OF = {metric: column for metric, column, _ in GOLD_SCORES}
_EDGES = [round(edge, 1) for edge in np.linspace(0.0, 1.0, 11)]


def with_gold_columns(items: pd.DataFrame, gold: pd.DataFrame) -> pd.DataFrame:
    """``items`` with the gold columns of :func:`~jurist.tasks.ragbench.scoring.gold_table`
    (``None`` for items without a gold row) and ``adherence_agrees``: the judge's adherence
    equals ``gold_supported`` (``None`` unless the item was answered and has the label)."""
    table = items.copy()
    if "id" not in table or table.empty:
        return table
    by_id = gold.set_index("id")
    for column in GOLD_COLUMNS:
        values = table["id"].map(by_id[column]) if column in by_id else pd.Series(None, index=table.index)
        table[column] = values.astype(object).where(values.notna(), None)
    adherence = table["adherence"] if "adherence" in table else pd.Series(None, index=table.index)
    agrees = [
        bool(judged) == bool(supported)
        if ok == "ok" and is_present(judged) and is_present(supported)
        else None
        for ok, judged, supported in zip(table["status"], adherence, table["gold_supported"], strict=True)
    ]
    table[AGREES] = pd.Series(agrees, index=table.index, dtype=object)
    return table


def ragbench_figures(items: pd.DataFrame, summary: dict[str, Any]) -> list[Figure]:
    """Histograms of the TRACe scores (judge, and gold where the data has it), the ROC of the
    hallucination score, and a scatter of the judge's TRACe scores against gold."""
    figures: list[Figure | None] = [_trace_histogram(items, metric) for metric in TRACE_METRICS]
    figures.append(_hallucination_roc(items, summary))
    figures.append(_trace_scatter(items, summary))
    return [figure for figure in figures if figure is not None]


def _trace_histogram(items: pd.DataFrame, metric: str) -> Figure | None:
    rows = scored_rows(items, metric)
    judged = [float(v) for v in rows[metric]] if metric in rows else []  # none when every item failed
    series = {"judge": judged}
    gold_column = _GOLD_OF.get(metric)
    gold: list[float] = []
    if gold_column is not None and gold_column in items:
        gold = [float(v) for v in items[gold_column] if is_present(v)]
        series["gold"] = gold
    if not judged and not gold:
        return None
    gold_note = f" and {len(gold)} gold scores" if gold else ""
    return histogram_figure(
        series,
        title=_TITLES[metric],
        xlabel=metric,
        bins=_EDGES,
        caption=(
            f"How the judge's {metric.replace('_', ' ')} is spread over the items, in bins of 0.1 "
            f"({len(judged)} answered items with a defined value{gold_note}). Items with a zero "
            "denominator (e.g. completeness when nothing is relevant) are left out."
        ),
    )


def _hallucination_roc(items: pd.DataFrame, summary: dict[str, Any]) -> Figure | None:
    """The ROC behind ``agreement.hallucination_auroc``: the same rows (answered, gold label
    present, adherence defined), hallucinated = not gold_supported, score = 1 − adherence_fraction."""
    rows = scored_rows(items, "gold_supported", "adherence_fraction")
    if rows.empty:
        return None
    hallucinated = [not bool(v) for v in rows["gold_supported"]]
    score = [1.0 - float(v) for v in rows["adherence_fraction"]]
    curve = roc_curve_data("1 − adherence fraction", hallucinated, score)
    positives = sum(hallucinated)
    return roc_figure(
        [curve],
        title="Hallucination detection (ROC)",
        caption=(
            "How well the judge's share of unsupported response sentences separates the responses "
            "RAGBench labels hallucinated (positive) from supported ones: each point is one "
            "threshold (false-positive rate, true-positive rate); the diagonal is chance. The area "
            f"is the summary's hallucination AUROC. {len(rows)} items: {positives} hallucinated, "
            f"{len(rows) - positives} supported."
        ),
    )


def _trace_scatter(items: pd.DataFrame, summary: dict[str, Any]) -> Figure | None:
    agreement = summary.get("agreement") or {}
    series = []
    notes = []
    for metric, gold_column, _ in GOLD_SCORES:
        rows = scored_rows(items, metric, gold_column)
        if rows.empty:
            continue
        series.append(
            {
                "name": metric,
                "x": [float(v) for v in rows[gold_column]],
                "y": [float(v) for v in rows[metric]],
            }
        )
        value = agreement.get(f"rmse_{metric}")
        if value is not None:
            notes.append(f"{metric.replace('_', ' ')}: {len(rows)} items, RMSE {value:.3f}")
    if not series:
        return None
    return Figure(
        kind="scatter",
        title="TRACe scores: judge against gold",
        data={"series": series, "xlabel": "gold", "ylabel": "judge"},
        caption=(
            "One point per item and score (RAGBench's gold on x, the judge's on y); points on the "
            "diagonal agree. " + "; ".join(notes) + "."
        ),
    )
