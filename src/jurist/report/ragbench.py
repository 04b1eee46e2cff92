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
        rows = [[name.replace("_", " "), fmt(value)] for name, value in agreement.items()]
        parts += [table(["figure", "value"], rows), ""]
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


def write_report(path: Path, summary: dict[str, Any], failed: pd.DataFrame) -> None:
    atomic_write_text(path, render_report(summary, failed))
