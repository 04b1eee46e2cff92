"""What ``jurist gate GOLD TRACES`` does: score RAG traces, write the report, return the exit code.

Exit codes: 0 every gate passes; 1 a gate fails (or no trace matched a gold question);
2 bad input (raised as :class:`~jurist.errors.InputError` / :class:`~jurist.errors.ConfigError`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from jurist.atomic import atomic_write_text
from jurist.errors import InputError
from jurist.metrics.gates import DEFAULT_REFUSAL_TOKEN, GateThresholds
from jurist.tasks.gates.records import GateReport
from jurist.tasks.gates.render import render_json, render_markdown
from jurist.tasks.gates.scoring import gate_verdict, score_traces

__all__ = ["run_gate"]


def run_gate(
    gold: str | Path,
    traces: str | Path,
    *,
    thresholds: GateThresholds | None = None,
    refusal_token: str = DEFAULT_REFUSAL_TOKEN,
    as_json: bool = False,
    out: str | Path | None = None,
    stream: TextIO | None = None,
    judged: Callable[[GateThresholds | None, str], GateReport] | None = None,
) -> int:
    """Score traces, write the report, and return the exit code (0 pass, 1 a gate fails).

    Args:
        gold: The gold QA set (JSON list or JSONL).
        traces: The trace file (JSONL).
        thresholds: Gate thresholds; defaults when ``None``.
        refusal_token: The answer that means "refused".
        as_json: Write JSON instead of Markdown.
        out: Write the report to this file, and a one-line summary to ``stream``.
        stream: Where the report (or summary) goes; standard output when ``None``.
        judged: With the claim check (``jurist gate --judge``): given the thresholds and the
            refusal token, the report of an ordinary run of the ``gates`` task by the claim
            judge (:func:`jurist.cli.gates.judged_report`; see :mod:`jurist.tasks.gates.claims`).
            The deterministic metrics never depend on it.

    Raises:
        InputError: Bad input, or ``out`` cannot be written (the CLI exits with status 2).
    """
    if judged is None:
        report = score_traces(gold, traces, thresholds=thresholds, refusal_token=refusal_token)
    else:
        report = judged(thresholds, refusal_token)
    text = render_json(report) if as_json else render_markdown(report)
    stream = stream if stream is not None else sys.stdout
    if out is None:
        stream.write(text)
    else:
        try:
            atomic_write_text(Path(out), text)
        except OSError as exc:
            raise InputError(f"cannot write the report ({exc.strerror})", path=out, field="--out") from None
        stream.write(
            f"gates: {gate_verdict(report)}; {report.totals.traces} traces scored; report written to {out}\n"
        )
    stream.flush()
    return report.exit_code
