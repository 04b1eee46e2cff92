"""The RAG trace gates task (see :class:`GatesTask`): deterministic scores and pass/fail gates of
recorded RAG traces against a gold QA set, and the optional judged claim check.

The names below are imported on first use (:mod:`jurist._lazy`): ``jurist gate`` scores traces
with :mod:`~jurist.tasks.gates.gate` and :mod:`~jurist.tasks.gates.scoring` alone, which load
neither DSPy nor pandas; the claim judge and the task class load both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist._lazy import lazy_exports

if TYPE_CHECKING:
    from jurist.report.gates_records import GateReport, QuestionRow, UnmatchedTrace
    from jurist.tasks.gates.claims import ClaimItems, collect_claims, make_claim_judge, score_traces_judged
    from jurist.tasks.gates.gate import run_gate
    from jurist.tasks.gates.options import GatesOptions, thresholds_of
    from jurist.tasks.gates.scoring import TraceObserver, gate_verdict, score_traces, scores_of
    from jurist.tasks.gates.task import TASKS, GatesTask

__all__ = [
    "TASKS",
    "ClaimItems",
    "GateReport",
    "GatesOptions",
    "GatesTask",
    "QuestionRow",
    "TraceObserver",
    "UnmatchedTrace",
    "collect_claims",
    "gate_verdict",
    "make_claim_judge",
    "run_gate",
    "score_traces",
    "score_traces_judged",
    "scores_of",
    "thresholds_of",
]

__getattr__, __dir__ = lazy_exports(__name__)
