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
from jurist.schemas import ItemResult
from jurist.tasks.declarative.agreement import calibration_figures, gold_agreement, pair_figures
from jurist.tasks.declarative.baseline import word_count
from jurist.tasks.declarative.data import Row, read_gold, split_item_id
from jurist.tasks.declarative.spec import TaskFile
from jurist.tasks.declarative.verdicts import verdict_text

__all__ = [
    "console_lines",
    "expected_score_agreement",
    "item_row",
    "kind_headline",
    "pairs_table",
    "report_markdown",
    "scored_pairs",
    "present",
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


def pairs_table(items: pd.DataFrame, rows: dict[str, Row] | None = None) -> pd.DataFrame:
    """One row per pairwise data row: both orders' answers, their winners and the combined verdict.

    Args:
        items: The per-item table (one row per order).
        rows: Data rows by id, for the responses' lengths (words) and the gold verdict.
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
    position = {str(key): index for index, key in enumerate(rows or {})}
    ordered = sorted(
        records.values(), key=lambda record: (position.get(record["id"], len(position)), record["id"])
    )
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
        found = [rows.get(str(i)) for i in table["id"]]
        known = [r if r and {"response_a", "response_b"} <= set(r.inputs) else None for r in found]
        table["length_a"] = [word_count(r.inputs["response_a"]) if r else None for r in known]
        table["length_b"] = [word_count(r.inputs["response_b"]) if r else None for r in known]
        table["gold"] = [r.gold if r else None for r in found]
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


def summarize_items(
    spec: TaskFile, items: pd.DataFrame, gold: str | Path | None, settings: dict[str, Any] | None = None
) -> tuple[dict[str, Any], pd.DataFrame]:
    """The summary figures of a per-item table, and the per-label agreement table.

    ``gold`` is a data file with the task's gold column (the judged file itself, for
    ``jurist judge``); without it, or for a task without ``gold``, only the verdicts'
    distribution (and, pairwise, consistency and position bias) is reported.
    """
    ok = items[items["status"] == "ok"] if "status" in items else items.iloc[0:0]
    summary: dict[str, Any] = {"kind": spec.kind}
    # Verdicts read from a label with only a different letter case or spacing (never silent).
    summary["normalised_verdicts"] = (
        int(ok["normalised_from"].notna().sum()) if "normalised_from" in ok else 0
    )
    weighed = "weighted" in ok  # judged with logprobs: true
    if weighed:
        summary["weighted"] = weighted_counts(ok)
    empty = pd.DataFrame(columns=["side", "label", "n", "agreed", "rate", "rate_low", "rate_high"])
    if spec.kind == "pairwise":
        rows = read_gold(spec, gold, every_row=True) if gold is not None else None
        pairs = pairs_table(items, rows)
        summary["verdicts"] = _distribution(spec, [v for v in pairs["verdict"] if v is not None])
        summary["pairs"] = pair_figures(pairs, settings)
        if spec.gold is None or gold is None:
            return summary, empty
        labelled = pairs[pairs["gold"].notna()]
        scored = scored_pairs(pairs)
        summary["gold"] = {
            "column": spec.gold,
            "rows": len(labelled),
            "scored": len(scored),
            "not_scored": len(labelled) - len(scored),
        }
        figures, table = gold_agreement(
            spec, list(scored["gold"]), list(scored["verdict"]), settings=settings
        )
        if weighed and rows is not None:
            figures.update(_order_calibration(spec, ok, rows))
        summary["agreement"] = figures
        return summary, table
    summary["verdicts"] = _distribution(spec, list(ok["verdict"]) if "verdict" in ok else [])
    if spec.gold is None or gold is None:
        return summary, empty
    gold_rows = read_gold(spec, gold, inputs=False)
    if items.attrs.get("selection") and "id" in items:
        # Some rows were judged (--limit, --sample): only their gold counts.
        judged = {str(key) for key in items["id"]}
        gold_rows = {key: row for key, row in gold_rows.items() if key in judged}
    # The verdict, confidence and expected score of each answered item by id: columns, not a
    # dict per row.
    by_id: dict[str, tuple[Any, Any, Any]] = {}
    if len(ok):
        confidences = ok["confidence"] if "confidence" in ok else [None] * len(ok)
        expected = ok["expected_score"] if "expected_score" in ok else [None] * len(ok)
        by_id = {
            str(key): (verdict, present(value), present(mean))
            for key, verdict, value, mean in zip(ok["id"], ok["verdict"], confidences, expected, strict=True)
        }
    matched = [(row.gold, by_id[key]) for key, row in gold_rows.items() if key in by_id]
    summary["gold"] = {
        "column": spec.gold,
        "rows": len(gold_rows),
        "scored": len(matched),
        "not_scored": len(gold_rows) - len(matched),
        # Gold labels read as a listed label written with another case or spacing.
        "normalised": sum(row.gold_given is not None for row in gold_rows.values()),
    }
    confidence = [item[1] for _, item in matched] if spec.output.confidence or weighed else None
    figures, table = gold_agreement(
        spec, [g for g, _ in matched], [item[0] for _, item in matched], confidence, settings
    )
    summary["agreement"] = figures
    if weighed and spec.kind == "score":
        summary["weighted"].update(
            expected_score_agreement(
                [g for g, _ in matched], [item[0] for _, item in matched], [item[2] for _, item in matched]
            )
        )
    return summary, table


def _order_calibration(spec: TaskFile, ok: pd.DataFrame, rows: dict[str, Row]) -> dict[str, Any]:
    """``ece`` of a weighed pairwise run: each order's confidence in its answer against the
    answer naming the gold winner (orders of rows without gold left out)."""
    gold: list[Any] = []
    winners: list[Any] = []
    confidence: list[float | None] = []
    for key, winner, value in zip(ok["id"], ok["winner"], ok["confidence"], strict=True):
        row = rows.get(split_item_id(str(key))[0])
        if row is None or row.gold is None or present(value) is None:
            continue
        gold.append(row.gold)
        winners.append(winner)
        confidence.append(float(value))
    return calibration_figures(spec, gold, winners, confidence)


def present(value: Any) -> Any:
    """``value``, or ``None`` for a missing cell (NaN in a float column)."""
    return None if value is None or (isinstance(value, float) and value != value) else value


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
    gold_rows = read_gold(spec, gold, inputs=False)
    table = items.copy(deep=False)  # new columns only: the item columns are shared, not copied
    key = table["pair_id"] if spec.kind == "pairwise" else table["id"]
    gold_values = [gold_rows[str(k)].gold if str(k) in gold_rows else None for k in key]
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
