"""The records of a gate report: what scoring RAG traces produces and the renderers read.

:class:`GateReport` (overall counts and rates, gates, one :class:`QuestionRow` per gold
question, the :class:`UnmatchedTrace` list) is built by
:func:`jurist.tasks.gates.scoring.score_traces` and rendered by :mod:`jurist.tasks.gates.render`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jurist.datasets.gates import GoldQuestion
from jurist.metrics.gates import LABELS, GateCounts, GateMetrics, GateResult, GateThresholds, Label

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["GateReport", "QuestionRow", "UnmatchedTrace", "question_record", "questions_frame"]


@dataclass(slots=True)
class QuestionRow:
    """The traces of one gold question, aggregated."""

    gold: GoldQuestion
    counts: GateCounts = field(default_factory=GateCounts)
    first_trace_line: int | None = None
    """The line of the question's first trace in the trace file."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Additional per-question columns (e.g. an LLM judge's verdict), rendered after the others."""

    @property
    def label_counts(self) -> dict[Label, int]:
        """How many traces got each label (labels with no trace left out)."""
        return {label: n for label in LABELS if (n := self.counts.label_count(label))}

    @property
    def label(self) -> Label | None:
        """The label shared by all the question's traces; ``None`` if none or they differ."""
        labels = self.label_counts
        return next(iter(labels)) if len(labels) == 1 else None


@dataclass(frozen=True, slots=True)
class UnmatchedTrace:
    """A trace with no gold question."""

    line: int | None
    qid: str | None
    question: str | None
    reason: str


@dataclass(slots=True)
class GateReport:
    """The result of scoring a trace file against a gold QA set."""

    gold_source: str | None
    traces_source: str | None
    refusal_token: str
    thresholds: GateThresholds
    questions: list[QuestionRow]
    """One row per gold question, in gold file order (including questions with no trace)."""
    totals: GateCounts
    metrics: GateMetrics
    gates: list[GateResult]
    """G1-G5; further gates may be appended and take part in :attr:`passed`."""
    traces_read: int
    unmatched_count: int
    unmatched: list[UnmatchedTrace]
    """The first unmatched traces (at most the ``list_limit`` given to ``score_traces``)."""
    extra_metrics: dict[str, float | None] = field(default_factory=dict)
    """Additional overall metrics (e.g. from an LLM judge), reported after the others."""

    @property
    def passed(self) -> bool:
        """True when at least one trace was scored and no gate blocks."""
        return self.totals.traces > 0 and not any(gate.blocking for gate in self.gates)

    @property
    def exit_code(self) -> int:
        """0 when :attr:`passed`, else 1 (2 is kept for bad input)."""
        return 0 if self.passed else 1

    @property
    def gold_without_trace(self) -> list[GoldQuestion]:
        """Gold questions that no trace answered."""
        return [row.gold for row in self.questions if not row.counts.traces]

    @property
    def repeated_questions(self) -> int:
        """Gold questions with more than one trace."""
        return sum(1 for row in self.questions if row.counts.traces > 1)

    def to_frame(self) -> pd.DataFrame:
        """The per-question table as a pandas DataFrame (see :func:`questions_frame`)."""
        return questions_frame(self)


def question_record(row: QuestionRow) -> dict[str, Any]:
    """One row of the per-question table: gold facts, counts per label, extra columns last."""
    counts = row.counts
    gold = row.gold
    return {
        "qid": gold.qid,
        "question": gold.question,
        "answerable": gold.answerable,
        "gold_line": gold.line,
        "traces": counts.traces,
        "answered": counts.answered,
        "refused": counts.refused,
        **{label.value.lower(): counts.label_count(label) for label in LABELS},
        "hit": counts.hit,
        "compliant": counts.compliant,
        "claim_traces": counts.claim_traces,
        "contained": counts.contained,
        "label": None if row.label is None else row.label.value,
        "first_trace_line": row.first_trace_line,
        **row.extra,
    }


def questions_frame(report: GateReport) -> pd.DataFrame:
    """The per-question table: one row per gold question, counts per label, extra columns last.

    ``label`` is the label shared by all the question's traces, missing when they differ or
    there is none; ``first_trace_line`` is a nullable integer.
    """
    import pandas as pd

    frame = pd.DataFrame.from_records([question_record(row) for row in report.questions])
    frame["first_trace_line"] = frame["first_trace_line"].astype("Int64")
    return frame
