"""The optional judged correctness of ``jurist gate --judge CONFIG`` (``jurist judge gates``).

The deterministic metrics never depend on it: the traces are scored first; then every
*answered* trace of an answerable question with a gold claim becomes one item of the
task's run (:meth:`~jurist.tasks.gates.GatesTask.read` gives them with the deterministic
report), which the judging loop judges like any task's items: an LLM judge or the lexical
baseline decides whether the answer states the claim. The verdicts become an extra
per-question column (``judged claim``: traces that state the claim / traces judged) and
two extra metrics (:func:`add_claim_verdicts`):

- ``judged_claim_accuracy = stating / judged`` over the items the judge answered;
- ``judged_claim_failed = failed / items``: items whose judgment failed after the retries
  (recorded with their raw answers in the run directory, never counted as either verdict).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jurist.datasets.gates import GoldQuestion, TraceRecord
from jurist.datasets.io import check_file
from jurist.judges.judge import BaselineJudge, Judge
from jurist.metrics.gates import DEFAULT_REFUSAL_TOKEN, GateThresholds, TraceScore
from jurist.programs.gates import claim_baseline
from jurist.runner import Item
from jurist.tasks.gates.records import GateReport
from jurist.tasks.gates.scoring import score_traces

__all__ = [
    "ClaimItems",
    "add_claim_verdicts",
    "claim_baseline_judge",
    "collect_claims",
    "files_hash",
]


def claim_baseline_judge() -> Judge:
    """The offline claim judge: the lexical coverage of the claim's content words."""
    return BaselineJudge(claim_baseline, name="baseline", version="1")


@dataclass
class ClaimItems:
    """The claim items of a trace file: one per answered trace of an answerable question with
    a gold claim, with the deterministic report they were collected from."""

    gold: str | Path
    traces: str | Path
    report: GateReport
    items: list[Item]
    question_of: dict[str, int]
    """Item id -> the ``id()`` of its gold question (to find its row in :attr:`report`)."""
    sha256: str
    """The hash of the gold and trace files (the run's dataset fingerprint)."""

    def describe(self) -> dict[str, Any]:
        """The dataset record of the claim judge's run: the trace file judged (``path``, which
        ``jurist score gates RUN_DIR`` reads again), the QA set, both files' hash, the item count."""
        items = len(self.items)
        return {"path": str(self.traces), "gold": str(self.gold), "sha256": self.sha256, "items": items}


@dataclass
class _Collector:
    items: list[Item] = field(default_factory=list)
    question_of: dict[str, int] = field(default_factory=dict)

    def __call__(self, gold: GoldQuestion, record: TraceRecord, score: TraceScore) -> None:
        if score.refusal or not gold.answerable or not gold.gold_claim:
            return
        item_id = f"line-{record.line}"
        self.items.append(
            Item(
                id=item_id,
                inputs={"question": gold.question, "gold_claim": gold.gold_claim, "answer": record.answer},
            )
        )
        self.question_of[item_id] = id(gold)


def files_hash(*paths: str | Path) -> str:
    """The SHA-256 of the files' contents, in order (a claim run's dataset fingerprint).

    Raises:
        InputError: A file is missing or a directory (the error its loader gives).
    """
    digest = hashlib.sha256()
    for path in paths:
        check_file(Path(path))
        with open(path, "rb") as handle:
            while block := handle.read(1 << 20):
                digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()


def collect_claims(
    gold: str | Path,
    traces: str | Path,
    *,
    thresholds: GateThresholds | None = None,
    refusal_token: str = DEFAULT_REFUSAL_TOKEN,
    list_limit: int = 20,
) -> ClaimItems:
    """Score the traces deterministically and collect the claim items (no model is called)."""
    collect = _Collector()
    report = score_traces(
        gold,
        traces,
        thresholds=thresholds,
        refusal_token=refusal_token,
        list_limit=list_limit,
        on_trace=collect,
    )
    return ClaimItems(gold, traces, report, collect.items, collect.question_of, files_hash(gold, traces))


def add_claim_verdicts(claims: ClaimItems, verdicts: Iterable[tuple[str, bool | None]]) -> GateReport:
    """Add the claim judge's recorded verdicts to the report of ``claims`` (and return it).

    ``verdicts``: ``(item id, states_claim)`` of each recorded item, ``None`` for an item
    whose judgment failed. Called again with the same verdicts, it gives the same report.
    """
    report = claims.report
    stated: dict[int, int] = {}
    judged: dict[int, int] = {}
    failed = 0
    for item_id, states in verdicts:
        question = claims.question_of.get(item_id)
        if question is None:
            continue
        if states is None:
            failed += 1
            continue
        judged[question] = judged.get(question, 0) + 1
        stated[question] = stated.get(question, 0) + int(states)
    for row in report.questions:
        key = id(row.gold)
        if key in judged:
            row.extra["judged claim"] = f"{stated[key]}/{judged[key]}"
    total = sum(judged.values())
    report.extra_metrics["judged_claim_accuracy"] = sum(stated.values()) / total if total else None
    report.extra_metrics["judged_claim_failed"] = failed / len(claims.items) if claims.items else None
    return report
