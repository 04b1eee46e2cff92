"""Rendering of a gate report: Markdown (for CI logs and PRs), JSON, and the per-question table.

The report itself (:class:`~jurist.tasks.gates.records.GateReport`) is built by
:func:`jurist.tasks.gates.scoring.score_traces`; this module only renders it.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from jurist.metrics.gates import LABELS, METRIC_TITLES, GateResult, GateStatus, Ratio
from jurist.report.jsonout import dumps
from jurist.report.markdown import cell, table
from jurist.tasks.gates.records import GateReport, QuestionRow, question_record, questions_frame

__all__ = ["render_json", "render_markdown", "report_to_dict", "questions_frame"]


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _ratio_text(ratio: Ratio) -> str:
    return f"{_pct(ratio.value)} ({ratio.numerator}/{ratio.denominator})"


def _label_text(row: QuestionRow) -> str:
    if row.label is not None:
        return f"**{row.label}**"
    ranked = sorted(row.label_counts.items(), key=lambda kv: -kv[1])
    return ", ".join(f"{label} ×{n}" for label, n in ranked)


def _gate_text(gate: GateResult) -> str:
    if gate.status is GateStatus.PASS:
        return "pass"
    if gate.status is GateStatus.FAIL:
        return "**FAIL**"
    return "**n/a: fails (fail_on_na)**" if gate.blocking else "n/a (skipped)"


def render_markdown(report: GateReport) -> str:
    """Render the report as Markdown: summary, metrics, gates, per-question table, unmatched lists."""
    totals = report.totals
    golds = [row.gold for row in report.questions]
    answerable = sum(1 for g in golds if g.answerable)
    missing = report.gold_without_trace
    blocking = [gate.gate_id for gate in report.gates if gate.blocking]
    if not totals.traces:
        verdict = "**No trace matched a gold question: the gates fail.**"
    else:
        verdict = f"**Failed: {', '.join(blocking)}.**" if blocking else "**All gates pass.**"
    out = [
        f"# RAG trace gates: {'PASS' if report.passed else 'FAIL'}",
        "",
        f"- Gold: `{report.gold_source or '(in memory)'}`: {len(golds)} questions "
        f"({answerable} answerable, {len(golds) - answerable} unanswerable)",
        f"- Traces: `{report.traces_source or '(in memory)'}`: {report.traces_read} read, "
        f"**{totals.traces} scored**, {report.unmatched_count} with no gold question",
        f"- Gold questions with no trace: {len(missing)}; with several traces: {report.repeated_questions}",
        f"- Refusal token: `{report.refusal_token}`",
        "",
        "## Metrics",
        "",
    ]
    metric_rows = [(METRIC_TITLES[name], _ratio_text(r)) for name, r in report.metrics.as_dict().items()]
    metric_rows += [(name, _pct(value)) for name, value in report.extra_metrics.items()]
    out += [table(["metric", "value (count)"], metric_rows), "", "## Gates", ""]
    gate_rows = [
        (
            gate.gate_id,
            METRIC_TITLES.get(gate.metric, gate.metric),
            _pct(gate.value),
            f"{'≥' if gate.comparator == '>=' else '≤'} {gate.threshold:g}",
            _gate_text(gate),
        )
        for gate in report.gates
    ]
    out += [table(["gate", "metric", "value", "threshold", "result"], gate_rows), "", verdict]
    out += _question_section(report)
    out += _unmatched_section(report)
    if missing:
        out += ["", f"## Gold questions with no trace ({len(missing)})", ""]
        out += [f"- {cell(g.label)} (gold line {g.line})" for g in missing]
    return "\n".join(out) + "\n"


def _question_section(report: GateReport) -> list[str]:
    extras = list(dict.fromkeys(key for row in report.questions for key in row.extra))
    head = ["qid", "answerable", "traces", "answered", "hit", "refused", "label", "trace line", *extras]
    rows = [
        (
            row.gold.label,
            row.gold.answerable,
            row.counts.traces,
            row.counts.answered,
            row.counts.hit,
            row.counts.refused,
            _label_text(row),
            row.first_trace_line,
            *(row.extra.get(key) for key in extras),
        )
        for row in report.questions
        if row.counts.traces
    ]
    return ["", "## Per-question", "", table(head, rows)]


def _unmatched_section(report: GateReport) -> list[str]:
    if not report.unmatched_count:
        return []
    rows = [(t.line, t.qid or "", t.question or "", t.reason) for t in report.unmatched]
    out = ["", f"## Traces with no gold question ({report.unmatched_count})", ""]
    out.append(table(["trace line", "qid", "question", "reason"], rows))
    rest = report.unmatched_count - len(report.unmatched)
    if rest > 0:
        out += ["", f"… and {rest} more not listed."]
    return out


def report_to_dict(report: GateReport) -> dict[str, Any]:
    """The report as JSON-ready data; rates are ``{"value", "numerator", "denominator"}``, n/a is null."""
    metrics = {
        name: {"value": ratio.value, "numerator": ratio.numerator, "denominator": ratio.denominator}
        for name, ratio in report.metrics.as_dict().items()
    }
    return {
        "passed": report.passed,
        "exit_code": report.exit_code,
        "inputs": {
            "gold": report.gold_source,
            "traces": report.traces_source,
            "refusal_token": report.refusal_token,
        },
        "thresholds": asdict(report.thresholds),
        "counts": {
            "gold_questions": len(report.questions),
            "traces_read": report.traces_read,
            "traces_scored": report.totals.traces,
            "traces_unmatched": report.unmatched_count,
            "gold_without_trace": len(report.gold_without_trace),
            "questions_with_several_traces": report.repeated_questions,
            **{label.value.lower(): report.totals.label_count(label) for label in LABELS},
        },
        "metrics": metrics,
        "extra_metrics": dict(report.extra_metrics),
        "gates": [
            {
                "gate": gate.gate_id,
                "metric": gate.metric,
                "comparator": gate.comparator,
                "threshold": gate.threshold,
                "value": gate.value,
                "status": gate.status.value,
                "blocking": gate.blocking,
            }
            for gate in report.gates
        ],
        "questions": [question_record(row) for row in report.questions],
        "unmatched_traces": {
            "count": report.unmatched_count,
            "listed": [asdict(trace) for trace in report.unmatched],
        },
        "gold_without_trace": [{"qid": g.qid, "question": g.question} for g in report.gold_without_trace],
    }


def render_json(report: GateReport) -> str:
    """Render the report as indented JSON (see :func:`report_to_dict`)."""
    return dumps(report_to_dict(report), ensure_ascii=False) + "\n"
