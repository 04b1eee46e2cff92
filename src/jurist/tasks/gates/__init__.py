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
    from jurist.tasks.gates.claims import ClaimItems, collect_claims
    from jurist.tasks.gates.gate import run_gate
    from jurist.tasks.gates.options import GatesOptions, thresholds_of
    from jurist.tasks.gates.records import GateReport, QuestionRow, UnmatchedTrace
    from jurist.tasks.gates.scoring import TraceObserver, gate_verdict, scores_of
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
    "run_gate",
    "scores_of",
    "thresholds_of",
]

__getattr__, __dir__ = lazy_exports(__name__)
