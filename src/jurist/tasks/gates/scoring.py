"""Scoring RAG traces against a gold QA set in one pass, and the scores of a gate report.

:func:`score_traces` streams the traces once, adds each to the counts of its gold question,
and builds a :class:`~jurist.tasks.gates.records.GateReport`: overall rates, gates G1-G5,
one row per gold question, and the traces that have no gold question (counted; the first
few listed). Memory grows with the gold set, never with the number of traces.

Duplicate traces: every trace counts. A question with three traces weighs three times in
every rate, and its row shows the three labels.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from jurist.datasets.gates import AMBIGUOUS, GoldIndex, GoldQuestion, TraceRecord, iter_traces, load_gold
from jurist.errors import InputError
from jurist.metrics.gates import (
    DEFAULT_REFUSAL_TOKEN,
    GateCounts,
    GateMetrics,
    GateThresholds,
    TraceScore,
    claim_phrases,
    evaluate_gates,
    normalize_refusal_token,
    score_trace,
)
from jurist.tasks.gates.records import GateReport, QuestionRow, UnmatchedTrace, questions_frame
from jurist.tasks.gates.render import render_markdown, report_to_dict

if TYPE_CHECKING:
    from jurist.tasks._contract import Scores

__all__ = ["TraceObserver", "gate_verdict", "score_traces", "scores_of"]

TraceObserver = Callable[[GoldQuestion, TraceRecord, TraceScore], None]
"""Called with each matched trace and its score, e.g. to collect items for an LLM judge."""


def score_traces(
    gold: str | Path | Sequence[GoldQuestion],
    traces: str | Path | Iterable[TraceRecord],
    *,
    thresholds: GateThresholds | None = None,
    refusal_token: str = DEFAULT_REFUSAL_TOKEN,
    list_limit: int = 20,
    on_trace: TraceObserver | None = None,
) -> GateReport:
    """Score RAG traces against a gold QA set and evaluate the gates.

    Args:
        gold: A gold file (JSON list or JSONL) or gold questions from ``load_gold``.
        traces: A JSONL trace file, or trace records (e.g. from ``iter_traces``).
        thresholds: Gate thresholds; the WFGY example's defaults when ``None``.
        refusal_token: The answer that means "refused" (case-insensitive, stripped).
        list_limit: How many unmatched traces to keep for the report.
        on_trace: Called for every matched trace; it cannot change the deterministic scores.

    Returns:
        The report; ``report.exit_code`` is 0 when every gate passes.

    Raises:
        InputError: Bad gold or trace input, or a trace without a qid whose question text
            belongs to several gold questions.
        ConfigError: An empty refusal token.
    """
    token = normalize_refusal_token(refusal_token)
    gold_source = str(gold) if isinstance(gold, str | Path) else None
    golds = load_gold(gold) if isinstance(gold, str | Path) else list(gold)
    traces_source = str(traces) if isinstance(traces, str | Path) else None
    records = iter_traces(traces) if isinstance(traces, str | Path) else traces

    index = GoldIndex(golds)
    rows = [QuestionRow(g) for g in golds]
    facts = [(g.answerable, g.gold_ids, claim_phrases(g.gold_claim) if g.answerable else ()) for g in golds]
    unmatched: list[UnmatchedTrace] = []
    read = unmatched_count = 0
    match = index.match
    for record in records:
        read += 1
        line, qid, question, answer, citations = record
        i = match(qid, question)
        if i < 0:
            if i == AMBIGUOUS:
                raise InputError(
                    "this question belongs to several gold questions; give the trace a qid",
                    path=traces_source,
                    line=line,
                    field="q" if question is not None else "question",
                )
            unmatched_count += 1
            if len(unmatched) < list_limit:
                unmatched.append(UnmatchedTrace(line, qid, question, index.why_unmatched(qid, question)))
            continue
        answerable, gold_ids, phrases = facts[i]
        score = score_trace(
            answer, citations, answerable=answerable, gold_ids=gold_ids, phrases=phrases, refusal_token=token
        )
        row = rows[i]
        row.counts.add(score)
        if row.first_trace_line is None:
            row.first_trace_line = line
        if on_trace is not None:
            on_trace(golds[i], record, score)

    totals = GateCounts()
    for row in rows:
        totals.merge(row.counts)
    metrics = GateMetrics.from_counts(totals)
    thresholds = thresholds if thresholds is not None else GateThresholds()
    return GateReport(
        gold_source=gold_source,
        traces_source=traces_source,
        refusal_token=token,
        thresholds=thresholds,
        questions=rows,
        totals=totals,
        metrics=metrics,
        gates=evaluate_gates(metrics, thresholds),
        traces_read=read,
        unmatched_count=unmatched_count,
        unmatched=unmatched,
    )


def gate_verdict(report: GateReport) -> str:
    """``PASS``, or ``FAIL`` with the blocking gates (``FAIL (G1, G4)``)."""
    failed = [gate.gate_id for gate in report.gates if gate.blocking]
    return "PASS" if report.passed else "FAIL" + (f" ({', '.join(failed)})" if failed else "")


def scores_of(report: GateReport) -> Scores:
    """A gate report as task scores: the per-question table, the JSON summary, the Markdown.

    ``summary`` is :func:`~jurist.tasks.gates.render.report_to_dict` (what ``jurist gate --json``
    prints), ``report`` is :func:`~jurist.tasks.gates.render.render_markdown` and
    ``extra["report"]`` is the :class:`~jurist.tasks.gates.records.GateReport` itself.
    """
    from jurist.tasks._contract import Scores, json_ready  # pandas: not on `jurist gate`'s path

    return Scores(
        items=questions_frame(report),
        summary=json_ready(report_to_dict(report)),
        report=render_markdown(report),
        extra={"report": report},
    )
