"""What people look at in a YAML task's run: the review columns, the plots, and the gold file.

The review columns are those :mod:`jurist.tasks.declarative.scoring` writes: ``verdict``
(pairwise: ``winner``, the response an order's answer names), ``gold``, ``correct`` and
``confidence``. A person's label is what the task file's gold column holds: one of the
labels, yes/no, a score in the range, or for a pairwise row the better response (A, B or
tie); a set of labels cannot be given one value, so ``labels`` tasks take none.

The plots add to the standard ones (:func:`jurist.report.standard_figures.review_figures`)
what each output kind reports: agreement with intervals (label, bool), the per-label
figures (labels), the correlations and the score confusion that QWK weighs (score), and
win rates, consistency, position and length bias (pairwise). Every number is the summary's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from jurist.datasets.io import iter_records
from jurist.errors import ConfigError
from jurist.metrics import preference
from jurist.metrics.gold_agreement import wilson_interval
from jurist.report.figures import Figure
from jurist.report.review import LabelSpec, Review
from jurist.report.standard_figures import bars_figure, confusion_figure, is_present, scored_rows
from jurist.tasks.declarative.data import DeclarativeDataset, split_item_id
from jurist.tasks.declarative.spec import TaskFile
from jurist.tasks.declarative.verdicts import parse_gold
from jurist.tasks.declarative.weighted import verdict_values

__all__ = ["gold_file_rows", "kind_figures", "label_spec", "review_of"]


def label_spec(spec: TaskFile) -> LabelSpec | None:
    """The label a person may give an item of the task, or ``None`` (``labels`` kind)."""
    output = spec.output
    if spec.kind == "label":
        return LabelSpec(kind="choice", choices=tuple(output.labels or ()))
    if spec.kind == "bool":
        return LabelSpec(kind="bool")
    if spec.kind == "score":
        low, high = output.range or (None, None)
        return LabelSpec(kind="score", low=low, high=high, integer=True)
    if spec.kind == "pairwise":
        return LabelSpec(kind="choice", choices=preference.CHOICES)
    return None


def review_of(spec: TaskFile) -> Review:
    """The review columns of the task's per-item table (gold ones only with a ``gold`` column)."""
    gold = spec.gold is not None
    pairwise = spec.kind == "pairwise"
    columns = ["reasoning"] if spec.output.reasoning else []
    if pairwise:
        columns = ["pair_id", "order", "verdict", *columns]
    if spec.kind == "score" and gold:
        columns.append("abs_error")
    return Review(
        verdict="winner" if pairwise else "verdict",
        gold="gold" if gold else None,
        agrees="correct" if gold else None,
        # A stated confidence, or the probability of the verdict a weighed judge gives
        # (logprobs: true; jurist.tasks.declarative.weighted): any kind but a set of labels.
        confidence="confidence" if spec.output.confidence or verdict_values(spec) is not None else None,
        label=label_spec(spec) if gold else None,
        columns=tuple(columns),
    )


# ---------------------------------------------------------------------- figures


def _interval_bar(figures: Mapping[str, Any], name: str, label: str | None = None) -> dict[str, Any]:
    return {
        "label": label or name,
        "value": figures.get(name),
        "low": figures.get(f"{name}_low"),
        "high": figures.get(f"{name}_high"),
    }


def kind_figures(spec: TaskFile, items: pd.DataFrame, summary: Mapping[str, Any]) -> list[Figure]:
    """The figures of the task's output kind, from the summary's agreement and pair figures."""
    agreement = summary.get("agreement") or {}
    scored = int((summary.get("gold") or {}).get("scored") or 0)
    found: list[Figure | None] = []
    if spec.kind in ("label", "bool") and agreement:
        third = "f1" if spec.kind == "bool" else "macro_f1"
        names = ["accuracy", "kappa", third] + (["auroc"] if "auroc" in agreement else [])
        found.append(
            bars_figure(
                [_interval_bar(agreement, name) for name in names],
                title="Agreement with gold",
                caption=(
                    "Accuracy: share of verdicts equal to gold; κ: Cohen's kappa (0 = chance agreement); "
                    + ("F1 of the true class" if spec.kind == "bool" else "macro-F1 over the labels")
                    + ("; AUROC of the confidence against gold true" if "auroc" in names else "")
                    + f". Whiskers are 95% bootstrap intervals over the {scored} scored items."
                ),
            )
        )
    elif spec.kind == "labels" and agreement:
        found.append(_per_label_figure(agreement, scored))
        found.append(
            bars_figure(
                [_interval_bar(agreement, name) for name in ("micro_f1", "macro_f1", "exact_match")],
                title="Agreement with gold",
                ylim=(0.0, 1.0),
                caption=(
                    "Micro-F1 pools every label decision; macro-F1 averages the labels' F1; exact match "
                    f"is the share of items whose label set equals gold. Whiskers are 95% bootstrap "
                    f"intervals over the {scored} scored items."
                ),
            )
        )
    elif spec.kind == "score" and agreement:
        found += _score_figures(spec, items, agreement, scored)
    elif spec.kind == "pairwise":
        found += _pairwise_figures(agreement, summary.get("pairs") or {}, scored)
    return [figure for figure in found if figure is not None]


def _per_label_figure(agreement: Mapping[str, Any], scored: int) -> Figure | None:
    per_label = agreement.get("per_label") or {}
    bars = [
        {"label": f"{label} {name}", "value": values.get(name), "group": name}
        for label, values in per_label.items()
        for name in ("precision", "recall", "f1")
    ]
    return bars_figure(
        bars,
        title="Precision, recall and F1 per label",
        ylim=(0.0, 1.0),
        caption=(
            f"Per label over the {scored} scored items: precision (of the items the judge gave the label, "
            "the share gold also has), recall (of the items gold has it, the share the judge found) and F1. "
            "A label no item has in gold or in the verdicts has no bar."
        ),
    )


def _score_figures(
    spec: TaskFile, items: pd.DataFrame, agreement: Mapping[str, Any], scored: int
) -> list[Figure | None]:
    low, high = spec.output.range or (0, 0)
    rows = scored_rows(items, "verdict", "gold")
    bars = [
        _interval_bar(agreement, "qwk", "QWK"),
        _interval_bar(agreement, "pearson", "Pearson"),
        _interval_bar(agreement, "spearman", "Spearman"),
        _interval_bar(agreement, "kendall_tau", "Kendall τ"),
        _interval_bar(agreement, "exact_agreement", "exact"),
        _interval_bar(agreement, "within_1", "within 1"),
    ]
    correlations = bars_figure(
        bars,
        title="Agreement with gold scores",
        ylim=_fitted_limits(bars),
        caption=(
            "Quadratic-weighted kappa and the correlations of the judge's scores with gold (1 = perfect, "
            "0 = none), and the shares of scores equal to gold and within 1 of it: "
            f"{_bar_values(bars)}. "
            f"MAE {_number(agreement.get('mae'))}, RMSE {_number(agreement.get('rmse'))} (mean gold "
            f"{_number(agreement.get('mean_gold'))}, mean judge {_number(agreement.get('mean_judge'))}). "
            f"Whiskers are 95% bootstrap intervals over the {scored} scored items."
        ),
    )
    confusion = confusion_figure(
        rows["gold"].tolist(),
        rows["verdict"].tolist(),
        [str(value) for value in range(low, high + 1)],
        title="Scores: judge vs gold",
    )
    if confusion is not None:
        confusion = Figure(
            kind=confusion.kind,
            title=confusion.title,
            data=confusion.data,
            caption=confusion.caption
            + " QWK weighs each off-diagonal cell by its squared distance from the diagonal.",
        )
    return [correlations, confusion]


def _fitted_limits(bars: list[dict[str, Any]]) -> tuple[float, float]:
    """0..1 when no bar (nor its interval) is below 0, else -1..1: the axis a correlation needs."""
    lows = [
        float(bar[key])
        for bar in bars
        for key in ("value", "low")
        if isinstance(bar.get(key), int | float) and is_present(bar.get(key))
    ]
    return (-1.0, 1.0) if any(value < 0 for value in lows) else (0.0, 1.0)


def _bar_values(bars: list[dict[str, Any]]) -> str:
    """The bars' values with their intervals, for a caption (``QWK 0.893 [0.80, 0.95]``)."""
    parts = []
    for bar in bars:
        value = bar.get("value")
        if not (isinstance(value, int | float) and is_present(value)):
            continue
        text = f"{bar['label']} {value:.3f}"
        low, high = bar.get("low"), bar.get("high")
        if (
            isinstance(low, int | float)
            and isinstance(high, int | float)
            and is_present(low)
            and is_present(high)
        ):
            text += f" [{low:.2f}, {high:.2f}]"
        parts.append(text)
    return "; ".join(parts) if parts else "none computed"


def _number(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, int | float) and is_present(value) else "n/a"


def _pairwise_figures(
    agreement: Mapping[str, Any], pairs: Mapping[str, Any], scored: int
) -> list[Figure | None]:
    found: list[Figure | None] = []
    confusion = agreement.get("confusion")
    if confusion and confusion.get("matrix"):
        matrix = confusion["matrix"]
        total = sum(sum(row) for row in matrix)
        agreed = sum(matrix[i][i] for i in range(len(matrix)))
        found.append(
            Figure(
                kind="confusion",
                title="Row verdicts: judge vs gold",
                data={
                    "labels": list(confusion["labels"]),
                    "matrix": matrix,
                    "row_title": "gold",
                    "col_title": "judge (both orders)",
                },
                caption=(
                    "Rows: gold; columns: the row's verdict from both orders (the winner both name, tie "
                    f"when they differ); each cell counts rows. {agreed} of {total} rows agree."
                ),
            )
        )
        found.append(
            bars_figure(
                [_interval_bar(agreement, "accuracy"), _interval_bar(agreement, "kappa")],
                title="Agreement with gold",
                caption=(
                    "Accuracy and Cohen's kappa of the row verdicts with gold; whiskers are 95% bootstrap "
                    f"intervals over the {scored} scored rows."
                ),
            )
        )
    complete = int(pairs.get("complete") or 0)
    wins = []
    for choice in preference.CHOICES:
        rate = pairs.get(f"win_rate_{choice}")
        if complete and rate is not None and is_present(rate):
            count = round(float(rate) * complete)
            low, high = wilson_interval(count, complete)
            wins.append({"label": choice, "value": rate, "low": low, "high": high})
    found.append(
        bars_figure(
            wins,
            title="Win rates",
            ylim=(0.0, 1.0),
            caption=(
                f"Share of the {complete} rows answered in both orders won by response A, by response B, "
                "or tied (the two orders disagree, or both say tie); whiskers are 95% Wilson intervals."
            ),
        )
    )
    bias = [
        {**_interval_bar(pairs, "consistency"), "group": "consistency"},
        {**_interval_bar(pairs, "position_1_rate", "first position picked"), "group": "position"},
        {**_interval_bar(pairs, "longer_win_rate", "longer picked (judge)"), "group": "length"},
        {"label": "longer preferred (gold)", "value": pairs.get("gold_longer_rate"), "group": "length"},
    ]
    found.append(
        bars_figure(
            bias,
            title="Consistency, position and length bias",
            ylim=(0.0, 1.0),
            caption=(
                "Consistency: rows answered alike in both orders. First position: share of decisive "
                "answers (A or B) that picked the response shown first; 0.5 is no position bias. Longer "
                "picked: share of decisive answers naming the longer response (in words), next to how "
                "often gold prefers "
                f"it. {int(pairs.get('rows') or 0)} rows; whiskers are 95% bootstrap intervals over rows."
            ),
        )
    )
    return found


# ---------------------------------------------------------------------- gold file


def gold_file_rows(
    spec: TaskFile, dataset: DeclarativeDataset, labels: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The rows of the data file with the task's gold column set to people's labels.

    Every row that has a gold value afterwards is kept, a person's label winning over the
    data's; with no gold in the data that is the rows people labelled. Rows keep every
    column of the file; a file without ids gets an ``id`` column with the row ids, so the
    exported rows keep the ids they were labelled under. ``jurist calibrate TASK --gold
    FILE`` and ``jurist optimize`` read the rows (written as JSONL, CSV, ...) as they are.

    Args:
        spec: The task (it must name a ``gold`` column).
        dataset: The judged data (:meth:`~jurist.tasks.declarative.task.DeclarativeTask.read`).
        labels: Item id -> label (pairwise: a row id, or one of its orders ``ID|AB``/``ID|BA``).

    Raises:
        ConfigError: The task names no ``gold`` column, a label names no row, is not a gold
            value of the task, or the two orders of a pairwise row carry different labels.
    """
    if spec.gold is None:
        raise ConfigError(
            f"task {spec.name!r} cannot export labels as gold: its task file names no 'gold' column",
            field="gold",
        )
    known = {row.id: index for index, row in enumerate(dataset.rows)}
    chosen: dict[str, Any] = {}
    for item, value in labels.items():
        row_id = split_item_id(str(item))[0] if dataset.pairwise else str(item)
        if row_id not in known:
            raise ConfigError(f"label for item {item!r}: the data has no row with that id", field="labels")
        try:
            gold = parse_gold(spec.output, value)
        except ValueError as exc:
            raise ConfigError(f"label for item {item!r}: {exc}", field="labels") from None
        if row_id in chosen and chosen[row_id] != gold:
            raise ConfigError(
                f"row {row_id!r} has two labels ({chosen[row_id]!r} and {gold!r}); keep one", field="labels"
            )
        chosen[row_id] = gold
    records = [record for _, record in iter_records(dataset.path)]
    if len(records) != len(dataset.rows):
        raise ConfigError(f"{dataset.path} changed since it was read; export the labels again", field="data")
    add_id = spec.id is None and not (records and "id" in records[0])
    rows = []
    for row, record in zip(dataset.rows, records, strict=True):
        gold = chosen.get(row.id, row.gold)
        if gold is None:
            continue
        out = {"id": row.id, **record} if add_id else dict(record)
        out[spec.gold] = gold
        rows.append(out)
    return rows
