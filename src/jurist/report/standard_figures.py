"""The standard plots of a judged run, from the columns people review, and builders tasks reuse.

:func:`review_figures` is what :meth:`jurist.Task.figures` draws by default: from the
:class:`~jurist.report.review.Review` columns of a per-item table, a confusion matrix of
verdict against gold (labels and yes/no verdicts), a ROC curve and a reliability diagram
where the judge gives a confidence, and the distributions of verdict and gold scores.
The builders (:func:`confusion_figure`, :func:`roc_figure`, :func:`reliability_figure`,
:func:`histogram_figure`, :func:`bars_figure`) are what tasks use for their own figures, so
every figure of a kind reads the same. Every number comes from :mod:`jurist.metrics`; this
module knows no task.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from jurist.metrics.agreement import auroc
from jurist.metrics.curves import expected_calibration_error, reliability_bins, roc_curve
from jurist.metrics.gold_agreement import confusion_matrix
from jurist.report.figures import Figure
from jurist.report.review import LabelSpec, Review

__all__ = [
    "bars_figure",
    "confusion_figure",
    "histogram_figure",
    "is_present",
    "label_text",
    "reliability_figure",
    "review_figures",
    "roc_curve_data",
    "roc_figure",
    "scored_rows",
]

RELIABILITY_BINS = 10


def is_present(value: Any) -> bool:
    """Whether a table cell holds a value (``None``, NaN and pandas' NA are missing)."""
    if value is None or value is pd.NA or value is pd.NaT:
        return False
    return not (isinstance(value, float | np.floating) and math.isnan(value))


def scored_rows(items: pd.DataFrame, *columns: str) -> pd.DataFrame:
    """The answered rows (``status == "ok"`` when there is a status) with every column present."""
    if any(column not in items for column in columns):
        return items.iloc[0:0]
    keep = items["status"] == "ok" if "status" in items else pd.Series(True, index=items.index)
    for column in columns:
        keep &= items[column].map(is_present).astype(bool)
    return items[keep]


def _items(n: int) -> str:
    return f"{n} item" if n == 1 else f"{n} items"


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool | np.bool_)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not _is_bool(value)


def label_text(value: Any) -> str:
    """A verdict as the label a figure shows: ``true``/``false`` for booleans, ``7`` for 7.0."""
    if _is_bool(value):
        return "true" if value else "false"
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    return str(value)


# ---------------------------------------------------------------------- builders


def confusion_figure(
    gold: Sequence[Any],
    verdict: Sequence[Any],
    labels: Sequence[str] | None = None,
    *,
    title: str = "Confusion: judge vs gold",
    row_title: str = "gold",
    col_title: str = "judge",
    what: str = "items",
) -> Figure | None:
    """A confusion matrix (rows: ``gold``, columns: ``verdict``; counts), or ``None`` without items.

    Values are compared as their :func:`label_text`; ``labels`` fixes the order (labels
    found in the data but not listed are added after them, sorted).
    """
    g = [label_text(v) for v in gold]
    p = [label_text(v) for v in verdict]
    if not g:
        return None
    order = list(labels or [])
    order += sorted({*g, *p} - set(order))
    matrix = confusion_matrix(g, p, order)
    agreed = int(np.trace(matrix))
    return Figure(
        kind="confusion",
        title=title,
        data={
            "labels": order,
            "matrix": matrix.astype(int).tolist(),
            "row_title": row_title,
            "col_title": col_title,
        },
        caption=(
            f"Rows: {row_title}; columns: {col_title}; each cell counts {what}. The diagonal holds "
            f"the agreements: {agreed} of {len(g)} ({agreed / len(g):.1%}). {len(g)} {what} with "
            f"both values."
        ),
    )


def roc_curve_data(name: str, labels: Sequence[Any], scores: Sequence[float]) -> dict[str, Any] | None:
    """One curve of a ``roc`` figure (its corners, with the AUROC), or ``None`` when a class is absent."""
    y = np.asarray([bool(v) for v in labels], dtype=bool)
    s = np.asarray(scores, dtype=np.float64)
    area = auroc(y, s)
    if area is None:
        return None
    fpr, tpr, _ = roc_curve(y, s, drop_intermediate=True)
    return {"name": name, "fpr": fpr.tolist(), "tpr": tpr.tolist(), "auc": area}


def roc_figure(curves: Iterable[dict[str, Any] | None], *, title: str, caption: str) -> Figure | None:
    """A ``roc`` figure of the curves that exist (``None`` when none does)."""
    found = [curve for curve in curves if curve is not None]
    if not found:
        return None
    return Figure(kind="roc", title=title, data={"curves": found}, caption=caption)


def reliability_figure(
    correct: Sequence[Any],
    confidence: Sequence[float],
    *,
    title: str = "Reliability of the judge's confidence",
    outcome: str = "the verdict agreed with gold",
) -> Figure | None:
    """A reliability diagram (equal-width bins of confidence) with its ECE, or ``None`` without items."""
    y = np.asarray([bool(v) for v in correct], dtype=bool)
    p = np.asarray(confidence, dtype=np.float64)
    if y.size == 0:
        return None
    bins = reliability_bins(y, p, n_bins=RELIABILITY_BINS)
    ece = expected_calibration_error(y, p, n_bins=RELIABILITY_BINS)
    return Figure(
        kind="reliability",
        title=title,
        data={"bins": bins, "ece": ece},
        caption=(
            f"Items grouped into {RELIABILITY_BINS} equal-width bins of confidence: each point is "
            f"a bin's mean confidence (x) against the share of its items where {outcome} (y); "
            f"the numbers are the items per bin. A calibrated judge lies on the diagonal, an "
            f"overconfident one below it. Expected calibration error {ece:.3f} over "
            f"{_items(int(y.size))}."
        ),
    )


def histogram_figure(
    series: Mapping[str, Sequence[float]],
    *,
    title: str,
    xlabel: str,
    caption: str,
    bins: int | Sequence[float] | None = None,
) -> Figure | None:
    """A ``histogram`` of the non-empty series (``None`` when every series is empty)."""
    found = [
        {"name": name, "values": [float(v) for v in values]} for name, values in series.items() if len(values)
    ]
    if not found:
        return None
    data: dict[str, Any] = {"series": found, "xlabel": xlabel}
    if bins is not None:
        data["bins"] = bins if isinstance(bins, int) else [float(edge) for edge in bins]
    return Figure(kind="histogram", title=title, data=data, caption=caption)


def bars_figure(
    bars: Iterable[Mapping[str, Any]],
    *,
    title: str,
    caption: str,
    ylabel: str | None = None,
    ylim: tuple[float, float] | None = None,
) -> Figure | None:
    """A ``bars`` figure of the bars with a value (``None`` when no bar has one).

    A bar is ``{"label", "value", "low"?, "high"?, "group"?}``; undefined bounds are left out
    so that no whisker is drawn.
    """
    found = []
    for bar in bars:
        value = bar.get("value")
        if value is None or not is_present(value):
            continue
        entry: dict[str, Any] = {"label": str(bar["label"]), "value": float(value)}
        low, high = bar.get("low"), bar.get("high")
        if low is not None and high is not None and is_present(low) and is_present(high):
            entry["low"], entry["high"] = float(low), float(high)
        if bar.get("group") is not None:
            entry["group"] = str(bar["group"])
        found.append(entry)
    if not found:
        return None
    data: dict[str, Any] = {"bars": found}
    if ylabel:
        data["ylabel"] = ylabel
    if ylim is not None:
        data["ylim"] = list(ylim)
    return Figure(kind="bars", title=title, data=data, caption=caption)


# ---------------------------------------------------------------------- the review columns


def _value_kind(values: Sequence[Any], label: LabelSpec | None) -> str:
    """``bool``, ``score``, ``choice``, or ``other`` (e.g. label sets) for a column's values."""
    if label is not None:
        return label.kind
    if values and all(_is_bool(v) for v in values):
        return "bool"
    if values and all(_is_number(v) for v in values):
        return "score"
    if all(isinstance(v, str | int | np.integer) and not _is_bool(v) for v in values):
        return "choice"
    return "other"


def _choice_order(label: LabelSpec | None, kind: str) -> list[str] | None:
    if kind == "bool":
        return ["true", "false"]
    return list(label.choices) if label is not None and label.kind == "choice" else None


def review_figures(items: pd.DataFrame, review: Review) -> list[Figure]:
    """The plots the review columns of a per-item table allow (nothing when they are absent).

    - verdict and gold, labels or yes/no: a confusion matrix over the answered items with both;
    - verdict and gold, scores: histograms of both and a scatter of verdict against gold;
    - verdict only: the distribution of the verdicts;
    - a confidence: a ROC curve of the confidence, against gold when the verdict is yes/no
      (the confidence is then the probability of *yes*), else against agreement with gold,
      and a reliability diagram of the same pairs.
    """
    figures: list[Figure] = []
    label = review.label
    if review.verdict is not None and review.verdict in items:
        figures += _verdict_figures(items, review, label)
    if review.confidence is not None:
        figures += _confidence_figures(items, review, label)
    return figures


def _verdict_figures(items: pd.DataFrame, review: Review, label: LabelSpec | None) -> list[Figure]:
    verdict_column = str(review.verdict)
    answered = scored_rows(items, verdict_column)
    verdicts = answered[verdict_column].tolist()
    has_gold = review.gold is not None and review.gold in items
    both = scored_rows(items, verdict_column, str(review.gold)) if has_gold else items.iloc[0:0]
    kind = _value_kind([*verdicts, *(both[str(review.gold)].tolist() if has_gold else [])], label)
    found: list[Figure | None] = []
    if kind in ("choice", "bool"):
        if len(both):
            found.append(
                confusion_figure(
                    both[str(review.gold)].tolist(),
                    both[verdict_column].tolist(),
                    _choice_order(label, kind),
                    title=f"{verdict_column}: judge vs gold",
                )
            )
        elif verdicts:
            counts = pd.Series([label_text(v) for v in verdicts]).value_counts()
            order = _choice_order(label, kind) or sorted(counts.index)
            order += sorted(set(counts.index) - set(order))
            found.append(
                bars_figure(
                    [{"label": name, "value": int(counts.get(name, 0))} for name in order],
                    title="Verdicts",
                    ylabel="items",
                    caption=f"How many answered items got each verdict ({_items(len(verdicts))}; no gold).",
                )
            )
    elif kind == "score":
        gold_values = [float(v) for v in both[str(review.gold)]] if has_gold else []
        judged = [float(v) for v in (both[verdict_column] if len(both) else verdicts)]
        bins = _score_bins(label, [*judged, *gold_values])
        series = {"judge": judged, "gold": gold_values}
        what = f"{_items(len(judged))} with both a verdict and gold" if gold_values else _items(len(judged))
        means = "; ".join(
            f"{name}: mean {np.mean(values):.2f}, median {np.median(values):g}"
            for name, values in series.items()
            if values
        )
        found.append(
            histogram_figure(
                series,
                title="Scores: judge and gold" if gold_values else "Scores of the judge",
                xlabel="score",
                bins=bins,
                caption=f"How many items got each score ({what}; {means}).",
            )
        )
        if gold_values:
            found.append(
                Figure(
                    kind="scatter",
                    title="Judge score against gold",
                    data={
                        "series": [{"name": "items", "x": gold_values, "y": judged}],
                        "xlabel": "gold",
                        "ylabel": "judge",
                        "diagonal": True,
                    },
                    caption=(
                        f"One point per item (gold on x, the judge's score on y; {_items(len(judged))}): "
                        f"{_relative(gold_values, judged)} Points on the dashed diagonal agree; above it "
                        "the judge scores higher than gold. Items with the same pair of whole-number scores "
                        "share one disc, its area and number the count."
                    ),
                )
            )
    return [figure for figure in found if figure is not None]


def _relative(gold: Sequence[float], judged: Sequence[float]) -> str:
    """How many verdicts equal gold, are above and below it."""
    same = sum(1 for g, j in zip(gold, judged, strict=True) if j == g)
    above = sum(1 for g, j in zip(gold, judged, strict=True) if j > g)
    below = len(gold) - same - above
    return f"{same} equal to gold, {above} above, {below} below."


def _score_bins(label: LabelSpec | None, values: Sequence[float]) -> int | list[float] | None:
    """Edges centred on whole numbers for integer scores in a known, short range."""
    if label is not None and label.kind == "score" and label.integer and label.low is not None:
        low, high = float(label.low), float(label.high if label.high is not None else max(values))
        if high - low <= 50:
            return [edge - 0.5 for edge in np.arange(low, high + 2)]
    return None


def _confidence_figures(items: pd.DataFrame, review: Review, label: LabelSpec | None) -> list[Figure]:
    confidence_column = str(review.confidence)
    verdict_column = review.verdict
    bool_verdict = False
    if verdict_column is not None and verdict_column in items:
        values = scored_rows(items, verdict_column)[verdict_column].tolist()
        bool_verdict = _value_kind(values, label) == "bool"
    if bool_verdict and review.gold is not None:
        target, outcome_name = str(review.gold), "gold is yes"
        subject = "the judge's probability of yes separates gold yes (positive) from gold no"
    elif review.agrees is not None:
        target, outcome_name = review.agrees, "the verdict agreed with gold"
        subject = (
            "the judge's confidence separates items where it agrees with gold (positive) from the others"
        )
    else:
        return []
    rows = scored_rows(items, confidence_column, target)
    if rows.empty:
        return []
    outcome = [bool(v) for v in rows[target]]
    confidence = [float(v) for v in rows[confidence_column]]
    positives = sum(outcome)
    found: list[Figure | None] = [
        roc_figure(
            [roc_curve_data("judge", outcome, confidence)],
            title="ROC of the judge's confidence",
            caption=(
                f"How well {subject}: each point is one threshold (false-positive rate, "
                f"true-positive rate). The diagonal is chance; an area (AUC) of 1 separates "
                f"perfectly. {_items(len(outcome))}: {positives} positive, "
                f"{len(outcome) - positives} negative."
            ),
        ),
        reliability_figure(outcome, confidence, outcome=outcome_name),
    ]
    return [figure for figure in found if figure is not None]
