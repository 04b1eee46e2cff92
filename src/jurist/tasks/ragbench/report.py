"""The Markdown report of a RAGBench run: scores, agreement, failures and usage."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from jurist.atomic import atomic_write_text
from jurist.report.markdown import fmt, table

_LABELS = {
    "context_relevance": "Context relevance",
    "context_utilization": "Context utilization",
    "completeness": "Completeness",
    "adherence_fraction": "Adherence (share of supported sentences)",
    "adherence": "Adherence (response fully supported)",
}


def render_report(summary: dict[str, Any], failed: pd.DataFrame) -> str:
    """Render a run's summary (as in ``summary.json``) and its failed items as Markdown."""
    run = summary.get("run", {})
    parts = ["# RAGBench / TRACe run", ""]
    if run:
        dataset = run.get("dataset") or {}
        parts += [
            f"- judge: `{run.get('judge')}` (model `{run.get('model')}`, "
            f"fingerprint `{run.get('judge_fingerprint')}`)",
            f"- dataset: `{dataset.get('path')}` ({dataset.get('items')} items, "
            f"sha256 `{str(dataset.get('sha256'))[:12]}`)",
            f"- status: {run.get('status')}",
        ]
    parts += [
        f"- items: {summary['items']} — scored {summary['ok']}, failed {summary['failed']}",
        "",
        "## TRACe scores (mean over scored items)",
        "",
    ]
    trace, by_sentences = summary.get("trace", {}), summary.get("trace_by_sentences", {})
    rows = [
        [
            label,
            fmt(trace.get(name, {}).get("mean")),
            fmt(by_sentences.get(name, {}).get("mean")),
            trace.get(name, {}).get("n", 0),
        ]
        for name, label in _LABELS.items()
    ]
    parts += [table(["metric", "token-weighted", "by sentence count", "items with a value"], rows), ""]
    parts += [
        f"Keys naming no sentence, dropped: {summary.get('dropped_keys', 0)}; response sentences the judge "
        f"left unlabeled (counted as unsupported): {summary.get('unlabeled_response_sentences', 0)}.",
        "",
    ]
    agreement = summary.get("agreement")
    if agreement:
        parts += ["## Agreement with gold labels", ""]
        rows = [
            [name.replace("_", " "), fmt(value)] for name, value in agreement.items() if name != "excluded"
        ]
        parts += [table(["figure", "value"], rows), ""]
    parts += _gold_keys(summary.get("gold_sentence_keys"))
    parts += _excluded(summary)
    usage = summary.get("usage", {})
    latency = summary.get("latency_s", {})
    parts += [
        "## Usage",
        "",
        table(
            [
                "provider calls",
                "cache hits",
                "prompt tokens",
                "completion tokens",
                "cost (USD)",
                "latency mean (s)",
                "p95 (s)",
            ],
            [
                [
                    usage.get("calls"),
                    usage.get("cache_hits"),
                    usage.get("prompt_tokens"),
                    usage.get("completion_tokens"),
                    fmt(usage.get("cost"), 4),
                    fmt(latency.get("mean")),
                    fmt(latency.get("p95")),
                ]
            ],
        ),
        "",
    ]
    parts += ["## Failed items", ""]
    if failed.empty:
        parts += ["None.", ""]
    else:
        shown = failed.head(50)
        parts += [
            table(["id", "kind", "error"], shown[["id", "error_type", "error"]].itertuples(index=False)),
            "",
        ]
        if len(failed) > len(shown):
            parts += [
                f"… and {len(failed) - len(shown)} more (see items.csv; raw answers in results.jsonl).",
                "",
            ]
        else:
            parts += ["Raw answers of failed items are in results.jsonl.", ""]
    return "\n".join(parts)


def _gold_keys(keys: dict[str, Any] | None) -> list[str]:
    """The section on gold sentence keys read under another spelling."""
    if not keys:
        return []
    parts = [
        "## Gold sentence keys",
        "",
        f"{keys.get('normalised', 0)} of {keys.get('keys', 0)} gold sentence keys were written in "
        f"another spelling and normalised on reading (in {keys.get('rows', 0)} rows; surrounding "
        "whitespace, quotes, brackets and trailing punctuation removed, lowercased).",
        "",
    ]
    fixes = keys.get("fixes") or []
    if fixes:
        shown = fixes[:20]
        rows = [
            [
                fix["id"],
                fix["field"],
                f"`{fix['key']}`",
                f"`{fix['normalised']}`",
                "yes" if fix["duplicate"] else "",
            ]
            for fix in shown
        ]
        parts += [table(["id", "field", "as written", "read as", "repeat, kept once"], rows), ""]
        if len(fixes) > len(shown):
            parts += [f"… and {len(fixes) - len(shown)} more (see summary.json).", ""]
    return parts


def _excluded(summary: dict[str, Any]) -> list[str]:
    """The section counting, for every figure, the rows left out of it and why."""
    excluded = {**summary.get("excluded", {}), **(summary.get("agreement") or {}).get("excluded", {})}
    parts = ["## Rows left out of a figure", ""]
    if not excluded:
        return [*parts, "None: every figure uses every row.", ""]
    rows = [
        [name.replace("_", " ") if first else "", reason, count]
        for name, reasons in excluded.items()
        for first, (reason, count) in zip([True] + [False] * (len(reasons) - 1), reasons.items(), strict=True)
    ]
    parts += [
        "Each row left out of a figure is counted once, under the first reason that applies.",
        "",
    ]
    return [*parts, table(["figure", "why left out", "rows"], rows), ""]


def write_report(path: Path, summary: dict[str, Any], failed: pd.DataFrame) -> None:
    atomic_write_text(path, render_report(summary, failed))
