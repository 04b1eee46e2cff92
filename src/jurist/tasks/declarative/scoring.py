"""Scoring a recorded run of a YAML task: the per-item table, the summary and the report.

Failed items are counted and listed (``failed_ids``), never scored: agreement with gold
uses the items the judge answered, and ``gold.failed`` says how many gold rows had no
usable answer. A pairwise row is scored only when both of its orders were answered.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from jurist.metrics import preference
from jurist.metrics.weighted import continuous_agreement, order_preference
from jurist.report.console import Headline, compact_table, number
from jurist.report.markdown import summary_markdown
from jurist.report.standard_figures import is_present
from jurist.schemas import ItemResult
from jurist.tasks._read_once import read_once
from jurist.tasks.declarative.agreement import calibration_figures, gold_agreement, pair_figures
from jurist.tasks.declarative.data import GoldColumns, positions_of, read_gold_columns, split_item_id
from jurist.tasks.declarative.spec import TaskFile
from jurist.tasks.declarative.verdicts import verdict_text

__all__ = [
    "console_lines",
    "expected_score_agreement",
    "gold_columns",
    "item_row",
    "kind_headline",
    "pairs_table",
    "report_markdown",
    "scored_pairs",
    "present",
    "read_gold_once",
    "summarize_items",
    "weighted_counts",
]


def item_row(spec: TaskFile, result: ItemResult) -> dict[str, Any]:
    """One row of the per-item table: status and usage, the verdict, its reasoning and confidence
    (and ``normalised_from`` when the verdict was a label normalised from what the judge wrote)."""
    row = result.table_row()
    output = result.output if result.status == "ok" and result.output else {}
    row["verdict"] = output.get("verdict")
    row["reasoning"] = output.get("reasoning")
    row["confidence"] = output.get("confidence")
    if "normalised_from" in output:  # a label normalised from another case or spacing
        row["normalised_from"] = output["normalised_from"]
    if "weighted" in output:  # judged with logprobs: true (jurist.tasks.declarative.weighted)
        row["weighted"] = output["weighted"]
        row["unweighted"] = output.get("unweighted")
        probabilities = output.get("probabilities")
        row["probabilities"] = json.dumps(probabilities) if probabilities is not None else None
        if spec.output.confidence:
            row["stated_confidence"] = output.get("stated_confidence", output.get("confidence"))
        if spec.kind == "score":
            row["expected_score"] = output.get("expected_score")
    if spec.kind == "pairwise":
        base, order = split_item_id(result.id)
        row["pair_id"] = base
        row["order"] = output.get("order", order)
        row["winner"] = (
            preference.winner(row["verdict"], order or "AB") if row["verdict"] is not None else None
        )
    return row


def pairs_table(items: pd.DataFrame, rows: GoldColumns | None = None) -> pd.DataFrame:
    """One row per pairwise data row: both orders' answers, their winners and the combined verdict.

    Args:
        items: The per-item table (one row per order).
        rows: The data's rows (:func:`~jurist.tasks.declarative.data.read_gold_columns`), for
            the responses' lengths (words) and the gold verdict.
    """
    records: dict[str, dict[str, Any]] = {}
    if len(items):
        for item in items.to_dict(orient="records"):
            base, order = split_item_id(str(item["id"]))
            record = records.setdefault(base, {"id": base})
            ok = item.get("status") == "ok" and isinstance(item.get("verdict"), str)
            record[f"choice_{order}"] = item["verdict"] if ok else None
            record[f"winner_{order}"] = preference.winner(item["verdict"], order or "AB") if ok else None
            if "weighted" in item:  # judged with logprobs: true
                # Only a weighed output has probabilities (jurist.tasks.declarative.weighted).
                found = (
                    json.loads(item["probabilities"])
                    if ok and isinstance(item.get("probabilities"), str)
                    else None
                )
                record[f"preference_{order}"] = order_preference(found, order or "AB") if found else None
                record[f"tie_{order}"] = found.get("tie", 0.0) if found else None
    # Data order (else id order), never the order the items finished in: the bootstrap
    # intervals resample rows, so they must not depend on which judgment finished first.
    keys = list(records)
    known = len(rows) if rows is not None else 0
    at = rows.positions(keys).tolist() if rows is not None else [-1] * len(keys)
    rank = {key: position if position >= 0 else known for key, position in zip(keys, at, strict=True)}
    ordered = sorted(records.values(), key=lambda record: (rank[record["id"]], record["id"]))
    table = pd.DataFrame(ordered)
    for column in ("id", "choice_AB", "choice_BA", "winner_AB", "winner_BA"):
        if column not in table:
            table[column] = None
    table = table.astype(object).where(table.notna(), None)
    table["verdict"] = [
        preference.combined_verdict(a, b) for a, b in zip(table["winner_AB"], table["winner_BA"], strict=True)
    ]
    if any(column.startswith("preference_") for column in table):
        # Swap-averaged probability that B is preferred (a tie half), when both orders were weighed.
        for column in ("preference_AB", "preference_BA", "tie_AB", "tie_BA"):
            if column not in table:
                table[column] = None
        table["weighted_preference"] = [
            (a + b) / 2 if a is not None and b is not None else None
            for a, b in zip(table["preference_AB"], table["preference_BA"], strict=True)
        ]
        table["weighted_tie"] = [
            (a + b) / 2 if a is not None and b is not None else None
            for a, b in zip(table["tie_AB"], table["tie_BA"], strict=True)
        ]
    if rows is not None:
        found = rows.positions([str(i) for i in table["id"]]).tolist()
        lengths = rows.lengths if rows.lengths is not None else np.full((len(rows), 2), -1)
        sized = [p if p >= 0 and lengths[p, 0] >= 0 else -1 for p in found]
        table["length_a"] = [int(lengths[p, 0]) if p >= 0 else None for p in sized]
        table["length_b"] = [int(lengths[p, 1]) if p >= 0 else None for p in sized]
        table["gold"] = [rows.values[p] if p >= 0 else None for p in found]
    return table


def scored_pairs(pairs: pd.DataFrame) -> pd.DataFrame:
    """The pairs with a gold verdict and both orders answered."""
    if "gold" not in pairs:
        return pairs.iloc[0:0]
    return pairs[pairs["gold"].notna() & pairs["verdict"].notna()]


def _distribution(spec: TaskFile, verdicts: list[Any]) -> dict[str, Any]:
    if not verdicts:
        return {}
    if spec.kind == "score":
        values = np.asarray(verdicts, dtype=float)
        return {"mean": float(values.mean()), "min": float(values.min()), "max": float(values.max())}
    if spec.kind == "labels":
        return {label: sum(label in v for v in verdicts) for label in spec.output.labels or []}
    counts: dict[str, int] = {}
    for verdict in verdicts:
        counts[verdict_text(verdict)] = counts.get(verdict_text(verdict), 0) + 1
    return dict(sorted(counts.items()))


def read_gold_once(spec: TaskFile, gold: str | Path) -> GoldColumns:
    """The gold file's rows (:func:`~jurist.tasks.declarative.data.read_gold_columns`), read
    once inside :func:`~jurist.tasks._read_once.reading_once` for the same task and file."""
    return read_once(f"gold of {spec.name}", gold, lambda: read_gold_columns(spec, gold))


_ANSWER_COLUMNS = (
    "id",
    "verdict",
    "confidence",
    "expected_score",
    "normalised_from",
    "weighted",
    "unweighted",
    "probabilities",
    "winner",
)
"""The columns of the per-item table the summary reads (not the judged texts or replies)."""


def _answered(items: pd.DataFrame) -> pd.DataFrame:
    """The answered items (status ``ok``) with only the columns the summary reads."""
    if "status" not in items:
        return items.iloc[0:0]
    return items.loc[items["status"] == "ok", [column for column in _ANSWER_COLUMNS if column in items]]


def summarize_items(
    spec: TaskFile, items: pd.DataFrame, gold: str | Path | None, settings: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The summary figures of a per-item table.

    ``gold`` is a data file with the task's gold column (the judged file itself, for
    ``jurist judge``); without it, or for a task without ``gold``, only the verdicts'
    distribution (and, pairwise, consistency and position bias) is reported. Items are
    matched to gold rows by id on arrays (no object per row), in the gold file's order.
    """
    ok = _answered(items)
    summary: dict[str, Any] = {"kind": spec.kind}
    # Verdicts read from a label with only a different letter case or spacing (never silent).
    summary["normalised_verdicts"] = (
        int(ok["normalised_from"].notna().sum()) if "normalised_from" in ok else 0
    )
    weighed = "weighted" in ok  # judged with logprobs: true
    if weighed:
        summary["weighted"] = weighted_counts(ok)
    if spec.kind == "pairwise":
        rows = read_gold_once(spec, gold) if gold is not None else None
        pairs = pairs_table(items, rows)
        summary["verdicts"] = _distribution(spec, [v for v in pairs["verdict"] if v is not None])
        summary["pairs"] = pair_figures(pairs, settings)
        if spec.gold is None or gold is None:
            return summary
        labelled = pairs[pairs["gold"].notna()]
        scored = scored_pairs(pairs)
        summary["gold"] = {
            "column": spec.gold,
            "rows": len(labelled),
            "scored": len(scored),
            "not_scored": len(labelled) - len(scored),
        }
        figures, _ = gold_agreement(
            spec, list(scored["gold"]), list(scored["verdict"]), settings=settings, by_label=False
        )
        if weighed and rows is not None:
            figures.update(_order_calibration(spec, ok, rows))
        summary["agreement"] = figures
        return summary
    summary["verdicts"] = _distribution(spec, list(ok["verdict"]) if "verdict" in ok else [])
    if spec.gold is None or gold is None:
        return summary
    gold_rows = read_gold_once(spec, gold).labelled()
    if items.attrs.get("selection") and "id" in items:
        # Some rows were judged (--limit, --sample): only their gold counts.
        gold_rows = gold_rows.take(positions_of(items["id"], gold_rows.ids) >= 0)
    # Each gold row's answered item (the last one with its id), by position: no dict per row.
    at = positions_of(ok["id"], gold_rows.ids) if len(ok) else np.full(len(gold_rows), -1)
    found = at >= 0
    taken = at[found]
    golds = gold_rows.values[found].tolist()

    def column(name: str) -> list[Any]:
        return ok[name].iloc[taken].tolist() if name in ok else [None] * len(taken)

    judged = column("verdict")
    summary["gold"] = {
        "column": spec.gold,
        "rows": len(gold_rows),
        "scored": len(golds),
        "not_scored": len(gold_rows) - len(golds),
        # Gold labels read as a listed label written with another case or spacing.
        "normalised": int(gold_rows.normalised.sum()),
    }
    confidence = [present(v) for v in column("confidence")] if spec.output.confidence or weighed else None
    figures, _ = gold_agreement(spec, golds, judged, confidence, settings, by_label=False)
    summary["agreement"] = figures
    if weighed and spec.kind == "score":
        summary["weighted"].update(
            expected_score_agreement(golds, judged, [present(v) for v in column("expected_score")])
        )
    return summary


def _order_calibration(spec: TaskFile, ok: pd.DataFrame, rows: GoldColumns) -> dict[str, Any]:
    """``ece`` of a weighed pairwise run: each order's confidence in its answer against the
    answer naming the gold winner (orders of rows without gold left out)."""
    gold: list[Any] = []
    winners: list[Any] = []
    confidence: list[float | None] = []
    at = rows.positions([split_item_id(str(key))[0] for key in ok["id"]]).tolist()
    for position, winner, value in zip(at, ok["winner"], ok["confidence"], strict=True):
        found = rows.values[position] if position >= 0 else None
        if found is None or present(value) is None:
            continue
        gold.append(found)
        winners.append(winner)
        confidence.append(float(value))
    return calibration_figures(spec, gold, winners, confidence)


def present(value: Any) -> Any:
    """``value``, or ``None`` for a missing cell (:func:`~jurist.report.standard_figures.is_present`)."""
    return value if is_present(value) else None


def weighted_counts(ok: pd.DataFrame) -> dict[str, Any]:
    """How many answered items were weighed by their token probabilities, and why the others
    were not (``{reason: items}``)."""
    weighed = int(ok["probabilities"].notna().sum()) if "probabilities" in ok else 0
    reasons: dict[str, int] = {}
    if "unweighted" in ok:
        for reason in ok["unweighted"]:
            if isinstance(reason, str):
                reasons[reason] = reasons.get(reason, 0) + 1
    return {"items": weighed, "answered": len(ok), "not_weighted": dict(sorted(reasons.items()))}


def expected_score_agreement(gold: list[Any], sampled: list[Any], expected: list[Any]) -> dict[str, Any]:
    """Agreement with gold of the expected scores and of the sampled ones, on the same items:
    those weighed (:func:`jurist.metrics.weighted.continuous_agreement`)."""
    kept = [
        (float(g), float(s), float(e))
        for g, s, e in zip(gold, sampled, expected, strict=True)
        if e is not None
    ]
    golds = [g for g, _, _ in kept]
    return {
        "expected_score": continuous_agreement(golds, [e for _, _, e in kept]),
        "sampled_score": continuous_agreement(golds, [s for _, s, _ in kept]),
    }


def gold_columns(spec: TaskFile, items: pd.DataFrame, gold: str | Path | None) -> pd.DataFrame:
    """The per-item table with ``gold`` and ``correct`` columns when gold is known (score: also
    ``abs_error``; ``correct`` is then the exact agreement)."""
    if spec.gold is None or gold is None or items.empty:
        return items
    rows = read_gold_once(spec, gold)
    table = items.copy(deep=False)  # new columns only: the item columns are shared, not copied
    key = table["pair_id"] if spec.kind == "pairwise" else table["id"]
    at = rows.positions(key)
    gold_values = np.full(len(table), None, dtype=object)
    gold_values[at >= 0] = rows.values[at[at >= 0]]
    table["gold"] = pd.Series(gold_values, index=table.index, dtype=object)
    correct: list[Any] = []
    winners = table["winner"] if "winner" in table else [None] * len(table)
    for verdict, status, value, winner in zip(
        table["verdict"], table["status"], gold_values, winners, strict=True
    ):
        if status != "ok" or value is None:
            correct.append(None)
        elif spec.kind == "pairwise":
            correct.append(winner == value)
        elif spec.kind == "score":
            correct.append(abs(float(verdict) - float(value)))
        else:
            correct.append(verdict == value)
    table["abs_error" if spec.kind == "score" else "correct"] = pd.Series(
        correct, index=table.index, dtype=object
    )
    if spec.kind == "score":
        exact = [None if error is None else error == 0 for error in correct]
        table["correct"] = pd.Series(exact, index=table.index, dtype=object)
    return table


def report_markdown(title: str, summary: dict[str, Any]) -> str:
    """The Markdown report: every figure of the summary, then the confusion matrix if any."""
    plain = {key: value for key, value in summary.items() if key != "agreement"}
    agreement = dict(summary.get("agreement") or {})
    confusion = agreement.pop("confusion", None)
    per_label = agreement.pop("per_label", None)
    text = summary_markdown(title, {**plain, "agreement": agreement} if agreement else plain)
    if per_label:
        lines = ["## per label", "", "| label | precision | recall | f1 | gold |", "|---|---|---|---|---|"]
        for label, values in per_label.items():
            cells = [_fmt(values.get(name)) for name in ("precision", "recall", "f1", "gold")]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        text += "\n" + "\n".join(lines) + "\n"
    if confusion:
        labels = confusion["labels"]
        lines = [
            "## confusion (rows: gold, columns: judge)",
            "",
            "| gold \\ judge | " + " | ".join(labels) + " |",
        ]
        lines.append("|---" * (len(labels) + 1) + "|")
        for label, counts in zip(labels, confusion["matrix"], strict=True):
            lines.append(f"| {label} | " + " | ".join(str(c) for c in counts) + " |")
        text += "\n" + "\n".join(lines) + "\n"
    return text


def _fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "n/a"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def kind_headline(spec: TaskFile, summary: dict[str, Any]) -> list[Headline]:
    """The headline figures of a YAML task's summary by output kind (none without gold, but a
    pairwise run's consistency, which needs none)."""
    agreement = summary.get("agreement") or {}
    keys: list[tuple[str, str | None]]
    if spec.kind == "score":
        first = "qwk" if spec.output.range else "spearman"
        keys = [(first, None), ("mae", None)]
    elif spec.kind == "label":
        keys = [("accuracy", None), ("kappa", None)]
    elif spec.kind == "bool":
        keys = [("accuracy", None), ("auroc" if "auroc" in agreement else "kappa", None)]
    elif spec.kind == "labels":
        keys = [("micro_f1", None)]
    else:
        keys = [("accuracy", "agreement")]
    found = [Headline.of(agreement, key, name) for key, name in keys]
    if spec.kind == "pairwise":
        found.append(Headline.of(summary.get("pairs") or {}, "consistency"))
    return [figure for figure in found if figure is not None]


def console_lines(title: str, summary: dict[str, Any], headline: list[Headline]) -> list[str]:
    """What ``jurist score`` prints for a YAML task: the compact table (headline first), then
    the per-label precision, recall and F1 and the confusion matrix (rows gold)."""
    agreement = dict(summary.get("agreement") or {})
    confusion = agreement.pop("confusion", None)
    per_label = agreement.pop("per_label", None)
    plain = (
        {**summary, "agreement": agreement}
        if agreement
        else {key: value for key, value in summary.items() if key != "agreement"}
    )
    lines = [compact_table(title, plain, headline)]
    if per_label:
        width = max(len(str(label)) for label in per_label)
        lines.append("per label:" + " " * max(width - 8, 0) + "  precision  recall  F1     gold")
        for label, values in per_label.items():
            cells = [number(values.get(name)).ljust(6) for name in ("precision", "recall", "f1")]
            lines.append(
                f"  {str(label).ljust(width)}  {cells[0]}     {cells[1]}  {cells[2]} {values.get('gold')}"
            )
    if confusion:
        labels = [str(label) for label in confusion["labels"]]
        width = max([len(label) for label in labels] + [4])
        lines.append("confusion (rows: gold, columns: judge):")
        lines.append("  " + " " * width + "  " + "  ".join(label.rjust(width) for label in labels))
        for label, counts in zip(labels, confusion["matrix"], strict=True):
            lines.append(f"  {label.ljust(width)}  " + "  ".join(str(count).rjust(width) for count in counts))
    return lines
